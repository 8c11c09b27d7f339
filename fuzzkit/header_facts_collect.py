"""Reading a library's header facts with libclang (see :mod:`fuzzkit.header_facts`).

Types are followed from the API's parameters and results through typedefs, pointers and
record fields; enums, integer macros and documentation comments come from the library's own
headers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fuzzkit.api import FunctionDecl
from fuzzkit.header_facts import (
    OPTION_PARAM,
    Enum,
    HeaderFacts,
    _words,
)
from fuzzkit.header_macros import field_flags, option_owner_words, relevant_macros, scope_groups
from fuzzkit.header_reach import MAX_RECORDS, TypeReach, library_instances
from fuzzkit.header_releasers import find_releasers
from fuzzkit.header_wrappers import MAX_WRAPPERS, Wrapper, body_tokens, function_wrapper, macro_wrapper
from fuzzkit.headers import cindex_module, documented_internal, parse_translation_unit

MAX_ENUM_CONSTANTS = 160

_EXPR = re.compile(r"^[-+~()<>|&\s0-9a-fA-FxXuUlL]+$")

_C_OCTAL = re.compile(r"(?<![\w.])0([0-7]+)\b")  # C's `0170000` is Python's `0o170000`
_INT_LITERAL = re.compile(r"^\(?\s*(-?\s*(0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*\)?$")
_KEEPS_DOC = re.compile(r"(survive|outlive|not (be )?copied|must (remain|stay) valid|"
                        r"keeps? a (reference|pointer))", re.I)
# ("The file becomes owned by the decoder": the argument is the object's from the call on)
_TAKES_DOC = re.compile(r"(even if (the function |it )?fails|takes? (the )?(responsibility|ownership) "
                        r"(for|of) the|becomes? owned by (the|its|this) "
                        r"(?!caller|user|application|client)\w+)",
                        re.I)
# "If NULL, @p body will have been de-allocated": the call releases that argument itself.
_FREED_PARAM = re.compile(r"(?:[@\\][pa]\s+|@)(\w+)\s+(?:will\s+(?:have\s+been|be)|is|has\s+been)\s+"
                          r"(?:de-?allocated|freed|released)\b", re.I)
# "the string is expected to be allocated via malloc(3) and ownership is transferred": a buffer taken over
_ADOPTS_DOC = re.compile(r"ownership\s+(is|will\s+be)\s+(transferred|passed|given)|(string|buffer|memory)\s+"
                         r"(will\s+be|is)\s+(automatically\s+)?freed\b", re.I)
_WRITABLE_BUFFER = re.compile(r"^(?!.*\bconst\b).*\b(char|void)\s*\*")
# "may only be called from within a call to the xUpdate method": valid inside a callback only.
_INSIDE_DOC = re.compile(r"(may|must|can|should)\s+only\s+be\s+(used|called|invoked)\s+(from\s+)?"
                         r"(within|inside)\b|only\s+(valid|allowed|meaningful)\s+(from\s+)?(within|inside)\b",
                         re.I)
# "The returned buffer is valid only until the next call to x_next()": the library keeps it.
_BORROWED_DOC = re.compile(r"\b(valid only until|until the next call"
                           r"|(must|should) not be (freed|released|deallocated)"
                           r"|owned by (the |its |this )?(?!caller|user|application|client|you)\w+)", re.I)
_RETURN_DOC = re.compile(r"[^.]*\breturn(s|ed)?\b[^.]*\b(success|succeed|error|fail)[^.]*\.?", re.I)
_VALUE = re.compile(r"(-?\b\d+\b|\bNULL\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\bnegative\b|\bnon-?zero\b)")
_SUBJECT = re.compile(r"^\s*(?:If\s+)?([A-Za-z_]\w*)(?:\(\))?\s+(?:\(\)\s+)?(?:will\s+|should\s+)?return")

def collect_facts(
    headers: Sequence[str | Path], include_dirs: Sequence[str | Path] = (),
    defines: Iterable[str] = (), api: Sequence[FunctionDecl] = (), helpers: Collection[str] = (),
    docs: Mapping[str, str] | None = None,
) -> HeaderFacts:  # fmt: skip
    """The typedefs, records, enums, integer macros and release functions behind ``api``.

    Types are followed from the API's parameters and results through typedefs, pointers and
    fields (records and typedefs from any header, system headers included, since a library may
    use another's types); enums and macros come from the library's own headers. ``helpers``:
    the names in ``api`` that are the headers' own inline functions (still read as wrappers of
    the library's functions they call, never as the functions wrapped). ``docs``: documentation
    found elsewhere (the comment at each definition in the sources, :func:`fuzzkit.param_docs.
    definition_docs`), used for the functions the headers leave undocumented.
    """
    cindex = cindex_module()
    collector = _Collector(cindex, [Path(h).resolve() for h in headers], api, helpers)
    defines = list(defines)
    for i, header in enumerate(collector.headers):
        tu = parse_translation_unit(cindex, header, include_dirs, defines, detailed=True,
                                    before=collector.headers[:i])
        collector.scan(tu)
    for name, doc in (docs or {}).items():
        collector.docs.setdefault(name, doc)
    return collector.facts()


class _Collector:
    def __init__(self, cindex: Any, headers: list[Path], api: Sequence[FunctionDecl],
                 helpers: Collection[str] = ()) -> None:
        self.ci = cindex
        self.helpers = set(helpers)
        self.headers = headers
        self.roots = {h.parent for h in headers}
        self.api = list(api)
        self.typedef_cursors: dict[str, Any] = {}
        self.record_cursors: dict[str, Any] = {}
        self.enums: dict[str, Enum] = {}
        self.macros: dict[str, tuple[int, str, int]] = {}
        self.docs: dict[str, str] = {}
        self.function_types: dict[str, list[Any]] = {}
        self.results: dict[str, str] = {}
        self.api_names = {d.name for d in api} - self.helpers  # what a wrapper may wrap
        self.wrappers: list[Wrapper] = []
        self.texts: dict[Path, bytes] = {}
        self.variables: dict[str, Any] = {}
        self.noreturn: set[str] = set()

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
                    # libclang names a tagless enum by its typedef, and spells its type so
                    self.enums[name] = Enum(name, constants, not cur.type.spelling.startswith("enum "))
            elif (kind == kinds.VAR_DECL and self.own(cur) and cur.semantic_parent is not None
                  and cur.semantic_parent.kind == kinds.TRANSLATION_UNIT):
                self.variables.setdefault(cur.spelling, cur.type)
            elif kind == kinds.MACRO_DEFINITION and self.own(cur):
                self._macro(cur)
            elif kind == kinds.FUNCTION_DECL and self.own(cur):
                self.function_types.setdefault(cur.spelling, [a.type for a in cur.get_arguments()])
                self.results.setdefault(cur.spelling, cur.result_type.get_canonical().spelling)
                if _never_returns(cur):
                    self.noreturn.add(cur.spelling)
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
        self.macros[cur.spelling] = (value, str(Path(cur.location.file.name)), cur.location.line)

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
        reach = TypeReach(self.ci, self.typedef_cursors, self.record_cursors)
        for decl in self.api:
            for spelling in (decl.return_type, *(p.type for p in decl.params)):
                reach.spelling(spelling)
            for arg_type in self.function_types.get(decl.name, []):
                reach.type(arg_type)
        reach.finish()
        words = {w for d in self.api for p in d.params for w in _words(p.name) if len(w) > 2}
        fields = {name for r in reach.records.values() for name, _t in r.fields if name}
        facts = HeaderFacts(
            typedefs=list(reach.typedefs.values()),
            records=list(reach.records.values())[:MAX_RECORDS],
            enums=_cap_enums(self._relevant_enums(reach)),
            macros=scope_groups(relevant_macros(self.macros, words, option_owner_words(self.api), any(
                OPTION_PARAM.search(p.name) or (not p.name and "int32" in p.type)
                for d in self.api for p in d.params)), self.macros, self.api_names),
            wrappers=list(self.wrappers),
        )
        facts.field_flags = field_flags(self.macros, fields)
        facts.instances = library_instances(self.variables, reach)
        facts.releasers = find_releasers(self.api, self.docs, facts.records, self.function_types,
                                         self.results)
        names = {d.name for d in self.api} | {t.name for t in facts.typedefs if "(" in t.canonical}
        facts.consumes = sorted(d.name for d in self.api if _TAKES_DOC.search(self.docs.get(d.name, ""))
                                or _frees_a_param(self.docs.get(d.name, ""), d))
        facts.adopts = sorted(d.name for d in self.api if _ADOPTS_DOC.search(self.docs.get(d.name, ""))
                              and any(_WRITABLE_BUFFER.search(p.type) for p in d.params))
        facts.retains = sorted(fn for fn in names if _KEEPS_DOC.search(self.docs.get(fn, "")))
        facts.inside_only = sorted(d.name for d in self.api if _INSIDE_DOC.search(self.docs.get(d.name, "")))
        facts.borrows = sorted(d.name for d in self.api if _borrowed(self.docs.get(d.name, "")))
        facts.internal = sorted(d.name for d in self.api if documented_internal(self.docs.get(d.name, "")))
        facts.noreturn = sorted(d.name for d in self.api if d.name in self.noreturn)
        for fn in sorted(names):
            text = _return_note(self.docs.get(fn, ""))
            # A comment after a declaration is attached to the next one: a note that names
            # another API function is about that one.
            subject = _SUBJECT.match(text)
            other = subject is not None and subject.group(1) not in (fn, *_PRONOUNS)
            if text and _VALUE.search(text) and not other:
                facts.returns[fn] = text
        return facts

    def _relevant_enums(self, reach: TypeReach) -> list[Enum]:
        used = set(reach.enum_names)
        return sorted(self.enums.values(), key=lambda e: (e.name not in used, e.name))


def _int_value(text: str) -> int | None:
    """The value of an integer literal or a constant expression of literals (``(1 << 3)``)."""
    match = _INT_LITERAL.match(text)
    if match:
        literal = _C_OCTAL.sub(r"0o\1", match.group(1).replace(" ", ""))
        try:
            return int(literal, 0)
        except ValueError:  # `09`: no C literal either
            return None
    if not _EXPR.match(text) or not re.search(r"\d", text):
        return None
    cleaned = _C_OCTAL.sub(r"0o\1", re.sub(r"(?<=[0-9a-fA-F])[uUlL]+\b", "", text))
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


def _borrowed(comment: str) -> bool:
    """Whether a sentence of ``comment`` says what the function hands back stays the library's."""
    text = re.sub(r"\s+", " ", re.sub(r"^\s*(/\*+|\*+/?|//+!?)", " ", comment, flags=re.M))
    return any(_BORROWED_DOC.search(s) and re.search(r"\b(return|result|out\b|output)", s, re.I)
               for s in re.split(r"(?<=[.;])\s", text))


def _return_note(comment: str) -> str:
    text = re.sub(r"^\s*(/\*+|\*+/?|//+!?|<)\s?", "", comment, flags=re.M)
    text = re.sub(r"[@\\](c|p|a|b|e)\s+", "", text)
    text = re.sub(r"[@\\]returns?\b", "Returns", text)
    text = re.sub(r"\s+", " ", text)
    match = _RETURN_DOC.search(text)
    return match.group(0).strip()[:200] if match else ""


_PRONOUNS = ("It", "it", "This", "this", "Returns", "Return")


def _frees_a_param(doc: str, decl: FunctionDecl) -> bool:
    """Whether the documentation says the call frees one of its own arguments (``@p body``)."""
    names = {p.name for p in decl.params}
    return any(m.group(1) in names for m in _FREED_PARAM.finditer(doc))


def _never_returns(cursor: Any) -> bool:
    """A function declared not to return.

    ``__attribute__((noreturn))`` shows in its type however a macro spells it; C11's
    ``_Noreturn`` among its own tokens.
    """
    if "noreturn" in cursor.type.spelling:
        return True
    return any(t.spelling in ("_Noreturn", "noreturn") for t in cursor.get_tokens())
