"""Argument builders the planner delegates.

Arrays, literal keys, node ids, memory for free functions, and calls through a generated
variadic wrapper for ``va_list`` functions.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import ckinds
from agents.offline.synth_api import words
from agents.offline.synth_knowledge import LITERAL_KEYS
from agents.offline.synth_types import CallPlan, Role, decl_cast, decl_type
from fuzzkit.api import FunctionDecl

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner


def literal_key(pl: Planner) -> str:
    """A string literal picked by an option byte (for APIs that keep the pointer)."""
    table = pl.f.name("lf_keys")
    quoted = ", ".join('"' + k + '"' for k in LITERAL_KEYS)
    pl.f.decls.append(f"static const char *const {table}[] = {{{quoted}}};")
    pick = pl.f.take_int((0, len(LITERAL_KEYS) - 1))
    return f"{table}[{pick}]"


def array(pl: Planner, r: Role, rs: list[Role]) -> tuple[str, str]:
    """A small array (numbers or strings) from option bytes, and its count."""
    count_role = rs[r.pair] if r.pair is not None else None
    n = pl.var(count_role.param.type if count_role else "int", "count")
    if r.kind == "strarray":
        # Eight strings and a NULL after them, for a count of at most four: whether the count
        # is of strings, of name/value pairs or the array ends at NULL, no read goes past it.
        arr = pl.f.name("strings")
        pl.f.decls.append(f"char *{arr}[9] = {{NULL}};")
        pl.f.need("take_str")
        pl.f.opts.append(
            f"for (int lf_i = 0; lf_i < 8; lf_i++) {arr}[lf_i] = lf_take_str(&{pl.f.cursor}, 8);"
        )
        pl.f.opts.append(f"{n} = {pl.f.take_int((0, 4))};")
        pl.f.setup.append(f"for (int lf_i = 0; lf_i < 8; lf_i++) if ({arr}[lf_i] == NULL) {pl.f.fail()}")
        pl.f.cleanup.append(f"for (int lf_i = 0; lf_i < 8; lf_i++) free({arr}[lf_i]);")
        return f"({decl_cast(r.param.type)}){arr}", n
    elem = decl_type(ckinds.pointee(r.param.type))
    arr = pl.f.name("numbers")
    pl.f.decls.append(f"{elem} {arr}[8] = {{0}};")
    pick = pl.f.take_int((-1000, 1000))
    pl.f.opts.append(f"for (int lf_i = 0; lf_i < 8; lf_i++) {arr}[lf_i] = ({elem}){pick};")
    pl.f.opts.append(f"{n} = {pl.f.take_int((0, 8))};")
    return arr, n


def version_arg(pl: Planner, fn: FunctionDecl, r: Role) -> str:
    """The library's own version call, for an ABI version parameter the library checks."""
    integer = not ckinds.is_pointer(r.param.type)
    return f"{pl.idx.version_function(fn.name, integer)}()"


def alloc_for(pl: Planner, fn: FunctionDecl) -> str:
    """Memory for a ``free``-like function, from the library's own allocator if it has one."""
    alloc = next((f for f in pl.idx.api if re.search(r"malloc$", f.name) and len(f.params) == 1), None)
    v = pl.var("void *", "block", "NULL")
    pl.f.setup.append(f"{v} = {alloc.name if alloc else 'malloc'}(16 + size);")
    pl.f.setup.append(f"if ({v} == NULL) {pl.f.fail()}")
    return v


def node_id(pl: Planner, fn: FunctionDecl, r: Role, owner: str) -> str | None:
    """An id from the API's ``add_<name>`` function on the same object.

    For an int parameter that names what it refers to (``sequence``, ``item``, ``key``).
    """
    key = pl.idx.type_key(fn.params[0].type)
    name = r.param.name.lower()
    for g in pl.idx.api:
        if g.name == fn.name or g.name in pl.avoid or not g.params:
            continue
        gw = set(words(g.name))
        if pl.idx.type_key(g.params[0].type) != key or "add" not in gw:
            continue
        if not ckinds.is_integer(g.return_type) or ckinds.is_bool(g.return_type):
            continue
        if name in gw or (name in ("item", "key", "value", "node") and "scalar" in gw):
            plan = pl.plan(g, bind={0: owner}, payload=False)
            ident = pl.emit(plan, pl.f.setup, result=f"{name}_id")
            pl.f.setup.append(f"if ({ident} <= 0) {pl.f.fail()}")
            return ident
    return None


def va_wrapped(pl: Planner, fn: FunctionDecl, bind: dict[int, str], payload: bool) -> CallPlan:
    """Call a ``va_list`` function through a generated variadic wrapper."""
    name = f"lf_va_{fn.name}"
    if not any(name + "(" in g for g in pl.f.globals):
        head = ", ".join(p.render() for p in fn.params[:-1])
        last = fn.params[-2].name
        ret = fn.return_type
        keep = "" if ckinds.is_void(ret) else f"{decl_type(ret)} r = "
        args = ", ".join(p.name for p in fn.params[:-1])
        pl.f.globals.append(
            f"/* {fn.name} takes a va_list: this variadic wrapper makes one. */\n"
            f"static {ret}{'' if ret.endswith('*') else ' '}{name}({head}, ...) {{\n"
            f"  va_list ap;\n  va_start(ap, {last});\n  {keep}{fn.name}({args}, ap);\n"
            f"  va_end(ap);\n" + ("" if ckinds.is_void(ret) else "  return r;\n") + "}"
        )
        pl.f.include("<stdarg.h>")
    inner = FunctionDecl(name=fn.name, return_type=fn.return_type, params=fn.params[:-1])
    plan = pl.plan(inner, bind, payload)
    plan.text = name + plan.text[len(fn.name) :]
    plan.fn = fn
    return plan
