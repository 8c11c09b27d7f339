"""Repair a LeakSanitizer report: release what the target handed back.

A parser that returns its result through ``T **out`` (or as its return value) leaks on every
input until the harness releases it. The releaser comes from the prompt's Types section (by
parameter type, by name, or because the documentation says so, ``free`` included), else from
the API's destructor for that type, else the API's one ``void *`` release function, else
``free``. Misuse of this kind is repaired, not given up.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

from agents.offline import ckinds, type_releasers, type_table
from agents.offline.fixer_edit import split_args
from agents.offline.leak_owner import kept_object
from agents.offline.synth_api import ApiIndex
from fuzzkit.api import FunctionDecl
from fuzzkit.guidance_facts import Rule
from fuzzkit.release_names import paired_releaser
from long_term_memory.experience.lessons import RELEASE_NAME, type_name

_ADDRESS = re.compile(r"\s*(?:\([^()]*\)\s*)?&\s*([A-Za-z_]\w*)\s*")  # `&v`, `(T *)&v`


def _calls(code: str, name: str) -> Iterator[tuple[re.Match[str], list[str]]]:
    """Each call of ``name`` in ``code`` (``lhs`` names what its result is assigned to) and its arguments."""
    pattern = rf"(?:\b(?P<lhs>[A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?)?\b{re.escape(name)}\s*\("
    for call in re.finditer(pattern, code):
        depth, pos = 1, call.end()
        while pos < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[pos], 0)
            pos += 1
        yield call, split_args(code[call.end():pos - 1])


def release_results(code: str, target: FunctionDecl, api: list[FunctionDecl],
                    releasers: Mapping[str, str] | None = None,
                    fields_only: bool = False, allocators: Sequence[str] = (),
                    byte_fields: bool = False, rules: list[Rule] | None = None,
                    early: bool = False) -> tuple[str, list[str]]:
    """The harness with the target's results released before it returns, and what was added.

    ``releasers`` maps a type name to the function a lesson says releases it; it wins over
    what the header and the API suggest. ``fields_only``: only the buffers a call leaves in the
    fields of a record passed by pointer (the record outlives any block the call sits in).
    ``allocators``: the functions of the leak's allocation stack; a result whose type has no
    releaser of its own goes back through the release function paired with one of them by name
    (:func:`paired_releaser`) before the API's generic one or ``free``. ``byte_fields``: a leak
    inside ``target`` was reported: the plain bytes it left in a record's pointer fields are
    freed too (:func:`byte_field_releases`). ``rules`` gets each release as data too
    (``release_result``, ``release_field``), with its sentence. ``early``: the releases open the
    cleanup instead of closing it (what a call made from an object the harness holds is released
    before that object: a database refuses to close while a statement of it is live).
    """
    idx = ApiIndex(api if any(f.name == target.name for f in api) else [*api, target])
    owned: list[tuple[str, str]] = []  # (variable, the type it points at)
    for call, args in _calls(code, target.name):
        for param, arg in zip(target.params, args, strict=False):
            m = _ADDRESS.fullmatch(arg)
            inner = ckinds.pointee(param.type)
            if m and ckinds.pointer_depth(param.type) == 2 and not ckinds.is_const_target(inner):
                owned.append((m.group(1), inner))
        ret = target.return_type
        if call.group("lhs") and ckinds.is_pointer(ret) and not ckinds.is_const_target(ret):
            owned.append((call.group("lhs"), ret))
    added: list[str] = []
    lines: list[str] = []
    said: list[Rule] = []
    for var, ctype in dict.fromkeys([] if fields_only else owned):
        release_call = rf"\b{RELEASE_NAME}\s*\(\s*(?:\([^()]*\)\s*)?{re.escape(var)}\s*\)"
        if re.search(release_call, code, re.I):
            continue  # released already
        if not _function_scope(code, var):
            continue  # a block's own variable: a release before the function returns could not name it
        releaser = ((releasers or {}).get(type_name(ctype))
                    or _releaser(idx, ctype, target.name, paired_releaser(allocators, idx.api)))
        if re.search(rf"\b{re.escape(releaser)}\s*\(\s*{re.escape(var)}\s*\)", code):
            continue  # released already by its releaser, whatever its name says
        lines.append(f"if ({var} != NULL) {{ {releaser}({var}); {var} = NULL; }}")
        added.append(how := f"release {var} (from {target.name}) with {releaser} before returning")
        said.append(Rule(kind="release_result", name=releaser, producer=target.name, var=var, text=how))
    for expr, releaser in field_releases(code, target, idx):
        lines.append(f"{releaser}({expr});")
        added.append(how := f"release {expr[1:]} (filled by {target.name}) with {releaser} before returning")
        record, _, fld = expr[1:].partition(".")
        said.append(Rule(kind="release_field", name=releaser, producer=target.name, var=record, field=fld,
                         text=how))
    for expr in byte_field_releases(code, target, idx) if byte_fields else []:
        lines.append(f"free({expr}); {expr} = NULL;")
        added.append(f"free {expr} (bytes {target.name} allocated into the record) before returning")
    released = _with_releases(code, lines, early)
    if released == code:
        return code, []
    (rules if rules is not None else []).extend(said)
    return released, added


def _with_releases(code: str, lines: list[str], early: bool) -> str:
    """``code`` with ``lines`` before its final ``return 0;`` (``early``: right after ``lf_cleanup:``)."""
    last = code.rfind("return 0;")
    label = code.find("lf_cleanup: ;")
    if early and label >= 0:
        last = code.find("\n", label) + 1
    if not lines or last <= 0:
        return code
    space = re.search(r"([ \t]*)$", code[:last])
    indent = space.group(1) if space else ""
    block = "".join(f"{line}\n{indent}" for line in lines)
    if early and label >= 0:  # at the start of the line after the label, indented as it is
        rest = code[last:]
        indent = rest[:len(rest) - len(rest.lstrip(" \t"))]
        block = "".join(f"{indent}{line}\n" for line in lines)
    return code[:last] + block + code[last:]


def release_kept_objects(code: str, api: list[FunctionDecl], releasers: Mapping[str, str],
                         rules: list[Rule] | None = None) -> tuple[str, list[str]]:
    """What a call handed back through ``&var`` and nothing releases, released first in the cleanup.

    ``prepare(db, sql, n, &stmt, &tail)`` leaves a statement that keeps its database open: the
    database's blocks leak under the call that opened it, which the harness did release. The
    object is the one the leak verdict blames the harness for (:func:`leak_owner.kept_object`).
    ``releasers``: type -> its releaser (the library's own code's, a lesson's).
    """
    kept = kept_object(code, api, releasers)
    if kept is None:
        return code, []
    return release_results(code, kept[1], api, releasers, rules=rules, early=True)


def _function_scope(code: str, var: str) -> bool:
    """Whether ``var`` is declared at the harness function's own level (not inside a block of it)."""
    body = re.search(r"\bLLVMFuzzerTestOneInput\s*\([^)]*\)\s*\{", code)
    decl = re.search(rf"[\w*]\s+\**\s*{re.escape(var)}\s*(=[^;]*)?;", code[body.end():]) if body else None
    if body is None or decl is None:
        return True  # nothing to tell: as before
    before = code[body.end():body.end() + decl.start()]
    return before.count("{") == before.count("}")


def field_releases(code: str, callee: FunctionDecl, idx: ApiIndex) -> list[tuple[str, str]]:
    """``(&var.field, releaser)`` for the buffers calls of ``callee`` in ``code`` leave in records.

    A record passed as ``&var`` through a non-const pointer, whose type has no release function
    of its own, comes back holding what its struct-valued fields own (a decoder configuration's
    output buffer); each such field is released with the function the header names for its type.
    Calls whose record is already released that way are left out.
    """
    out: list[tuple[str, str]] = []
    for _, args in _calls(code, callee.name):
        for param, arg in zip(callee.params, args, strict=False):
            m = _ADDRESS.fullmatch(arg)
            inner = ckinds.pointee(param.type)
            if (m and ckinds.pointer_depth(param.type) == 1 and not ckinds.is_const_target(param.type)
                    and not _has_own_release(idx, inner)):
                out.extend(_owning_fields(m.group(1), inner))
    return [(expr, rel) for expr, rel in dict.fromkeys(out)
            if not re.search(rf"\b{re.escape(rel)}\s*\(\s*{re.escape(expr)}\s*\)", code)]


def byte_field_releases(code: str, callee: FunctionDecl, idx: ApiIndex) -> list[str]:
    """``var.field`` for each plain-byte pointer field of a record ``callee`` fills through ``&var``.

    ``entry_from_pair(entry_t *entry, name, value)`` leaves a malloc'd copy in ``entry.bytes``:
    a record with no release function of its own holds it for the caller, who frees it. Only
    fields pointing at characters or bytes (never a library object, never ``const``), and only
    once a leak inside the call was reported; those freed already are left out.
    """
    out: list[str] = []
    for _, args in _calls(code, callee.name):
        for param, arg in zip(callee.params, args, strict=False):
            m = _ADDRESS.fullmatch(arg)
            inner = ckinds.pointee(param.type)
            if not (m and ckinds.pointer_depth(param.type) == 1 and not ckinds.is_const_target(param.type)
                    and not _has_own_release(idx, inner)):
                continue
            record = type_table.active().record(ckinds.base_name(inner))
            out += [f"{m.group(1)}.{name}" for name, ftype in (record.fields if record else ())
                    if ckinds.pointer_depth(ftype) == 1 and not ckinds.is_const_target(ftype)
                    and ckinds.canonical_base(ftype) in _BYTES]
    return [e for e in dict.fromkeys(out) if not re.search(rf"\bfree\s*\(\s*{re.escape(e)}\s*\)", code)]


_BYTES = ("char", "unsigned char", "signed char", "uint8_t", "int8_t")


def _has_own_release(idx: ApiIndex, record_type: str) -> bool:
    """Whether the record has a release function of its own, which frees its fields itself."""
    key = idx.type_key(record_type + " *") or ckinds.base_name(record_type)
    return bool(idx.destructor(key, "") or type_releasers.type_releaser(record_type + " *"))


def _owning_fields(var: str, record_type: str) -> list[tuple[str, str]]:
    """``(&var.field, releaser)`` for each struct-valued field whose type has a releaser.

    A decoder configuration passed by pointer can come back holding an output buffer in a
    field (``config.output``) that only the buffer type's own release function frees.
    """
    record = type_table.active().record(ckinds.base_name(record_type))
    out = []
    for name, ftype in record.fields if record else ():
        canonical = type_table.active().canonical.get(ckinds.strip_const(ftype).strip(), "")
        if "*" in ftype or "(" in ftype or ckinds.is_pointer(ftype) or "*" in canonical:
            continue  # a pointer field (a typedef may hide the `*`) is no buffer held by value
        releaser = type_releasers.type_releaser(ftype)
        if releaser and releaser != "free":
            out.append((f"&{var}.{name}", releaser))
    return out


def releaser_of(api: list[FunctionDecl], ctype: str, producer: FunctionDecl) -> str:
    """The function that releases a ``ctype`` result of ``producer`` (see :func:`release_results`)."""
    return _releaser(ApiIndex(api if producer in api else [*api, producer]), ctype, producer.name)


def _releaser(idx: ApiIndex, ctype: str, producer: str, paired: str | None = None) -> str:
    found = type_releasers.type_releaser(ctype, producer=producer)
    if found:
        return found
    key = idx.type_key(ctype)
    dtor = idx.destructor(key, producer) if key else None
    if dtor:
        return dtor
    return paired or idx.generic_free() or "free"


def release_held_fields(code: str, added: list[str], held: set[str], idx: ApiIndex) -> str:
    """Release, before returning, what an added call leaves in the fields of a record the harness holds.

    ``held``: the variables of the harness's own records (passed as ``&var``).

    A decode call given the harness's own ``&config`` (zeroed where it is declared, at the top)
    hands back an output buffer in ``config.output``; the block cannot release it, since the
    harness's record outlives the block, so the release goes where the harness releases its own.
    """
    for name in dict.fromkeys(added):
        fn = idx.by_name.get(name)
        if fn is not None and any(e[1:].split(".")[0] in held for e, _ in field_releases(code, fn, idx)):
            code, _ = release_results(code, fn, idx.api, fields_only=True)
    return code
