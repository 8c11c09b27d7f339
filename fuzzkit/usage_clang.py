"""Reading usage code with libclang: the calls of API functions, in the order they run.

Each function defined in the file is walked with its parents known, so a call's result can be
traced to the variable (or field) it is stored in and to the ``if`` that checks it. Arguments
keep their text as written (macros unexpanded: ``ACME_READ | ACME_STRICT``); what each one is
(a constant, a variable, a callback defined in the file) is read from the tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from fuzzkit.headers import cindex_module
from fuzzkit.tools import resource_include_dir
from fuzzkit.usage_models import Arg, CallSite, FieldAssignment, UsageFunction
from fuzzkit.usage_sources import UsageSource
from fuzzkit.usage_text import (
    KEPT_CALLS,
    call_site,
    constant_arg,
    cut_source,
    field_assignment,
    join_tokens,
    split_arguments,
)

_WRAPPERS = ("UNEXPOSED_EXPR", "PAREN_EXPR", "CSTYLE_CAST_EXPR")


def clang_functions(
    src: UsageSource,
    names: set[str],
    known: set[str],
    include_dirs: Sequence[str],
    defines: Sequence[str],
    root: Path,
) -> list[UsageFunction]:
    """The functions of ``src`` that call the API, read with libclang (empty if it cannot)."""
    ci = cindex_module()
    assert src.path is not None
    args = _parse_args(src.path, root, include_dirs, defines)
    tu = ci.Index.create().parse(str(src.path), args=args, options=ci.TranslationUnit.PARSE_INCOMPLETE)
    data = src.path.read_bytes()
    main_file = str(src.path)
    defs = {c.spelling: c for c in _top_functions(tu.cursor, main_file)}
    local_types = _local_types(tu.cursor, main_file, data)
    enum_consts = known | _file_enums(tu.cursor, main_file)
    file_vars = _file_variables(tu.cursor, main_file)
    out = []
    for name, fn in defs.items():
        reader = _Reader(names, enum_consts, set(defs), data, known)
        reader.walk(fn, [])
        if not reader.calls:
            continue
        text = data[fn.extent.start.offset : fn.extent.end.offset].decode(errors="replace")
        used_globals = _used(file_vars, reader.variables, text)
        reader.variables |= used_globals
        callbacks = {
            cb: cut_source(
                data[defs[cb].extent.start.offset : defs[cb].extent.end.offset].decode(errors="replace")
            )
            for cb in reader.callbacks
            if cb in defs
        }
        used = " ".join([*reader.variables.values(), *callbacks.values()])
        types = {t: d for t, d in local_types.items() if re.search(rf"\b{re.escape(t)}\b", used)}
        out.append(
            UsageFunction(
                file=src.rel,
                name=name,
                origin=src.origin,
                calls=reader.calls,
                variables=reader.variables,
                inits=reader.inits,
                # A global's value, like a parameter's, is set outside the function.
                params=[*(a.spelling for a in fn.get_arguments() if a.spelling), *used_globals],
                types=types,
                callbacks=callbacks,
                assigned=reader.assigned,
                fields=reader.fields,
                source=cut_source(text),
                lines=fn.extent.end.line - fn.extent.start.line + 1,
                parsed_by="libclang",
            )
        )
    return out


def _parse_args(path: Path, root: Path, include_dirs: Sequence[str], defines: Sequence[str]) -> list[str]:
    """The flags a usage file parses with: the build's, its own folder's and the compiler's headers."""
    cxx = path.suffix.lower() != ".c"
    args = ["-x", "c++" if cxx else "c", "-std=gnu++17" if cxx else "-std=gnu11",
            f"-I{path.parent}", f"-I{root}", *(f"-I{d}" for d in include_dirs),
            *(f"-D{d}" for d in defines), "-Wno-everything"]
    builtin = resource_include_dir()
    if builtin:
        args.append(f"-I{builtin}")
    return args


def _local_types(cursor: Any, main_file: str, data: bytes) -> dict[str, str]:
    """Records, enums and typedefs the file itself defines, by name, with their text."""
    found: dict[str, str] = {}
    for c in cursor.get_children():
        if (
            c.kind.name in ("STRUCT_DECL", "UNION_DECL", "ENUM_DECL", "TYPEDEF_DECL")
            and c.spelling
            and c.location.file
            and c.location.file.name == main_file
            and (c.kind.name == "TYPEDEF_DECL" or c.is_definition())
        ):
            text = data[c.extent.start.offset : c.extent.end.offset].decode(errors="replace")
            before = found.get(c.spelling, "")
            # `typedef struct { ... } name;`: the record is anonymous (libclang spells it with the
            # typedef's name); only the typedef's text declares `name`.
            anonymous = c.kind.name == "TYPEDEF_DECL" and before and not re.search(
                rf"\b(struct|union|enum)\s+{re.escape(c.spelling)}\b", before)
            if not before or anonymous:
                found[c.spelling] = _with_macros(text + ";", data)
    return found


_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n\\]+)$", re.M)


def _with_macros(text: str, data: bytes) -> str:
    """``text`` after the file's own object-like ``#define``s it names (an array's size)."""
    names = set(re.findall(r"\b[A-Za-z_]\w*\b", text))
    defines = [m.group(0).decode(errors="replace").strip() for m in _DEFINE.finditer(data)
               if m.group(1).decode() in names]
    return "\n".join([*dict.fromkeys(defines), text])


def _top_functions(cursor: Any, main_file: str) -> Iterator[Any]:
    for c in cursor.get_children():
        if (
            c.kind.name in ("FUNCTION_DECL", "CXX_METHOD")
            and c.is_definition()
            and c.location.file
            and c.location.file.name == main_file
        ):
            yield c
        elif c.kind.name in ("NAMESPACE", "LINKAGE_SPEC", "UNEXPOSED_DECL"):
            yield from _top_functions(c, main_file)


def _file_enums(unit: Any, main_file: str) -> set[str]:
    """The file's own enum constants.

    The headers' come in ``known``: walking the whole unit would visit every declaration of every
    header it includes.
    """
    return {k.spelling for c in unit.get_children() if c.kind.name == "ENUM_DECL"
            and c.location.file and c.location.file.name == main_file for k in c.get_children()}


def _used(file_vars: dict[str, str], local: dict[str, str], text: str) -> dict[str, str]:
    """The file's globals ``text`` names that no local of its own hides."""
    return {v: t for v, t in file_vars.items() if v not in local and re.search(rf"\b{re.escape(v)}\b", text)}


def _file_variables(unit: Any, main_file: str) -> dict[str, str]:
    """The file's own globals and their types (a tool's context made in one function, used in another)."""
    return {
        c.spelling: c.type.spelling for c in unit.get_children()
        if c.kind.name == "VAR_DECL" and c.spelling and c.location.file and c.location.file.name == main_file
    }


class _Reader:
    """Walks one function definition, collecting its API calls in evaluation order."""

    def __init__(self, names: set[str], constants: set[str], defined: set[str], data: bytes,
                 public: set[str] | None = None) -> None:
        self.names, self.constants, self.defined, self.data = names, constants, defined, data
        self.public = public or set()  # the headers' own constants (``constants`` adds the file's enums)
        self.calls: list[CallSite] = []
        self.variables: dict[str, str] = {}
        self.assigned: dict[str, list[str]] = {}
        self.callbacks: set[str] = set()
        self.inits: dict[str, str] = {}
        self.fields: list[FieldAssignment] = []
        self._pending: list[tuple[int, CallSite]] = []

    def text(self, c: Any) -> str:
        return join_tokens([t.spelling for t in c.get_tokens()])

    def walk(self, node: Any, parents: list[Any]) -> None:
        kind = node.kind.name
        if kind in ("VAR_DECL", "PARM_DECL") and node.spelling:
            self.variables.setdefault(node.spelling, node.type.spelling)
            toks = [t.spelling for t in node.get_tokens()]
            if kind == "VAR_DECL" and "=" in toks:
                self.inits.setdefault(node.spelling, join_tokens(toks[toks.index("=") + 1 :]).rstrip(";"))
        elif kind == "DECL_REF_EXPR" and node.spelling in self.defined and not _is_callee(node, parents):
            holder = _holder(self, parents)
            if holder:
                self.assigned.setdefault(holder, []).append(node.spelling)
                self.callbacks.add(node.spelling)
        elif kind == "BINARY_OPERATOR" and parents and parents[-1].kind.name == "COMPOUND_STMT":
            lhs = next(iter(node.get_children()), None)
            if lhs is not None and lhs.kind.name == "MEMBER_REF_EXPR" and _operator(node, lhs) == "=":
                toks = [t.spelling for t in node.get_tokens()]
                if (found := field_assignment(toks, self.public, node.location.line)) is not None:
                    self.fields.append(found)
        children = list(node.get_children())
        for child in children:
            self.walk(child, [*parents, node])
        if kind == "CALL_EXPR" and (node.spelling in self.names or node.spelling in KEPT_CALLS):
            self.calls.append(self._site(node, parents))
        if kind == "COMPOUND_STMT":
            self._checks_after(children)

    def _site(self, node: Any, parents: list[Any]) -> CallSite:
        written = _written_args(node)
        cursors = list(node.get_arguments())
        # An argument a macro expands to (NULL, BUFSIZ) has no tokens of its own: its text comes
        # from the call as written, split at its top-level commas.
        same = len(written) == len(cursors)
        args = [self._arg(a, written[i] if same else None) for i, a in enumerate(cursors)]
        result, check, loop = "", "", False
        chain = [p for p in parents if p.kind.name not in _WRAPPERS]
        parent = chain[-1] if chain else None
        if parent is not None and parent.kind.name == "VAR_DECL":
            result = parent.spelling
        elif parent is not None and parent.kind.name == "BINARY_OPERATOR":
            lhs = next(iter(parent.get_children()), None)
            if (
                lhs is not None
                and _operator(parent, lhs) == "="
                and lhs.extent.end.offset <= node.extent.start.offset
            ):
                result = self.text(lhs)
        path = [*parents, node]
        for k in range(len(path) - 2, -1, -1):
            name = path[k].kind.name
            if name in ("IF_STMT", "WHILE_STMT"):
                cond = next(iter(path[k].get_children()), None)
                if cond is not None and cond == path[k + 1]:
                    check, loop = self.text(cond), name == "WHILE_STMT"
                break
            if name.endswith("_STMT") and name != "DECL_STMT":
                break
        name = KEPT_CALLS.get(node.spelling, node.spelling)
        site = call_site(name, args, result, check, node.location.line, loop)
        for a in site.args:
            if a.kind == "callback":
                self.callbacks.add(a.text)
        return site

    def _arg(self, a: Any, written: list[str] | None = None) -> Arg:
        core = a
        while core.kind.name in _WRAPPERS:
            inner = list(core.get_children())
            if len(inner) != 1:
                break
            core = inner[0]
        toks = list(written) if written else [t.spelling for t in a.get_tokens()]
        text = join_tokens(toks)
        kind = core.kind.name
        if kind == "STRING_LITERAL":
            if len(toks) == 1 and toks[0] in self.public:  # a string macro of the headers, as written
                return Arg(text=text, kind="constant", constants=toks, public=True)
            return Arg(text=text, kind="string")
        if text in ("NULL", "0", "nullptr", "(void *)0"):
            return Arg(text=text, kind="null")
        if kind == "DECL_REF_EXPR" and core.referenced is not None:
            ref = core.referenced.kind.name
            if ref == "FUNCTION_DECL" and core.spelling in self.defined:
                return Arg(text=text, kind="callback")
            if ref in ("VAR_DECL", "PARM_DECL"):
                return Arg(text=text, var=core.spelling, kind="variable")
        if kind == "UNARY_OPERATOR" and toks[:1] == ["&"] and len(toks) == 2:
            return Arg(text=text, var=toks[1], address=True, kind="variable")
        consts = constant_arg(toks, self.constants)
        if consts is not None and toks:
            return Arg(text=text, kind="constant", constants=consts,
                       public=bool(consts) and all(c in self.public for c in consts))
        refs = [
            c.spelling
            for c in a.walk_preorder()
            if c.kind.name == "DECL_REF_EXPR"
            and c.referenced is not None
            and c.referenced.kind.name in ("VAR_DECL", "PARM_DECL")
        ]
        return Arg(text=text, var=refs[0] if len(set(refs)) == 1 else "")

    def _checks_after(self, stmts: list[Any]) -> None:
        """A result stored in ``v`` and tested by the next statement's ``if``: that is its check."""
        for i, stmt in enumerate(stmts[:-1]):
            nxt = stmts[i + 1]
            if nxt.kind.name != "IF_STMT":
                continue
            inside = [c for c in self.calls if stmt.extent.start.line <= c.line <= stmt.extent.end.line]
            cond = next(iter(nxt.get_children()), None)
            if cond is None:
                continue
            cond_text = self.text(cond)
            for c in inside:
                if c.result_var and not c.check and re.search(rf"\b{re.escape(c.result_var)}\b", cond_text):
                    c.check = cond_text


def _written_args(call: Any) -> list[list[str]]:
    """The tokens of each argument of ``call`` as its source writes them (macros unexpanded)."""
    toks = [t.spelling for t in call.get_tokens()]
    if "(" not in toks or toks[0] != call.spelling:
        return []  # the call itself comes out of a macro: its extent is not the call as written
    return split_arguments(toks[toks.index("(") + 1:])


def _is_callee(node: Any, parents: list[Any]) -> bool:
    chain = [p for p in parents if p.kind.name not in _WRAPPERS]
    return (
        bool(chain)
        and chain[-1].kind.name == "CALL_EXPR"
        and next(iter(chain[-1].get_children()), None) is not None
        and node.extent.start.offset == chain[-1].extent.start.offset
    )


def _holder(reader: _Reader, parents: list[Any]) -> str:
    """The variable a function name is stored in (an initializer or a field assignment)."""
    for p in reversed(parents):
        name = p.kind.name
        if name == "VAR_DECL":
            return str(p.spelling)
        if name == "BINARY_OPERATOR":
            lhs = next(iter(p.get_children()), None)
            if lhs is not None:
                return re.split(r"\.|->|\[", reader.text(lhs))[0].strip("&* ")
        if name == "CALL_EXPR":
            return str(p.spelling)  # passed straight to a call
        if name.endswith("_STMT") and name != "DECL_STMT":
            return ""
    return ""


def _operator(op: Any, lhs: Any) -> str:
    for t in op.get_tokens():
        if t.extent.start.offset >= lhs.extent.end.offset:
            return str(t.spelling)
    return ""
