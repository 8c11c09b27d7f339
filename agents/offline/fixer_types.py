"""Repairs of how the harness holds library objects: by pointer, and by address for ``T **``.

An opaque (incomplete) struct cannot be declared by value: the library hands out pointers to
it from a constructor, the way the synthesizer builds objects (``ApiIndex.lifecycle``), and
takes them back with a destructor. A ``T *`` passed where the prototype wants ``T **`` is an
out-parameter: the callee writes the object through the variable's address.
"""

from __future__ import annotations

import re

from agents.offline import ckinds
from agents.offline.fixer_core import FixerBase
from agents.offline.fixer_edit import arg_index, call_at, default_arg, expression_end, statement_span
from agents.offline.synth_api import ApiIndex
from fuzzkit.guidance_facts import Rule

_PASSING = re.compile(
    r"passing '(?P<arg>[^']+)'(?: \(aka '[^']+'\))? to parameter of type '(?P<param>[^']+)'"
)
_LVALUE = re.compile(r"[A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*|\s*\[[^\]]*\])*")


def address_of(fixer: FixerBase, msg: str, pos: int) -> bool:
    """Pass ``&arg`` where a ``T *`` goes to a ``T **`` parameter; True if that was the fix."""
    m = _PASSING.search(msg)
    if not m:
        return False
    arg, param = m["arg"], m["param"]
    deeper = ckinds.pointer_depth(param) == ckinds.pointer_depth(arg) + 1
    if not deeper or ckinds.base_name(param) != ckinds.base_name(arg):
        return False
    expr = fixer.code[pos : expression_end(fixer.code, pos)].strip()
    call = call_at(fixer.code, pos)
    where = f"to {call[0]}" if call else f"at line {fixer.code.count(chr(10), 0, pos) + 1}"
    if not _LVALUE.fullmatch(expr):
        fixer.unresolved.append(f"{expr} is passed {where} as {param} but has no address to take")
        return True
    fixer.edit(pos, pos, "&", f"pass &{expr} {where}: the parameter is {param}, an out-parameter")
    return True


def opaque_variable(fixer: FixerBase, ctype: str, pos: int) -> None:
    """Turn ``struct T v;`` (T incomplete) into a pointer from T's constructor, freed at the end."""
    name = re.match(r"[A-Za-z_]\w*", fixer.code[pos:])
    start, end = statement_span(fixer.code, pos)
    stmt = fixer.code[start:end]
    decl = re.fullmatch(r"(\s*)((?:const\s+)?(?:(?:struct|union)\s+)?[A-Za-z_]\w*)\s+(\w+)\s*(?:=[^;,]*)?;",
                        stmt)
    if not name or not decl or decl[3] != name.group(0):
        fixer.unresolved.append(f"{ctype} is opaque: declare a pointer to it and get it from its constructor")
        return
    var, written = decl[3], decl[2]
    indent = decl[1].rsplit("\n", 1)[-1]
    index = ApiIndex(list(fixer.api.values()))
    key = ckinds.base_name(f"{written} *")
    close = _function_end(fixer.code, pos)
    filled_by = _out_parameter_calls(fixer, var, end, close)
    create = index.lifecycle(key).create
    dtor = index.destructor(key, near=filled_by[0] if filled_by else (create[0] if create else ""))
    freed = f" and release it with {dtor}" if dtor else ""
    at = start + len(decl[1])
    held = Rule(kind="opaque", name=ctype)
    if filled_by:
        # The harness already gets the object through a ``T **``: only the declaration was wrong.
        fixer.edit(at, end, f"{written} *{var} = NULL;",
                   f"declare {var} as {ctype} * filled by {filled_by[0]}{freed} ({ctype} is opaque)", held)
        if dtor:
            _release_at_end(fixer, f"if ({var}) {dtor}({var});", var, dtor, end, close)
    elif create:
        ctor = index.by_name[create[0]]
        slot = index.out_slot(ctor)
        args = [f"&{var}" if i == slot else default_arg(ctor, i, []) for i in range(len(ctor.params))]
        call = f"{ctor.name}({', '.join(args)})"
        text = (f"{written} *{var} = NULL;\n{indent}{call};" if slot is not None
                else f"{written} *{var} = {call};")
        fixer.edit(at, end, f"{text}\n{indent}if (!{var}) return 0;",
                   f"declare {var} as {ctype} * made by {ctor.name}{freed} ({ctype} is opaque)", held)
        if dtor:
            _release_at_end(fixer, f"{dtor}({var});", var, dtor, end, close)
    else:
        fixer.edit(at, end, f"{written} *{var} = NULL;",
                   f"declare {var} as {ctype} * ({ctype} is opaque; no constructor found)", held)
        fixer.unresolved.append(f"no constructor of {ctype} in the API: {var} stays NULL")
    _use_as_pointer(fixer, var, end, close)


def _out_parameter_calls(fixer: FixerBase, var: str, start: int, close: int) -> list[str]:
    """API functions the harness passes ``&var`` to as a ``T **`` (they hand out the object)."""
    names = []
    for m in re.finditer(rf"&\s*{re.escape(var)}\b(?!\s*(?:\.|->|\[))", fixer.code[start:close]):
        if fn := _is_out_argument(fixer, start + m.start()):
            names.append(fn)
    return names


def _is_out_argument(fixer: FixerBase, pos: int) -> str | None:
    """The API function whose ``T **`` parameter receives the argument at ``pos``, if one does."""
    call = call_at(fixer.code, pos)
    fn = fixer.api.get(call[0]) if call else None
    if not call or not fn:
        return None
    i = arg_index(fixer.code, call[1], pos)
    return fn.name if i < len(fn.params) and ckinds.pointer_depth(fn.params[i].type) == 2 else None


def _function_end(code: str, pos: int) -> int:
    """The offset of the closing brace of the function around ``pos`` (a ``}`` in column 0)."""
    m = re.compile(r"^\}", re.M).search(code, pos)
    return m.start() if m else len(code)


def _release_at_end(fixer: FixerBase, stmt: str, var: str, dtor: str, start: int, close: int) -> None:
    """Put ``stmt`` before the function's last ``return`` (or its closing brace)."""
    returns = list(re.finditer(r"^([ \t]*)return\b[^;]*;", fixer.code[start:close], re.M))
    if returns:
        indent = returns[-1].group(1)
        at = start + returns[-1].start() + len(indent)
        fixer.edit(at, at, f"{stmt}\n{indent}",
                   f"release {var} with {dtor} before returning")
    else:
        fixer.edit(close, close, f"  {stmt}\n", f"release {var} with {dtor} before returning")


def _use_as_pointer(fixer: FixerBase, var: str, start: int, close: int) -> None:
    """Uses of the by-value variable, rewritten for a pointer: ``&v`` -> ``v``, ``v.f`` -> ``v->f``."""
    body = fixer.code[start:close]
    why = f"use {var} as the pointer it now is"
    for m in re.finditer(rf"\bmemset\s*\(\s*&\s*{re.escape(var)}\b", body):
        # Zeroing the object by value: the constructor already initialized it.
        s, e = statement_span(fixer.code, start + m.start())
        fixer.edit(s, e, "", why)
    for m in re.finditer(rf"&\s*{re.escape(var)}\b(?!\s*(?:\.|->|\[))", body):
        if _is_out_argument(fixer, start + m.start()):
            continue  # an out-parameter: the address of the pointer is what it wants
        fixer.edit(start + m.start(), start + m.end(), var, why)
    for m in re.finditer(rf"\b{re.escape(var)}\s*\.(?=\s*[A-Za-z_])", body):
        fixer.edit(start + m.start(), start + m.end(), f"{var}->", why)

