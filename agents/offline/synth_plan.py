"""Type-driven argument construction: turn a prototype into a call built from the fuzz input.

The :class:`Planner` writes into a :class:`~agents.offline.synth_code.Frag`: declarations,
option reads, setup with failure jumps, the call, and cleanup of everything it acquired.
Library objects come from :mod:`agents.offline.synth_objects`.
"""

from __future__ import annotations

import re

from agents.offline import ckinds, synth_args
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_code import Frag
from agents.offline.synth_encoded import encode_input, encoder_for
from agents.offline.synth_inplace import in_place, in_place_slot
from agents.offline.synth_kinds import Call, build_argument
from agents.offline.synth_knowledge import success_test
from agents.offline.synth_outs import returns_list_node
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_staging import stage_input, staging_getter
from agents.offline.synth_types import EXPANDS, MAX_OUT, SHRINKS, CallPlan, Obj, Role, Unsupported, decl_type
from fuzzkit.api import FunctionDecl

# Room after a copy of the input handed to a call that reads a fixed amount it is never told.
UNSIZED_ROOM = 65536


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
        self._copies: dict[str, str] = {}  # helper -> variable of the payload's heap copy
        self.instances: dict[str, str] = {}  # type -> variable holding the library's own object
        self.making: list[str] = []  # the object types being built, outermost first
        self.c_strings: set[str] = set()  # params that must get a NUL-terminated string
        self.fed = False  # whether some call receives the fuzz input
        self.claimed = 0  # how many calls being planned take the fuzz input (outermost first)
        # Optional code (a follow-up block) is dropped rather than free() an object whose
        # destructor is unknown: free() leaks what the object holds, and may not be its releaser.
        self.strict_release = False
        # Object types whose input/output the target itself sets: no automatic feeding.
        self.configuring: set[str] = set()
        # Library objects planned calls hand back through a `T **` parameter (origin = callee).
        self.produced: list[Obj] = []

    @property
    def depth(self) -> int:
        """How deep object building is nested."""
        return len(self.making)

    def note_made(self, fn: FunctionDecl, r: Role, var: str) -> None:
        """Record the library object ``fn`` hands back in ``var`` through the ``T **`` of ``r``."""
        key = r.type_key or self.idx.type_key(ckinds.pointee(r.param.type))
        if key:
            self.produced.append(Obj(key, var, var, owned=True, origin=fn.name))

    # ----- small builders -----
    def var(self, ctype: str, base: str, init: str = "0", hoist: bool = False) -> str:
        """Declare a local of ``ctype`` (top-level const dropped) and return its name."""
        name = self.f.name(base)
        ctype = decl_type(ctype)
        sep = "" if ctype.endswith("*") else " "
        scalar = ckinds.is_integer(ctype) or ckinds.is_float(ctype) or ckinds.is_enum_like(ctype)
        if init == "0" and not (scalar or ckinds.is_pointer(ctype) or self.idx.type_key(ctype)):
            # A struct returned by value (or an unknown typedef): zero it instead.
            target = self.f.hoist if hoist else self.f.decls
            target += [f"{ctype}{sep}{name};", f"memset(&{name}, 0, sizeof {name});"]
            self.f.include("<string.h>")
            return name
        (self.f.hoist if hoist else self.f.decls).append(f"{ctype}{sep}{name} = {init};")
        return name

    def payload_text(self, wide: bool = False) -> str:
        """A NUL-terminated heap copy of the payload (made once).

        ``wide``: ended by four zero bytes instead, for text of 16- or 32-bit units.
        """
        helper, base = ("wstrndup", "wide_text") if wide else ("strndup", "text")
        if helper not in self._copies:
            self.f.need(helper)
            v = self._copies[helper] = self.var("char *", base, "NULL")
            self.f.setup.append(f"{v} = lf_{helper}(data, size);")
            self.f.setup.append(f"if ({v} == NULL) {self.f.fail()}")
            self.f.cleanup.append(f"free({v});")
        return self._copies[helper]

    def payload_bytes(self, ctype: str, sized: bool = True) -> str:
        """The payload for a buffer parameter of ``ctype``: ``data``, or a writable copy.

        libFuzzer's input is const: a buffer the function may write into (an output buffer,
        a buffer edited in place) gets a copy, or the library overwrites the input. A writable
        buffer the call takes no length for (``decode(st, byte *frame, sample *pcm)`` reads a
        frame of its own fixed size) gets a zeroed copy with :data:`UNSIZED_ROOM` bytes after it.
        """
        writable = ckinds.is_pointer(ctype) and not ckinds.is_const_target(ctype)
        if writable and not sized:
            if "padded" not in self._copies:
                v = self._copies["padded"] = self.var("uint8_t *", "frame", "NULL")
                self.f.setup.append(f"{v} = (uint8_t *)calloc(1, size + {UNSIZED_ROOM});")
                self.f.setup.append(f"if ({v} == NULL) {self.f.fail()}")
                self.f.setup.append(f"if (size > 0) memcpy({v}, data, size);")
                self.f.cleanup.append(f"free({v});")
                self.f.include("<stdlib.h>", "<string.h>")
            return self._copies["padded"]
        return self.payload_text() if writable else "data"

    def key_text(self, base: str, max_len: int = 16, share: bool = False, optional: bool = False) -> str:
        """A short NUL-terminated string taken from the option end of the input.

        ``share``: up to all of what is left instead (an option byte says how much), for a
        second input the library parses as fully as the payload (a pattern to match with).
        ``optional``: the documentation lets the argument be NULL: an option bit leaves it out.
        """
        self.f.need("take_part" if share else "take_str")
        name = self.var("char *", base, "NULL")
        taken = f"lf_take_part(&{self.f.cursor})" if share else f"lf_take_str(&{self.f.cursor}, {max_len})"
        if optional:
            taken = f"(lf_take_byte(&{self.f.cursor}) & 1u) ? NULL : {taken}"
        self.f.opts.append(f"{name} = {taken};")
        if not optional:
            self.f.setup.append(f"if ({name} == NULL) {self.f.fail()}")
        self.f.cleanup.append(f"free({name});")
        return name

    def option(self, role: Role) -> str:
        """An option variable for an int/bool/enum/float role."""
        ctype = decl_type(role.param.type)
        if role.kind == "float" and role.choices:  # a bounded setting (a codec's quality)
            name = self.var(ctype, role.param.name)
            self.f.opts.append(f"{name} = ({ctype}){self.f.take_int(role.choices)};")
            return name
        if role.kind == "float":
            self.f.need("take_double")
            name = self.var(ctype, role.param.name)
            self.f.opts.append(f"{name} = ({ctype})lf_take_double(&{self.f.cursor});")
            return name
        name = self.var(ctype, role.param.name, f"({ctype})0" if role.kind == "enum" else "0")
        if role.flag_mask:  # any subset of the bits documented for this function
            self.f.need("take_bits")
            self.f.opts.append(f"{name} = ({ctype})lf_take_bits(&{self.f.cursor}, {role.flag_mask:#x}u);")
            return name
        self.f.opts.append(f"{name} = ({ctype}){self.f.take_int(role.choices or (0, 1))};")
        if role.high_flags:  # one of the header's higher flags (or, half the time, none) on top
            # at least three values: two would read as a range (0..flag), not as a choice
            picks = (0,) * max(len(role.high_flags), 2) + role.high_flags
            self.f.opts.append(f"{name} |= ({ctype}){self.f.take_int(picks)};")
        if role.clear_bits:  # never the flag that tells the library to trust the input
            self.f.opts.append(f"{name} &= ({ctype})~{role.clear_bits}u;")
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
        bits = ckinds.integer_bits(ctype)
        if bits < 32:
            limit = (1 << (bits - (0 if ckinds.is_unsigned(ctype) else 1))) - 1
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
        call = Call(self, fn, rs, {}, CallPlan(fn, ""), payload_slot(rs) if payload else None, payload)
        # A parser that reads from its own buffer: the input is staged there, its length given.
        staged = staging_getter(self.idx, fn) if payload and call.main is None else None
        packet = in_place_slot(self.idx, fn, rs) if payload and call.main is None and staged is None else None
        if packet is not None and packet not in bind:
            in_place(call, packet)
        # Bytes the library takes without a length: what its own encoder wrote, never raw input.
        slot = payload_slot(rs) if call.main is None else call.main
        encoded = encoder_for(self.idx, fn, slot, rs) if slot not in bind and self.depth < 2 else None
        if encoded is not None and slot is not None:
            encode_input(call, slot, *encoded)
        claims = int(call.main is not None or packet is not None)  # its objects are not built from the input
        self.claimed += claims
        try:
            for r in rs:
                if staged is not None and r.index == staged[1] and r.index not in bind:
                    continue
                if r.index in bind:
                    call.args[r.index] = bind[r.index]
                elif r.index in call.args:
                    continue
                elif r.kind == "unsupported":
                    raise Unsupported(f"{fn.name}: cannot build a {r.param.type} argument")
                else:
                    build_argument(call, r)
        finally:
            self.claimed -= claims
        if staged is not None:
            stage_input(call, *staged)
        ordered = [call.args.get(i, "0") for i in range(len(fn.params))]
        call.plan.text = f"{fn.name}({', '.join(ordered)})"
        self.f.calls.append(fn.name)
        return call.plan

    def emit(self, plan: CallPlan, into: list[str], result: str | None = None) -> str | None:
        """Write the call into ``into``; returns the variable holding its result, if any.

        ``result`` names the variable for the return value (declared here); None keeps
        the result only when it must be released.
        """
        fn = plan.fn
        ret = fn.return_type
        owned = self.idx.returns_owned(fn) and not returns_list_node(fn)  # the list holds the node
        rkey = self.idx.type_key(ret)
        stmts: list[str] = []
        var = None
        if ckinds.is_void(ret):
            stmts.append(f"{plan.text};")
        else:
            var = self.var(
                ret,
                result or ("rc" if not ckinds.is_pointer(ret) else "result"),
                "NULL" if ckinds.is_pointer(ret) else "0",
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
            if not ckinds.is_pointer(ret) and not rkey:
                stmts.append(f"(void){var};")
        ok = None
        for release, when in plan.consumed:
            if when == "always" or var is None:
                stmts.append(release)
            else:
                ok = ok or success_test(fn.name, ret, var, ckinds.is_bool(ret), ckinds.is_pointer(ret))
                stmts.append(f"if ({ok}) {release}")
        stmts.extend(a.replace("{result}", var or "0") for a in plan.after if a)
        if plan.guards:
            into.append(f"if ({' && '.join(plan.guards)}) {{")
            into.extend("  " + s for s in stmts)
            into.append("}")
        else:
            into.extend(stmts)
        return var
