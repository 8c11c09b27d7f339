"""Reading a library's header facts with libclang (see :mod:`fuzzkit.header_facts`).

Types are followed from the API's parameters and results through typedefs, pointers and
record fields; enums, integer macros and documentation comments come from the library's own
headers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from fuzzkit.api import FunctionDecl
from fuzzkit.header_facts import (
    Enum,
    HeaderFacts,
    Macro,
    Record,
    Releaser,
    Typedef,
    _base,
    _words,
)
from fuzzkit.header_wrappers import MAX_WRAPPERS, Wrapper, body_tokens, function_wrapper, macro_wrapper
from fuzzkit.headers import cindex_module, parse_translation_unit

MAX_RECORDS, MAX_ENUM_CONSTANTS, MAX_MACROS = 40, 160, 120

_EXPR = re.compile(r"^[-+~()<>|&\s0-9a-fA-FxXuUlL]+$")

_UNNAMED = re.compile(r"\((unnamed|anonymous) (struct|union|enum) at [^)]*\)")

RELEASE_VERBS = ("free", "destroy", "delete", "release", "unref", "dispose", "cleanup", "deinit",
                 "fini", "close", "finalize")  # fmt: skip
_STATUS_WORDS = re.compile(
    r"(^|_)(OK|SUCCESS|SUCCEEDED|ERR|ERROR|FAIL|FAILED|FAILURE|FINISH|END|EOF|DONE|AGAIN|MORE|"
    r"CONTINUE|INVALID|STATUS|RESULT|NOMEM|BUSY|PARTIAL)(_|$)"
)
_INT_LITERAL = re.compile(r"^\(?\s*(-?\s*(0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*\)?$")
_FREE_DOC = re.compile(r"\b(free\s*\(\s*\)|with\s+free\b|using\s+free\b|by\s+free\b|call\s+free\b)",
                       re.I)
_FREEING_DOC = re.compile(r"\b(free|freed|freeing|release|released|releasing)\b", re.I)
_KEEPS_DOC = re.compile(r"(survive|outlive|not (be )?copied|must (remain|stay) valid|"
                        r"keeps? a (reference|pointer))", re.I)
_TAKES_DOC = re.compile(r"(even if (the function |it )?fails|takes? (the )?(responsibility|ownership) "
                        r"(for|of) the)", re.I)
_RETURN_DOC = re.compile(r"[^.]*\breturn(s|ed)?\b[^.]*\b(success|succeed|error|fail)[^.]*\.?", re.I)
_VALUE = re.compile(r"(-?\b\d+\b|\bNULL\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\bnegative\b|\bnon-?zero\b)")
_SUBJECT = re.compile(r"^\s*(?:If\s+)?([A-Za-z_]\w*)(?:\(\))?\s+(?:\(\)\s+)?(?:will\s+|should\s+)?return")

def collect_facts(
    headers: Sequence[str | Path], include_dirs: Sequence[str | Path] = (),
    defines: Iterable[str] = (), api: Sequence[FunctionDecl] = (),
) -> HeaderFacts:  # fmt: skip
    """The typedefs, records, enums, integer macros and release functions behind ``api``.

    Types are followed from the API's parameters and results through typedefs, pointers and
    fields (records and typedefs from any header, system headers included, since a library may
    use another's types); enums and macros come from the library's own headers.
    """
    cindex = cindex_module()
    collector = _Collector(cindex, [Path(h).resolve() for h in headers], api)
    defines = list(defines)
    for header in collector.headers:
        tu = parse_translation_unit(cindex, header, include_dirs, defines, detailed=True)
        collector.scan(tu)
    return collector.facts()


class _Collector:
    def __init__(self, cindex: Any, headers: list[Path], api: Sequence[FunctionDecl]) -> None:
        self.ci = cindex
        self.headers = headers
        self.roots = {h.parent for h in headers}
        self.api = list(api)
        self.typedef_cursors: dict[str, Any] = {}
        self.record_cursors: dict[str, Any] = {}
        self.enums: dict[str, Enum] = {}
        self.macros: dict[str, tuple[int, str, int]] = {}
        self.docs: dict[str, str] = {}
        self.function_types: dict[str, list[Any]] = {}
        self.api_names = {d.name for d in api}
        self.wrappers: list[Wrapper] = []
        self.texts: dict[Path, bytes] = {}

    def own(self, cursor: Any) -> bool:
        loc = cursor.location.file
        return loc is not None and any(Path(loc.name).resolve().is_relative_to(r) for r in self.roots)

    def scan(self, tu: Any) -> None:
        kinds = self.ci.CursorKind
        for cur in tu.cursor.walk_preorder():
            kind = cur.kind
            if kind == kinds.TYPEDEF_DECL:
                self.typedef_cursors.setdefault(cur.spelling, cur)
                if self.own(cur) and cur.raw_comment and cur.spelling not in self.docs:
                    self.docs[cur.spelling] = cur.raw_comment
            elif kind in (kinds.STRUCT_DECL, kinds.UNION_DECL):
                key = cur.type.get_canonical().spelling
                old = self.record_cursors.get(key)
                if old is None or (cur.is_definition() and not old.is_definition()):
                    self.record_cursors[key] = cur
            elif kind == kinds.ENUM_DECL and self.own(cur) and cur.is_definition():
                constants = tuple((c.spelling, c.enum_value) for c in cur.get_children()
                                  if c.kind == kinds.ENUM_CONSTANT_DECL)
                name = cur.spelling if not cur.is_anonymous() else (constants[0][0] if constants else "")
                if constants and name and not name.startswith("enum (") and name not in self.enums:
                    self.enums[name] = Enum(name, constants)
            elif kind == kinds.MACRO_DEFINITION and self.own(cur):
                self._macro(cur)
            elif kind == kinds.FUNCTION_DECL and self.own(cur):
                self.function_types.setdefault(cur.spelling, [a.type for a in cur.get_arguments()])
                if cur.spelling not in self.api_names:
                    self._inline(cur)
                comment = cur.raw_comment
                if comment and cur.spelling not in self.docs:
                    self.docs[cur.spelling] = comment

    def _macro(self, cur: Any) -> None:
        tokens = list(cur.get_tokens())
        if len(tokens) < 2 or cur.spelling in self.macros or cur.spelling.startswith("_"):
            return
        if tokens[1].spelling == "(" and tokens[1].extent.start.offset == tokens[0].extent.end.offset:
            self._wrapped(macro_wrapper([t.spelling for t in tokens], True, self.api_names))
            return  # function-like: NAME( with no space
        value = _int_value(" ".join(t.spelling for t in tokens[1:]))
        if value is None:
            return
        self.macros[cur.spelling] = (value, Path(cur.location.file.name).name, cur.location.line)

    def _inline(self, cur: Any) -> None:
        """A function defined in the header (static inline): the API calls in its body."""
        path = Path(cur.location.file.name)
        if path not in self.texts:
            self.texts[path] = path.read_bytes()
        end = cur.extent.end.offset  # in bytes: the text is decoded from there on
        body = body_tokens(self.texts[path][end : end + 65536].decode(errors="replace"), 0)
        params = [a.spelling for a in cur.get_arguments()]
        self._wrapped(function_wrapper(cur.spelling, params, body, self.api_names))

    def _wrapped(self, calls: list[Wrapper]) -> None:
        for call in calls:
            if len(self.wrappers) < MAX_WRAPPERS:
                self.wrappers.append(call)

    def facts(self) -> HeaderFacts:
        reach = _Reach(self)
        for decl in self.api:
            for spelling in (decl.return_type, *(p.type for p in decl.params)):
                reach.spelling(spelling)
            for arg_type in self.function_types.get(decl.name, []):
                reach.type(arg_type)
        words = {w for d in self.api for p in d.params for w in _words(p.name) if len(w) > 2}
        facts = HeaderFacts(
            typedefs=list(reach.typedefs.values()),
            records=list(reach.records.values())[:MAX_RECORDS],
            enums=_cap_enums(self._relevant_enums(reach)),
            macros=self._relevant_macros(words),
            wrappers=list(self.wrappers),
        )
        facts.releasers = self._releasers(facts)
        names = {d.name for d in self.api} | {t.name for t in facts.typedefs if "(" in t.canonical}
        facts.consumes = sorted(fn for fn in (d.name for d in self.api)
                                if _TAKES_DOC.search(self.docs.get(fn, "")))
        facts.retains = sorted(fn for fn in names if _KEEPS_DOC.search(self.docs.get(fn, "")))
        for fn in sorted(names):
            text = _return_note(self.docs.get(fn, ""))
            # A comment after a declaration is attached to the next one: a note that names
            # another API function is about that one.
            subject = _SUBJECT.match(text)
            other = subject is not None and subject.group(1) not in (fn, *_PRONOUNS)
            if text and _VALUE.search(text) and not other:
                facts.returns[fn] = text
        return facts

    def _relevant_enums(self, reach: _Reach) -> list[Enum]:
        used = set(reach.enum_names)
        return sorted(self.enums.values(), key=lambda e: (e.name not in used, e.name))

    def _relevant_macros(self, param_words: set[str]) -> list[Macro]:
        ordered = sorted(self.macros.items(), key=lambda kv: (kv[1][1], kv[1][2]))
        groups: list[list[tuple[str, int, int]]] = []
        last: tuple[str, int] | None = None
        for name, (value, file, line) in ordered:
            if last is None or last[0] != file or line - last[1] > 1:
                groups.append([])
            groups[-1].append((name, value, line))
            last = (file, line)
        keep: list[Macro] = []
        for gid, group in enumerate(groups):
            names = [n for n, _v, _l in group]
            wanted = any(_STATUS_WORDS.search(n) for n in names) or any(
                w in param_words for n in names for w in _words(n))
            if wanted and len(keep) + len(group) <= MAX_MACROS:
                keep += [Macro(n, v, gid) for n, v, _l in group]
        return keep

    def _canonical_params(self, decl: FunctionDecl) -> list[str]:
        """The parameter types with typedefs resolved (``doc_p`` -> ``struct doc *``)."""
        types = self.function_types.get(decl.name, [])
        if len(types) != len(decl.params):
            return [p.type for p in decl.params]
        return [t.get_canonical().spelling for t in types]

    def _releasers(self, facts: HeaderFacts) -> list[Releaser]:
        out: list[Releaser] = []
        record_names = {n: r for r in facts.records for n in (r.tag, *r.names) if n}
        common = _common_words([d.name for d in self.api])
        for decl in self.api:
            ws = _words(decl.name)
            verbs = [i for i, w in enumerate(ws) if w in RELEASE_VERBS]
            pointers = [p for p, canon in zip(decl.params, self._canonical_params(decl), strict=True)
                        if "*" in canon and "(*)" not in canon]
            if not verbs or len(pointers) != 1 or set(ws[verbs[0]:]) & _PREPOSITIONS:
                continue  # `delete_item_from_list(list, i)` detaches a part, it releases no object
            ws = [w for w in ws if w not in common]
            ptype = pointers[0].type
            base = _base(ptype)
            if base != "void":
                out.append(Releaser(decl.name, ptype, "parameter type"))
                continue
            named = [n for n in record_names
                     if set(_words(n)) - common & set(ws) - set(RELEASE_VERBS)]
            doc = self.docs.get(decl.name, "")
            documented = [n for n in record_names if re.search(rf"\b{re.escape(n)}\b", doc)]
            documented += [d.name for d in self.api if d.name != decl.name
                           and re.search(rf"\b{re.escape(d.name)}\b", doc)]
            for target in dict.fromkeys(named + documented):
                evidence = "by name" if target in named else "by documentation"
                out.append(Releaser(decl.name, target, evidence))
            if not named and not documented:
                out.append(Releaser(decl.name, ptype, "parameter type"))
        releasing = [r.function for r in out]
        for decl in self.api:
            doc = self.docs.get(decl.name, "")
            named = [fn for fn in dict.fromkeys(releasing)
                     if fn != decl.name and re.search(rf"\b{re.escape(fn)}\b", doc)]
            for fn in named[:1]:
                out.append(Releaser(fn, f"what {decl.name} allocates", "by documentation"))
            if not named and _FREE_DOC.search(doc):
                out.append(Releaser("free", f"what {decl.name} allocates", "by documentation"))
        return out + self._allocated_with(out)

    def _allocated_with(self, found: list[Releaser]) -> list[Releaser]:
        """Releasers of what producers return, through the allocator their documentation names.

        ``returns memory obtained from lib_malloc64(); the caller must free it``: released by
        what releases the named allocator's (or a numbered variant's) memory.
        """
        allocators = {r.releases[5:-10]: r.function for r in found
                      if r.releases.startswith("what ") and r.function != "free"}
        released = {r.releases for r in found}
        out = []
        for decl in self.api:
            doc = self.docs.get(decl.name, "")
            if f"what {decl.name} allocates" in released or not _FREEING_DOC.search(doc):
                continue
            for alloc, releaser in allocators.items():
                if alloc != decl.name and re.search(rf"\b{re.escape(alloc)}\d*\b", doc):
                    out.append(Releaser(releaser, f"what {decl.name} allocates", "by documentation"))
                    break
        return out


def _int_value(text: str) -> int | None:
    """The value of an integer literal or a constant expression of literals (``(1 << 3)``)."""
    match = _INT_LITERAL.match(text)
    if match:
        return int(match.group(1).replace(" ", ""), 0)
    if not _EXPR.match(text) or not re.search(r"\d", text):
        return None
    cleaned = re.sub(r"(?<=[0-9a-fA-F])[uUlL]+\b", "", text)
    try:
        return _const_eval(ast.parse(cleaned, mode="eval").body)
    except (SyntaxError, ValueError):
        return None


_BINARY = {ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b, ast.BitOr: lambda a, b: a | b,
           ast.BitAnd: lambda a, b: a & b, ast.BitXor: lambda a, b: a ^ b, ast.Add: lambda a, b: a + b,
           ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b}
_UNARY = {ast.Invert: lambda a: ~a, ast.USub: lambda a: -a, ast.UAdd: lambda a: a}


def _const_eval(node: ast.AST) -> int:
    """An integer constant expression, bounded to 64 bits (shifts included); ValueError else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        value = node.value
    elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        value = _UNARY[type(node.op)](_const_eval(node.operand))
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _const_eval(node.left), _const_eval(node.right)
        if isinstance(node.op, ast.LShift | ast.RShift) and not 0 <= right < 64:
            raise ValueError("shift out of range")
        value = _BINARY[type(node.op)](left, right)
    else:
        raise ValueError("not an integer constant expression")
    if abs(value) >= 1 << 64:
        raise ValueError("out of range")
    return value



def _cap_enums(enums: list[Enum]) -> list[Enum]:
    out, total = [], 0
    for e in enums:
        if total + len(e.constants) > MAX_ENUM_CONSTANTS:
            continue
        out.append(e)
        total += len(e.constants)
    return out


def _return_note(comment: str) -> str:
    text = re.sub(r"^\s*(/\*+|\*+/?|//+!?|<)\s?", "", comment, flags=re.M)
    text = re.sub(r"[@\\](c|p|a|b|e)\s+", "", text)
    text = re.sub(r"[@\\]returns?\b", "Returns", text)
    text = re.sub(r"\s+", " ", text)
    match = _RETURN_DOC.search(text)
    return match.group(0).strip()[:200] if match else ""


_PRONOUNS = ("It", "it", "This", "this", "Returns", "Return")
_PREPOSITIONS = {"from", "in", "at", "of", "to", "by", "with", "on", "into", "item", "items"}


def _common_words(names: list[str]) -> set[str]:
    """Words in more than half of the API's names: the library's prefix, not a type's name."""
    counts: dict[str, int] = {}
    for name in names:
        for w in set(_words(name)):
            counts[w] = counts.get(w, 0) + 1
    return {w for w, n in counts.items() if n > max(1, len(names) // 2)}



class _Reach:
    """Follows types from the API through typedefs, pointers, arrays and record fields."""

    def __init__(self, col: _Collector) -> None:
        self.col = col
        self.typedefs: dict[str, Typedef] = {}
        self.records: dict[str, Record] = {}
        self.enum_names: list[str] = []
        self.seen: set[str] = set()
        self.seen_typedefs: set[str] = set()

    def spelling(self, spelling: str) -> None:
        for word in re.findall(r"[A-Za-z_]\w*", spelling):
            cur = self.col.typedef_cursors.get(word)
            if cur is not None:
                self.typedef(cur)

    def typedef(self, cur: Any) -> None:
        name = cur.spelling
        if name.startswith("__") or name == "va_list":
            return  # compiler builtins: nothing a harness declares
        if name in self.typedefs or name in self.seen_typedefs:
            return
        self.seen_typedefs.add(name)
        under = cur.underlying_typedef_type
        canonical = under.get_canonical().spelling
        if canonical == name:
            return
        self.typedefs[name] = Typedef(name, under.spelling, canonical)
        self.type(under)

    def type(self, t: Any) -> None:
        tk = self.col.ci.TypeKind
        if t.kind == tk.TYPEDEF:
            self.typedef(t.get_declaration())
            return
        if t.kind == tk.ELABORATED:
            self.type(t.get_named_type())
            return
        key = t.spelling
        if key in self.seen:
            return
        self.seen.add(key)
        if t.kind in (tk.POINTER, tk.LVALUEREFERENCE):
            self.type(t.get_pointee())
        elif t.kind in (tk.CONSTANTARRAY, tk.INCOMPLETEARRAY):
            self.type(t.element_type)
        elif t.kind == tk.FUNCTIONPROTO:
            self.type(t.get_result())
            for a in t.argument_types():
                self.type(a)
        elif t.kind == tk.RECORD:
            self.record(t)
        elif t.kind == tk.ENUM:
            self.enum_names.append(t.get_declaration().spelling)

    def record(self, t: Any) -> None:
        canonical = t.get_canonical().spelling
        if (canonical in self.records or len(self.records) >= MAX_RECORDS or "__" in canonical
                or _UNNAMED.search(canonical)):
            return
        cur = self.col.record_cursors.get(canonical) or t.get_declaration()
        kind = "union" if cur.kind == self.col.ci.CursorKind.UNION_DECL else "struct"
        tag = "" if cur.is_anonymous() else cur.spelling
        names = tuple(n for n, td in self.typedefs.items() if td.canonical == canonical)
        definition = cur.get_definition()
        fields: list[tuple[str, str]] = []
        if definition is not None:
            for f in definition.type.get_fields():
                fields.append((f.spelling, _UNNAMED.sub("{...}", f.type.spelling)))
        self.records[canonical] = Record(kind, tag, names, tuple(fields), definition is None)
        if definition is not None:
            for f in definition.type.get_fields():
                if not _UNNAMED.search(f.type.spelling):
                    self.type(f.type)
