"""Release calls written with one argument for releasers that take a flag after the object.

``void x_region_free(x_region *region, int free_self)``: the Types section lists it as the
releaser of ``x_region *``, and the code that releases an object writes ``release(obj)``.
The flag says whether the object itself goes too (without it, the struct leaks; for an
object on the stack, ``&region``, it must not); any other trailing integer gets 0. Applied
to the finished harness, so every place that releases an object is covered.
"""

from __future__ import annotations

import re
from functools import partial

from agents.offline import ckinds, type_releasers, type_table
from fuzzkit.api import FunctionDecl

_WHOLE = re.compile(r"(self|all|deep|recurs|whole|struct|free|segment)", re.I)


def complete_release_calls(code: str, api: list[FunctionDecl]) -> str:
    """``release(obj)`` -> ``release(obj, 1)`` for releasers with trailing integer flags.

    A releaser whose other parameters are status outs (``close_file(f, int *error)``) gets a
    compound literal for each (``close_file(f, &(int){0})``).

    A releaser taking the object's address (``destroy(obj_t **pp, ...)``) gets it, and NULL for
    the other objects it could release with it (``destroy(&obj, NULL)``).

    A releaser that takes the object that made what it frees (``free_error(handle, str)``)
    gets that object: the first argument of the call whose result is released. Only the
    functions the code calls with one argument are looked at.
    """
    single = set(_ONE_ARG.findall(code))
    for fn in api:
        if fn.name not in single or not fn.params:
            continue
        if _by_address(fn):
            code = _released_by_address(code, fn)
        elif len(fn.params) < 2:
            continue
        elif ckinds.is_pointer(fn.params[0].type) and fn.params[1:] and all(
                _status_out(p.type) for p in fn.params[1:]):
            code = re.sub(rf"\b{re.escape(fn.name)}\(([^(),;]+)\)", partial(_with_status, fn), code)
        elif _with_object(fn):
            one_arg = partial(_maker_first, code, fn, api)
            code = re.sub(rf"\b{re.escape(fn.name)}\(([^(),;]+)\)", one_arg, code)
        elif ckinds.is_pointer(fn.params[0].type) and all(
                ckinds.is_integer(p.type) or ckinds.is_bool(p.type) for p in fn.params[1:]):
            code = re.sub(rf"\b{re.escape(fn.name)}\(([^(),;]+)\)", partial(_with_flags, fn), code)
    return code


_ONE_ARG = re.compile(r"\b(\w+)\([^(),;]+\)")


def _with_flags(fn: FunctionDecl, m: re.Match[str]) -> str:
    # An object on the stack (`&region`) keeps its own memory: only its contents go.
    whole = "0" if m.group(1).strip().startswith("&") else "1"
    flags = ", ".join(whole if _WHOLE.search(p.name or "") else "0" for p in fn.params[1:])
    return f"{fn.name}({m.group(1)}, {flags})"


def _status_out(ctype: str) -> bool:
    """``int *error``: a writable pointer to one plain integer, where a releaser reports how it went."""
    return (ckinds.pointer_depth(ctype) == 1 and not ckinds.is_const_target(ctype)
            and ckinds.is_integer(ckinds.pointee(ctype)) and not ckinds.is_bytes(ctype))


def _by_address(fn: FunctionDecl) -> bool:
    """``destroy(obj_t **pp, other_t **more, ...)``: the releaser clears the caller's pointer itself."""
    first = ckinds.resolve(fn.params[0].type)
    return ckinds.pointer_depth(first) == 2 and not ckinds.is_bytes(ckinds.pointee(first)) and all(
        ckinds.is_pointer(p.type) or ckinds.is_integer(p.type) for p in fn.params[1:])


_DECLARED = re.compile(r"^\s*((?:const\s+)?[A-Za-z_]\w*(?:\s*\*)*)\s*\b([A-Za-z_]\w*)\s*=\s*NULL\s*;", re.M)


def _released_by_address(code: str, fn: FunctionDecl) -> str:
    """``destroy(obj)`` -> ``destroy(&obj, &child, NULL)``.

    The object's address; for each other ``C **`` it takes, the address of the harness's ``C *``
    (``destroy_read_struct(&rd, &info, NULL)``: what only it releases whole), whose own
    one-argument release goes (it would free what the call frees again); NULL for the rest.
    """
    setup = code.split("/* @LF:CALL */", 1)[0]  # function-scope declarations, not a block's
    held = [(var, ckinds.strip_const(ckinds.resolve(ctype))) for ctype, var in _DECLARED.findall(setup)]

    def written(m: re.Match[str]) -> str:
        args, taken = [f"&{m.group(1)}"], {m.group(1)}
        for p in fn.params[1:]:
            want = ckinds.resolve(p.type)
            inner = ckinds.strip_const(ckinds.pointee(want)) if ckinds.pointer_depth(want) == 2 else ""
            child = next((v for v, t in held if v not in taken and inner and t == inner), None)
            taken.add(child or "")
            args.append(f"&{child}" if child else "NULL" if ckinds.is_pointer(p.type) else "0")
        return f"{fn.name}({', '.join(args)})"

    out = re.sub(rf"\b{re.escape(fn.name)}\((\w+)\)", written, code)
    head, label, cleanup = out.rpartition("lf_cleanup:")
    for child in {c for c in re.findall(rf"\b{re.escape(fn.name)}\(&\w+((?:, &\w+)+)", cleanup)
                  for c in re.findall(r"&(\w+)", c)}:
        # the child's own release of the pointer the call frees (in the cleanup)
        cleanup = re.sub(rf"^[ \t]*(?:if \({child} != NULL\) )?\w+\({child}\);[ \t]*\n", "", cleanup,
                         flags=re.M)
    return head + label + cleanup if label else out


def _with_status(fn: FunctionDecl, m: re.Match[str]) -> str:
    # `close_file(f, int *error)`: a status of its own, written or not (NULL may not be checked)
    outs = ", ".join(f"&({ckinds.pointee(p.type)}){{0}}" for p in fn.params[1:])
    return f"{fn.name}({m.group(1)}, {outs})"


def _with_object(fn: FunctionDecl) -> bool:
    """``f(obj, ptr)``: the object a handle typedef or a pointer, the other a plain pointer."""
    types = [p.type for p in fn.params]
    canonical = type_table.active().canonical
    return (len(types) == 2 and ckinds.is_pointer(types[1])
            and (ckinds.is_pointer(types[0]) or "*" in canonical.get(ckinds.base_name(types[0]), ""))
            and not (ckinds.is_bytes(types[0]) or ckinds.is_string(types[0])))


def _maker_first(code: str, fn: FunctionDecl, api: list[FunctionDecl], m: re.Match[str]) -> str:
    arg = m.group(1).strip()
    made = re.search(rf"\b{re.escape(arg)}\s*=\s*(?:\([^()]*\)\s*)?(\w+)\(\s*([^,()]+?)\s*[,)]", code)
    if not made:
        return m.group(0)
    maker = next((f for f in api if f.name == made.group(1)), None)
    if maker is None or not maker.params or (
            ckinds.base_name(maker.params[0].type) == ckinds.base_name(fn.params[0].type)):
        return f"{fn.name}({made.group(2)}, {arg})"
    # The maker's first argument is no object of the releaser's (`x_new_number(d, text)` and
    # `x_free_attachment(obj, data)`): what it made goes back with the one-argument releaser of its type.
    arity = {f.name: len(f.params) for f in api}
    other = next((r for r in type_releasers.releasers_of(maker.return_type) if arity.get(r, 1) == 1), None)
    return f"{other}({arg})" if other else m.group(0)
