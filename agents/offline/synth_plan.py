"""Type-driven argument construction: turn a prototype into a call built from the fuzz input.

The :class:`Planner` writes into a :class:`~agents.offline.synth_code.Frag`: declarations,
option reads, setup with failure jumps, the call, and cleanup of everything it acquired.
Library objects come from :mod:`agents.offline.synth_objects`.
"""

from __future__ import annotations

import re

from agents.offline import cdecl, synth_args, type_table
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_code import Frag
from agents.offline.synth_io import io_arg
from agents.offline.synth_knowledge import retained_strings, success_test
from agents.offline.synth_objects import build_object
from agents.offline.synth_roles import Role, payload_slot, roles
from agents.offline.synth_types import (
    EXPANDS,
    MAX_OUT,
    SHRINKS,
    WORKSPACE,
    CallPlan,
    Obj,
    Unsupported,
    decl_cast,
    decl_type,
)
from fuzzkit.api import FunctionDecl

_OPTIONAL_TEXT = re.compile(r"(encoding|charset|locale)", re.I)


_TEXT_NAME = re.compile(r"(str|text|txt|sql|uri|url|name|expr|query|pattern|regex)", re.I)


class Planner:
    """Builds arguments and objects for calls into one library."""

    def __init__(
        self,
        idx: ApiIndex,
        frag: Frag,
        avoid: set[str] | None = None,
        purpose: str = "",
        file_ctx: tuple[str, str] | None = None,
    ) -> None:
        self.idx, self.f = idx, frag
        self.avoid = set(avoid or ())
        self.purpose = purpose
        self.scope: list[Obj] = []
        self.file_ctx = file_ctx  # (fd variable, path variable) when the skeleton made them
        self.empty_file_ctx: tuple[str, str] | None = None  # an empty file for unfed opens
        self._text: str | None = None
        self.depth = 0
        self.c_strings: set[str] = set()  # params that must get a NUL-terminated string
        self.fed = False  # whether some call receives the fuzz input
        # Optional code (a follow-up block) is dropped rather than free() an object whose
        # destructor is unknown: free() leaks what the object holds, and may not be its releaser.
        self.strict_release = False
        # Object types whose input/output the target itself sets: no automatic feeding.
        self.configuring: set[str] = set()

    # ----- small builders -----
    def var(self, ctype: str, base: str, init: str = "0", hoist: bool = False) -> str:
        """Declare a local of ``ctype`` (top-level const dropped) and return its name."""
        name = self.f.name(base)
        ctype = decl_type(ctype)
        sep = "" if ctype.endswith("*") else " "
        scalar = cdecl.is_integer(ctype) or cdecl.is_float(ctype) or cdecl.is_enum_like(ctype)
        if init == "0" and not (scalar or cdecl.is_pointer(ctype) or self.idx.type_key(ctype)):
            # A struct returned by value (or an unknown typedef): zero it instead.
            target = self.f.hoist if hoist else self.f.decls
            target += [f"{ctype}{sep}{name};", f"memset(&{name}, 0, sizeof {name});"]
            self.f.include("<string.h>")
            return name
        (self.f.hoist if hoist else self.f.decls).append(f"{ctype}{sep}{name} = {init};")
        return name

    @staticmethod
    def _sentinel_length(rs: list[Role], r: Role) -> bool:
        """A ``char`` string named as text (``str``, ``zSql``) with a signed length next to it.

        Binary input (``src``, ``buf``) keeps the bare payload, so ASan sees over-reads.
        """
        if r.kind != "bytes" or r.pair is None or rs[r.pair].kind != "len":
            return False
        textual = _TEXT_NAME.search(r.param.name) or re.match(r"z[A-Z]", r.param.name)
        signed = not cdecl.is_unsigned(rs[r.pair].param.type)
        return bool(textual) and cdecl.is_string(r.param.type) and signed

    def payload_text(self) -> str:
        """A NUL-terminated heap copy of the payload (made once)."""
        if self._text is None:
            self.f.need("strndup")
            self._text = self.var("char *", "text", "NULL")
            self.f.setup.append(f"{self._text} = lf_strndup(data, size);")
            self.f.setup.append(f"if ({self._text} == NULL) {self.f.fail()}")
            self.f.cleanup.append(f"free({self._text});")
        return self._text

    def key_text(self, base: str, max_len: int = 16) -> str:
        """A short NUL-terminated string taken from the option end of the input."""
        self.f.need("take_str")
        name = self.var("char *", base, "NULL")
        self.f.opts.append(f"{name} = lf_take_str(&{self.f.cursor}, {max_len});")
        self.f.setup.append(f"if ({name} == NULL) {self.f.fail()}")
        self.f.cleanup.append(f"free({name});")
        return name

    def option(self, role: Role) -> str:
        """An option variable for an int/bool/enum/float role."""
        ctype = decl_type(role.param.type)
        if role.kind == "float":
            self.f.need("take_double")
            name = self.var(ctype, role.param.name)
            self.f.opts.append(f"{name} = ({ctype})lf_take_double(&{self.f.cursor});")
            return name
        name = self.var(ctype, role.param.name, f"({ctype})0" if role.kind == "enum" else "0")
        self.f.opts.append(f"{name} = ({ctype}){self.f.take_int(role.choices or (0, 1))};")
        return name

    def out_buffer(self, fn: FunctionDecl) -> tuple[str, str]:
        """A heap output buffer and its capacity variable (bounded by 1 MiB)."""
        buf = self.var("uint8_t *", "out_buf", "NULL")
        cap = self.var("size_t", "out_cap")
        bound = self.idx.bound_function(fn.name)
        named = bound is not None and fn.name.startswith(re.sub(r"(?i)_?bound$", "", bound.name))
        if bound and (EXPANDS.search(fn.name) or named) and not SHRINKS.search(fn.name):
            # The bound's own parameter types: a cast to another library's typedef would not compile.
            args = [f"({decl_type(bound.params[0].type)})size"] + ["NULL"] * (len(bound.params) - 1)
            self.f.setup.append(f"{cap} = (size_t){bound.name}({', '.join(args)}) + 64;")
        else:
            grow = self.var("size_t", "grow")
            self.f.opts.append(f"{grow} = (size_t){self.f.take_int((1, 8))};")
            self.f.setup.append(f"{cap} = 32768 + size * {grow};")
        self.f.setup.append(f"if ({cap} > {MAX_OUT}u) {cap} = {MAX_OUT}u;")
        self.f.setup.append(f"{buf} = (uint8_t *)malloc({cap});")
        self.f.setup.append(f"if ({buf} == NULL) {self.f.fail()}")
        self.f.cleanup.append(f"free({buf});")
        self.f.include("<stdlib.h>")
        return buf, cap

    def length(self, ctype: str, expr: str) -> str:
        """``expr`` (a size_t) cast to a length type, clamped when the type is narrow."""
        bits = cdecl.integer_bits(ctype)
        if bits < 32:
            limit = (1 << (bits - (0 if cdecl.is_unsigned(ctype) else 1))) - 1
            expr = f"({expr} > {limit}u ? {limit}u : {expr})"
        return f"({decl_type(ctype)}){expr}"

    # ----- calls -----
    def plan(self, fn: FunctionDecl, bind: dict[int, str] | None = None, payload: bool = True) -> CallPlan:
        """Build every argument of ``fn`` (``bind`` fixes some by index) into a call.

        Raises:
            Unsupported: A parameter cannot be built.
        """
        bind = dict(bind or {})
        rs = roles(fn, self.idx)
        if rs and rs[-1].kind == "unsupported" and len(rs) > 1 and "va_list" in rs[-1].param.type:
            return synth_args.va_wrapped(self, fn, bind, payload)
        main = payload_slot(rs) if payload else None
        args: dict[int, str] = {}
        plan = CallPlan(fn, "")
        for r in rs:
            if r.index in bind:
                args[r.index] = bind[r.index]
                continue
            if r.index in args:
                continue
            k = r.kind
            ptype = r.param.type
            cast = f"({decl_cast(ptype)})"
            if k == "unsupported":
                raise Unsupported(f"{fn.name}: cannot build a {ptype} argument")
            if k == "text" and retained_strings(fn.name):
                args[r.index] = f"{cast}{synth_args.literal_key(self)}"
            elif k in ("text", "bytes") and r.index == main and self._sentinel_length(rs, r):
                # `(const char *s, int len)`: a length <= 0 often means "up to the NUL", so the
                # text gets its terminator (an empty input would else be read by strlen).
                self.fed = True
                args[r.index] = f"{cast}{self.payload_text()}"
                args[r.pair] = self.length(rs[r.pair].param.type, "size")
            elif k in ("text", "bytes") and r.index == main:
                self.fed = True
                if k == "bytes" and r.param.name not in self.c_strings:
                    args[r.index] = f"{cast}data"
                    if r.pair is not None and rs[r.pair].kind == "len_bits":
                        args[r.pair] = self.length(rs[r.pair].param.type, "size * 8")
                    elif r.pair is not None and rs[r.pair].kind == "len":
                        args[r.pair] = self.length(rs[r.pair].param.type, "size")
                    elif r.pair is not None:  # pointer to the input length
                        inner = decl_type(cdecl.pointee(rs[r.pair].param.type))
                        lp = self.var(inner, "in_len")
                        self.f.setup.append(f"{lp} = ({inner})size;")
                        args[r.pair] = f"&{lp}"
                else:
                    text = self.payload_text()
                    args[r.index] = f"{cast}{text}"
                    if r.pair is not None:
                        args[r.pair] = self.length(rs[r.pair].param.type, f"strlen({text})")
                        self.f.include("<string.h>")
            elif k == "text" and _OPTIONAL_TEXT.search(r.param.name) and r.pair is None:
                args[r.index] = "NULL"  # an optional setting (an encoding name): its default
            elif k in ("text", "bytes"):
                key = self.key_text(r.param.name)
                args[r.index] = f"{cast}{key}"
                if r.pair is not None and rs[r.pair].kind == "len_bits":
                    args[r.pair] = self.length(rs[r.pair].param.type, f"strlen({key}) * 8")
                elif r.pair is not None and rs[r.pair].kind == "len":
                    args[r.pair] = self.length(rs[r.pair].param.type, f"strlen({key})")
                elif r.pair is not None:
                    lp = self.var(cdecl.pointee(rs[r.pair].param.type), "key_len")
                    self.f.setup.append(f"{lp} = strlen({key});")
                    args[r.pair] = f"&{lp}"
                self.f.include("<string.h>")
            elif k == "outbuf":
                buf, cap = self.out_buffer(fn)
                args[r.index] = f"{cast}{buf}"
                plan.out_buf, plan.out_len, plan.out_cap = buf, cap, cap
                plan.out_by_value = r.pair is not None and rs[r.pair].kind == "outlen"
                if r.pair is not None:
                    pr = rs[r.pair]
                    if pr.kind == "outlen_ptr":
                        inner = decl_type(cdecl.pointee(pr.param.type))
                        lv = self.var(inner, "out_len")
                        self.f.setup.append(f"{lv} = ({inner}){cap};")
                        args[r.pair] = f"&{lv}"
                        plan.out_len = lv
                    else:
                        args[r.pair] = self.length(pr.param.type, cap)
            elif k == "unit":
                args[r.index] = f"({decl_cast(ptype)})1"
            elif k in ("int", "bool", "enum", "float") and r.index in (
                fixed := type_table.active().fixed_args.get(fn.name, {})
            ):
                # The header's own wrappers pass this value (an ABI version, a size): it is a check.
                args[r.index] = f"{cast}{fixed[r.index]}" if k == "enum" else fixed[r.index]
            elif k == "int" and 0 in args and (ident := synth_args.node_id(self, fn, r, args[0])):
                args[r.index] = ident
            elif k in ("int", "bool", "enum", "float"):
                args[r.index] = self.option(r)
            elif k == "zero_value":
                v = self.f.name(r.param.name)
                self.f.decls += [f"{decl_type(ptype)} {v};", f"memset(&{v}, 0, sizeof {v});"]
                self.f.include("<string.h>")
                args[r.index] = v
            elif k == "version":
                integer = not cdecl.is_pointer(ptype)
                args[r.index] = f"{self.idx.version_function(fn.name, integer)}()"
            elif k == "struct_size":
                args[r.index] = f"{cast}sizeof({r.type_key})"
            elif k in ("object", "handle", "consumed", "fresh", "out_object", "child"):
                args[r.index] = build_object(self, fn, r, args, plan)
            elif k == "out_scalar":
                v = self.var(cdecl.pointee(ptype), r.param.name)
                args[r.index] = f"&{v}"
            elif k == "out_ptr":
                v = self.var(cdecl.pointee(ptype), r.param.name, "NULL")
                args[r.index] = f"&{v}"
                self._release_out(fn, ptype, v, r.param.name)
            elif k == "scratch":
                v = self.var("uint8_t *", r.param.name, "NULL")
                self.f.setup.append(f"{v} = (uint8_t *)calloc(1, 65536);")
                self.f.setup.append(f"if ({v} == NULL) {self.f.fail()}")
                self.f.cleanup.append(f"free({v});")
                self.f.include("<stdlib.h>")
                args[r.index] = f"{cast}{v}"
            elif k == "alloc":
                args[r.index] = synth_args.alloc_for(self, fn)
            elif k == "blob":
                args[r.index] = self.blob(r, fed=r.index == main)
            elif k == "workspace" and r.pair is not None:
                ws = self.f.name(r.param.name or "workspace")
                self.f.decls.append(f"{decl_type(cdecl.pointee(ptype))} {ws}[{WORKSPACE}] = {{0}};")
                args[r.index] = ws
                args[r.pair] = f"({decl_cast(rs[r.pair].param.type)}){WORKSPACE}"
            elif k in ("array", "strarray"):
                args[r.index], args[r.pair or r.index + 1] = synth_args.array(self, r, rs)
            elif k in ("fd", "path", "mode", "file", "callback", "userdata", "format"):
                args[r.index] = io_arg(self, fn, r, plan, feed=payload)
            else:
                args[r.index] = "NULL"
        ordered = [args.get(i, "0") for i in range(len(fn.params))]
        plan.text = f"{fn.name}({', '.join(ordered)})"
        self.f.calls.append(fn.name)
        return plan

    def blob(self, r: Role, fed: bool) -> str:
        """A buffer-and-length struct holding the payload (zeroed when another slot gets it)."""
        v = self.f.name(r.param.name or "input")
        self.f.decls += [f"{decl_type(cdecl.pointee(r.param.type))} {v};", f"memset(&{v}, 0, sizeof {v});"]
        self.f.include("<string.h>")
        fields = cdecl.blob_fields(r.type_key or "")
        rec = type_table.active().record(r.type_key or "")
        if fed and fields and rec:
            types = dict(rec.fields)
            self.fed = True
            self.f.setup.append(f"{v}.{fields[0]} = ({types[fields[0]]})data;")
            self.f.setup.append(f"{v}.{fields[1]} = ({types[fields[1]]})size;")
        return f"&{v}"

    def _release_out(self, fn: FunctionDecl, ptype: str, v: str, param_name: str = "") -> None:
        """Release what the callee returned through ``T **``, with the releaser the header names.

        A parser's result list leaks on every input otherwise (LeakSanitizer); which function
        releases it comes from the Types section (by parameter type, by name, or because the
        documentation says so, ``free`` included). A ``const`` pointee points into the input.
        """
        if cdecl.is_const_target(cdecl.pointee(ptype)) or cdecl.is_const_target(ptype):
            return
        inner = cdecl.pointee(ptype)
        returns_block = cdecl.is_pointer(fn.return_type)
        if returns_block and self.idx.returns_owned(fn) and (
            cdecl.normalize_type(inner) == cdecl.normalize_type(fn.return_type)
        ):
            return  # `u = f(..., &v)`: a view into the block the call returns, released with it
        # "X releases what f allocates" is about f's result: its out-parameters only when it
        # returns no pointer.
        releaser = type_table.releaser_for(inner, producer="" if returns_block else fn.name)
        if releaser is None:
            key = self.idx.type_key(inner)
            releaser = self.idx.destructor(key, fn.name) if key else None
        if releaser is None and (cdecl.is_bytes(inner) or cdecl.is_string(inner)):
            # A string or buffer handed back: the library's one generic releaser, else free()
            # — unless the name says it points into the input (`end`, `next`, `rest`).
            if re.search(r"(end|next|rest|pos|cursor|remain)", param_name, re.I):
                return
            releaser = self.idx.generic_free() or "free"
        if releaser is None:
            return
        if releaser == "free":
            self.f.include("<stdlib.h>")
        self.f.cleanup.append(f"if ({v} != NULL) {releaser}({v});")

    def emit(self, plan: CallPlan, into: list[str], result: str | None = None) -> str | None:
        """Write the call into ``into``; returns the variable holding its result, if any.

        ``result`` names the variable for the return value (declared here); None keeps
        the result only when it must be released.
        """
        fn = plan.fn
        ret = fn.return_type
        owned = self.idx.returns_owned(fn)
        rkey = self.idx.type_key(ret)
        stmts: list[str] = []
        var = None
        if cdecl.is_void(ret):
            stmts.append(f"{plan.text};")
        else:
            var = self.var(
                ret,
                result or ("rc" if not cdecl.is_pointer(ret) else "result"),
                "NULL" if cdecl.is_pointer(ret) else "0",
            )
            stmts.append(f"{var} = {plan.text};")
            if owned and rkey:
                dtor = self.idx.destructor(rkey, fn.name)
                if not dtor and self.strict_release:
                    raise Unsupported(f"no destructor for the {rkey} {fn.name} returns")
                release = f"{dtor}({var})" if dtor else f"free({var})"
                self.f.cleanup.append(f"if ({var} != NULL) {release};")
                if not dtor:
                    self.f.notes.append(f"no destructor for {rkey} in the API: freed with free()")
            elif owned:
                free_fn = self.idx.documented_releaser(fn) or self.idx.free_function() or "free"
                self.f.cleanup.append(f"if ({var} != NULL) {free_fn}({var});")
            if not cdecl.is_pointer(ret) and not rkey:
                stmts.append(f"(void){var};")
        ok = None
        for release, when in plan.consumed:
            if when == "always" or var is None:
                stmts.append(release)
            else:
                ok = ok or success_test(fn.name, ret, var, cdecl.is_bool(ret), cdecl.is_pointer(ret))
                stmts.append(f"if ({ok}) {release}")
        stmts.extend(a.replace("{result}", var or "0") for a in plan.after if a)
        if plan.guards:
            into.append(f"if ({' && '.join(plan.guards)}) {{")
            into.extend("  " + s for s in stmts)
            into.append("}")
        else:
            into.extend(stmts)
        return var
