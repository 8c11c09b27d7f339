"""One argument builder per parameter role kind: the planner's dispatch table.

:meth:`agents.offline.synth_plan.Planner.plan` hands each parameter to the builder of its kind
(:data:`BUILDERS`), which fills ``call.args`` (and a paired length) and writes into the plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agents.offline import cdecl, ckinds, synth_args, synth_pixels, type_table
from agents.offline.synth_arrays import fixed_array
from agents.offline.synth_encoded import object_array
from agents.offline.synth_init import input_long_array
from agents.offline.synth_io import io_arg
from agents.offline.synth_knowledge import retained_strings, success_test
from agents.offline.synth_lengths import sentinel_length, unnamed, wide_elements
from agents.offline.synth_objects import build_object
from agents.offline.synth_outs import release_out
from agents.offline.synth_ranges import cursor, position
from agents.offline.synth_roles import payload_slot
from agents.offline.synth_types import WORKSPACE, CallPlan, Role, decl_cast, decl_type
from agents.offline.synth_usage_fields import set_usage_fields
from fuzzkit.api import FunctionDecl

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner

_OPTIONAL_TEXT = re.compile(r"(encoding|charset|locale)", re.I)
_OFFSET = re.compile(r"^(start_?)?(offset|off|pos|position)$|^start$", re.I)
_SCALARS = ("int", "bool", "enum", "float")
_OBJECTS = ("object", "handle", "consumed", "fresh", "out_object", "child")
_IO = ("fd", "path", "mode", "file", "callback", "userdata", "format")


@dataclass
class Call:
    """One call being planned: its roles, the arguments so far and the plan they go into."""

    pl: Planner
    fn: FunctionDecl
    rs: list[Role]
    args: dict[int, str]
    plan: CallPlan
    main: int | None  # the parameter that gets the fuzz input, if any
    payload: bool
    dims: tuple[str, str, str] | None = None  # width, height, stride of a pixel buffer

    def cast(self, r: Role) -> str:
        """The C cast to the parameter's type (``(const char *)``)."""
        return f"({decl_cast(r.param.type)})"

    def pair_kind(self, r: Role) -> str | None:
        """The role kind of the parameter paired with ``r`` (its length), if any."""
        return self.rs[r.pair].kind if r.pair is not None else None

    def set_pair(self, r: Role, value: str) -> None:
        """Set the argument of the parameter paired with ``r``."""
        assert r.pair is not None
        self.args[r.pair] = value

    def pair_length(self, r: Role, expr: str) -> str:
        """``expr`` cast (and clamped) to the type of the length paired with ``r``."""
        assert r.pair is not None
        return self.pl.length(self.rs[r.pair].param.type, expr)


def _text_or_bytes(c: Call, r: Role) -> None:
    if r.kind == "text" and retained_strings(c.fn.name):
        c.args[r.index] = f"{c.cast(r)}{synth_args.literal_key(c.pl)}"
    elif r.index == c.main and sentinel_length(c.rs, r):
        # `(const char *s, int len)`: a length <= 0 often means "up to the NUL", so the
        # text gets its terminator (an empty input would else be read by strlen).
        c.pl.fed = True
        c.args[r.index] = f"{c.cast(r)}{c.pl.payload_text()}"
        c.set_pair(r, c.pair_length(r, "size"))
    elif r.index == c.main:
        c.pl.fed = True
        if r.kind == "bytes" and r.param.name not in c.pl.c_strings:
            _payload_bytes(c, r)
        else:
            _payload_text(c, r)
        copy = c.args[r.index].rsplit(")", 1)[-1]  # the argument without its cast: `data` or a copy
        if c.fn.name in type_table.active().adopts and copy != "data":
            # `set_malloc_string(p, str, len)`: on success the copy is the library's, freed with `p`
            ret, void = c.fn.return_type, ckinds.is_void(c.fn.return_type)
            ok = "1" if void else success_test(c.fn.name, ret, "{result}", ckinds.is_bool(ret), False)
            c.plan.after.append(f"if ({ok}) {copy} = NULL;")
    elif r.kind == "text" and _OPTIONAL_TEXT.search(r.param.name) and r.pair is None:
        c.args[r.index] = "NULL"  # an optional setting (an encoding name): its default
    else:
        _key_text(c, r)


def _payload_bytes(c: Call, r: Role) -> None:
    buf, pair = c.pl.payload_bytes(r.param.type, sized=r.pair is not None), c.pair_kind(r)
    c.args[r.index] = f"{c.cast(r)}{buf}"
    if pair == "end_ptr":
        c.set_pair(r, f"{c.cast(r)}{buf} + size")
    elif pair == "len_bits":
        c.set_pair(r, c.pair_length(r, "size * 8"))
    elif pair == "len":
        c.set_pair(r, c.pair_length(r, _elements(r.param.type)))
    elif r.pair is not None:  # pointer to the input length
        inner = decl_type(ckinds.pointee(c.rs[r.pair].param.type))
        lp = c.pl.var(inner, "in_len")
        c.pl.f.setup.append(f"{lp} = ({inner})size;")
        c.set_pair(r, f"&{lp}")


def _elements(ctype: str) -> str:
    """The input's length in the buffer's elements: ``size``, or ``size / sizeof(T)`` for wider ones."""
    return "size" if not wide_elements(ctype) else f"size / sizeof({decl_type(ckinds.pointee(ctype))})"


def _payload_text(c: Call, r: Role) -> None:
    # Text whose units are not bytes (`const void *sql` of a UTF-16 variant) ends at a zero unit.
    unit = ckinds.canonical_base(r.param.type)
    wide = r.pair is None and unit not in cdecl.BYTE_TYPES - {"void"}
    text = c.pl.payload_text(wide)
    c.args[r.index] = f"{c.cast(r)}{text}"
    if c.pair_kind(r) == "end_ptr":
        c.set_pair(r, f"{c.cast(r)}{text} + strlen({text})")
        c.pl.f.include("<string.h>")
    elif r.pair is not None:
        c.set_pair(r, c.pair_length(r, f"strlen({text})"))
        c.pl.f.include("<string.h>")


# The room an unsized byte buffer gets (a name or tag the callee reads a fixed length of).
UNSIZED_KEY = 64


def _key_text(c: Call, r: Role) -> None:
    if r.pair is None and not ckinds.is_string(r.param.type) and ckinds.is_bytes(r.param.type):
        _unsized_bytes(c, r)
        return
    own = not c.payload and r.pair is not None and r.index == payload_slot(c.rs)  # a pattern to match with
    optional = r.pair is None and r.param.name in type_table.active().optional.get(c.fn.name, ())
    key = c.pl.key_text(r.param.name, share=own, optional=optional)
    c.args[r.index] = f"{c.cast(r)}{key}"
    pair = c.pair_kind(r)
    if pair == "end_ptr":
        c.set_pair(r, f"{c.cast(r)}{key} + strlen({key})")
    elif pair == "len_bits":
        c.set_pair(r, c.pair_length(r, f"strlen({key}) * 8"))
    elif pair == "len":
        c.set_pair(r, c.pair_length(r, f"strlen({key})"))
    elif r.pair is not None:
        lp = c.pl.var(ckinds.pointee(c.rs[r.pair].param.type), "key_len")
        c.pl.f.setup.append(f"{lp} = strlen({key});")
        c.set_pair(r, f"&{lp}")
    c.pl.f.include("<string.h>")


def _unsized_bytes(c: Call, r: Role) -> None:
    """Bytes the callee takes with no length (``write_tag(p, const u8 *tag, data, len)``).

    It reads a length of its own (a 4-byte tag), so a short string from the input would be the
    harness's overread, not the library's: a zeroed buffer of :data:`UNSIZED_KEY` bytes, its
    first 16 taken from the input.
    """
    f = c.pl.f
    v = f.name(r.param.name or "tag")
    f.decls += [f"unsigned char {v}[{UNSIZED_KEY}];", f"memset({v}, 0, sizeof {v});"]
    f.need("input")
    f.opts.append(f"for (size_t lf_k = 0; lf_k < 16; lf_k++) {v}[lf_k] = lf_take_byte(&{f.cursor});")
    f.include("<string.h>")
    c.args[r.index] = f"{c.cast(r)}{v}"


def _outbuf(c: Call, r: Role) -> None:
    buf, cap = c.pl.out_buffer(c.fn)
    plan = c.plan
    c.args[r.index] = f"{c.cast(r)}{buf}"
    plan.out_buf, plan.out_len, plan.out_cap = buf, cap, cap
    plan.out_by_value = c.pair_kind(r) == "outlen"
    if r.pair is None:
        return
    pr = c.rs[r.pair]
    if pr.kind == "outlen_ptr":
        inner = decl_type(ckinds.pointee(pr.param.type))
        lv = c.pl.var(inner, "out_len")
        c.pl.f.setup.append(f"{lv} = ({inner}){cap};")
        c.set_pair(r, f"&{lv}")
        plan.out_len = lv
    else:
        c.set_pair(r, c.pl.length(pr.param.type, cap))


def _scalar(c: Call, r: Role) -> None:
    fixed = type_table.active().fixed_args.get(c.fn.name, {})
    if r.index in fixed:
        # The header's own wrappers pass this value (an ABI version, a size): it is a check.
        c.args[r.index] = f"{c.cast(r)}{fixed[r.index]}" if r.kind == "enum" else fixed[r.index]
    elif r.kind == "int" and 0 in c.args and (ident := synth_args.node_id(c.pl, c.fn, r, c.args[0])):
        c.args[r.index] = ident
    else:
        c.args[r.index] = c.pl.option(r)
        if _offset(c, r):
            # Where to start in the payload: inside it (past its end is one error path, taken
            # on almost every input otherwise).
            c.pl.f.setup.append(f"{c.args[r.index]} %= ({decl_type(r.param.type)})(size + 1);")


def _offset(c: Call, r: Role) -> bool:
    """An index into the payload: named so, or unnamed right after the payload's length, of its type."""
    main = c.rs[c.main] if c.payload and c.main is not None else None
    if r.kind != "int" or main is None or main.pair is None or r.index <= main.index:
        return False
    if not unnamed(r.param.name):
        return bool(_OFFSET.search(r.param.name))
    length = c.rs[main.pair].param.type
    return r.index == main.pair + 1 and cdecl.normalize_type(r.param.type) == cdecl.normalize_type(length)


def _zero_value(c: Call, r: Role) -> None:
    v = c.pl.f.name(r.param.name)
    c.pl.f.decls += [f"{decl_type(r.param.type)} {v};", f"memset(&{v}, 0, sizeof {v});"]
    c.pl.f.include("<string.h>")
    set_usage_fields(c.pl, r.type_key or c.pl.idx.type_key(r.param.type) or "", v)
    c.args[r.index] = v


def _out_scalar(c: Call, r: Role) -> None:
    v = c.pl.var(ckinds.pointee(r.param.type), r.param.name)
    c.plan.outs[r.index], c.args[r.index] = v, f"&{v}"


def _out_ptr(c: Call, r: Role) -> None:
    v = c.pl.var(ckinds.pointee(r.param.type), r.param.name, "NULL")
    c.plan.outs[r.index], c.args[r.index] = v, f"&{v}"
    release_out(c.pl, c.fn, r.param.type, v, r.param.name)
    c.pl.note_made(c.fn, r, v)


def _scratch(c: Call, r: Role) -> None:
    f = c.pl.f
    v = c.pl.var("uint8_t *", r.param.name, "NULL")
    # Room for one element per input byte too: the call may take it as many elements as
    # the length it is given for the input (arrays that share one length).
    inner = ckinds.pointee(r.param.type)
    elem = decl_type(inner) if ckinds.is_integer(inner) else "char"
    f.setup += [f"{v} = (uint8_t *)calloc(1, 65536 + size * sizeof({elem}));", f"if ({v} == NULL) {f.fail()}"]
    f.cleanup.append(f"free({v});")
    f.include("<stdlib.h>")
    c.args[r.index] = f"{c.cast(r)}{v}"


def _parallel(c: Call, r: Role) -> None:
    """A zeroed array the call reads beside the input, with as many elements as the input has bytes."""
    c.args[r.index] = input_long_array(c.pl, decl_type(ckinds.pointee(r.param.type)), r.param.name)


def _blob(c: Call, r: Role) -> None:
    """A buffer-and-length struct holding the payload (zeroed when another slot gets it)."""
    f = c.pl.f
    v = f.name(r.param.name or "input")
    f.decls += [f"{decl_type(ckinds.pointee(r.param.type))} {v};", f"memset(&{v}, 0, sizeof {v});"]
    f.include("<string.h>")
    fields = ckinds.blob_fields(r.type_key or "")
    rec = type_table.active().record(r.type_key or "")
    if r.index == c.main and fields and rec:
        types = dict(rec.fields)
        c.pl.fed = True
        f.setup.append(f"{v}.{fields[0]} = ({types[fields[0]]})data;")
        f.setup.append(f"{v}.{fields[1]} = ({types[fields[1]]})size;")
    c.args[r.index] = f"&{v}"


def _workspace(c: Call, r: Role) -> None:
    if r.pair is None:
        c.args[r.index] = "NULL"
        return
    ws = c.pl.f.name(r.param.name or "workspace")
    c.pl.f.decls.append(f"{decl_type(ckinds.pointee(r.param.type))} {ws}[{WORKSPACE}] = {{0}};")
    c.args[r.index] = ws
    c.set_pair(r, f"({decl_cast(c.rs[r.pair].param.type)}){WORKSPACE}")


def _array(c: Call, r: Role) -> None:
    pair = r.pair if r.pair is not None else r.index + 1
    c.args[r.index], c.args[pair] = synth_args.array(c.pl, r, c.rs)


def _fixed(value: Callable[[Call, Role], str]) -> Callable[[Call, Role], None]:
    def build(c: Call, r: Role) -> None:
        c.args[r.index] = value(c, r)
    return build


BUILDERS: dict[str, Callable[[Call, Role], None]] = {
    "text": _text_or_bytes,
    "bytes": _text_or_bytes,
    "outbuf": _outbuf,
    "unit": _fixed(lambda c, r: f"{c.cast(r)}1"),
    **dict.fromkeys(_SCALARS, _scalar),
    "zero_value": _zero_value,
    "version": _fixed(lambda c, r: synth_args.version_arg(c.pl, c.fn, r)),
    "struct_size": _fixed(lambda c, r: f"{c.cast(r)}sizeof({r.type_key})"),
    **dict.fromkeys(_OBJECTS, _fixed(lambda c, r: build_object(c.pl, c.fn, r, c.args, c.plan))),
    "out_scalar": _out_scalar,
    "out_ptr": _out_ptr,
    "object_array": object_array,
    "scratch": _scratch,
    "alloc": _fixed(lambda c, r: synth_args.alloc_for(c.pl, c.fn)),
    "blob": _blob,
    "workspace": _workspace,
    "array": _array, "strarray": _array, "parallel": _parallel,
    "pos_ptr": position, "cursor": cursor, "fixed_in": fixed_array, "fixed_out": fixed_array,
    **dict.fromkeys(_IO, _fixed(lambda c, r: io_arg(c.pl, c.fn, r, c.plan, feed=c.payload))),
    **dict.fromkeys(("pixels", "dim_w", "dim_h", "dim_stride"), synth_pixels.build),
    **dict.fromkeys(("raster", "raster_w", "raster_h"), synth_pixels.build_raster),
    "usage_constant": _fixed(lambda c, r: _usage_pick(c, r, _usage_known(c, r), "")),
}


# Kinds whose input-taken value stays possible beside the library's constants (an option word).
_USAGE_OFFERS = ("int", "enum", "bool")


def build_argument(c: Call, r: Role) -> None:
    """Fill ``c.args`` for ``r`` with the builder of its kind (a NULL for kinds without one).

    Where the library's own code passes named constants of its headers to an option value, an
    input byte may choose one of them instead of the value taken from the input (a
    ``usage_constant`` role, given where the constants replace a string or a version, always
    takes one of them).
    """
    known = _usage_known(c, r)
    setup = c.pl.idx.usage_setup.get(c.fn.name, {}).get(r.index)
    if setup and r.kind in (*_USAGE_OFFERS, "usage_constant") and r.index != c.main:
        c.args[r.index] = f"({decl_cast(r.param.type)}){setup}"  # as the target's usage makes it
        c.pl.f.notes.append(f"{c.fn.name}: {r.param.name or 'an argument'} is {setup}, as the library's "
                            f"own code sets up {c.pl.purpose}")
        return
    builder = BUILDERS.get(r.kind)
    if builder is None:
        c.args[r.index] = "NULL"
        return
    builder(c, r)
    fixed = r.index in type_table.active().fixed_args.get(c.fn.name, {})
    if known and r.kind in _USAGE_OFFERS and not fixed and re.fullmatch(r"\w+", c.args[r.index]):
        _usage_pick(c, r, known, c.args[r.index])


def _usage_known(c: Call, r: Role) -> list[str]:
    """The header constants the library's own code passes to ``r`` of the call's function."""
    return c.pl.idx.usage_constants.get(c.fn.name, {}).get(r.index, [])


def _usage_pick(c: Call, r: Role, known: list[str], var: str) -> str:
    """The library's constant for ``r``, or a variable an input byte sets to one of them.

    ``var``: an option variable already taken from the input, kept as one more choice.
    """
    c.pl.f.notes.append(f"{c.fn.name}: {r.param.name or f'argument {r.index + 1}'} from the library's own "
                        f"code ({', '.join(known)})")
    if len(known) == 1 and not var:
        return f"({decl_cast(r.param.type)}){known[0]}"
    f, ctype = c.pl.f, decl_type(r.param.type)
    if not var:
        var = c.pl.var(ctype, r.param.name or "constant")
        f.opts.append(f"{var} = ({ctype}){known[0]};")
    f.need("input")
    cases = " ".join(f"case {i}: {var} = ({ctype})({k}); break;" for i, k in enumerate(known))
    f.opts.append(f"switch (lf_take_byte(&{f.cursor}) % {len(known) + 1}u) {{ {cases} default: break; }}")
    return var
