"""Pixel buffers: bytes with no length of their own, measured by a width, a height and a stride.

``encode_rgb(const uint8_t *rgb, int width, int height, int stride, ...)``, or
``picture_import(struct picture *pic, const uint8_t *rgb, int stride)`` where the picture's
``width``/``height`` fields say how much is read: the library reads ``height`` rows of
``width`` pixels, ``stride`` bytes apart, and never sees how long the buffer is. Dimensions
drawn like other options (up to 255 each, and 4 bytes per pixel) make every input read past the
payload. Here the width and height come from option bytes (1..64), each row gets room for 4
bytes per pixel (``stride = width * 4``), and the height shrinks to the rows the payload holds;
an input too short for one row is skipped.

The names are general C vocabulary (``width``, ``height``, ``stride``/``pitch``), not a
library's: the rule applies to whatever header declares them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import cdecl, ckinds, type_table
from agents.offline.synth_types import Role, decl_cast

if TYPE_CHECKING:
    from agents.offline.synth_api import ApiIndex
    from agents.offline.synth_kinds import Call

WIDTH = re.compile(r"(^|_)(w|width|cols|columns)$|Width$", re.I)
HEIGHT = re.compile(r"(^|_)(h|height|rows)$|Height$", re.I)
# A raster's requested size (`rwidth`, `rheight`): the image's dimensions as the caller asks them.
RASTER_W = re.compile(r"(^|_)r?(w|width|cols|columns)$|Width$", re.I)
RASTER_H = re.compile(r"(^|_)r?(h|height|rows)$|Height$", re.I)
STRIDE = re.compile(r"(stride|pitch|row_?bytes|line_?size|bytes_per_line)", re.I)
BYTES_PER_PIXEL = 4  # room for the widest 8-bit-per-channel layout
MAX_SIDE = 64


def _integer(r: Role | None) -> bool:
    return r is not None and r.kind in ("int", "enum", "len") and ckinds.is_integer(r.param.type)


def dimension_fields(idx: ApiIndex, type_key: str | None) -> tuple[str, str] | None:
    """The record's integer width and height fields, if it has exactly one of each."""
    rec = type_table.active().record(type_key or "")
    if rec is None or rec.opaque:
        return None
    ints = [name for name, ctype in rec.fields if ckinds.is_integer(ctype) and "*" not in ctype]
    widths = [n for n in ints if WIDTH.search(n)]
    heights = [n for n in ints if HEIGHT.search(n)]
    return (widths[0], heights[0]) if len(widths) == 1 and len(heights) == 1 else None


def mark_pixels(out: list[Role | None], idx: ApiIndex) -> None:
    """Give a lengthless byte buffer and its dimensions their roles, when the shape is there."""
    buffers = [r for r in out if r is not None and r.kind in ("text", "bytes") and r.pair is None
               and ckinds.is_bytes(r.param.type) and ckinds.is_const_target(r.param.type)
               and not ckinds.is_string(r.param.type)]  # `const char *` is text, read to its NUL
    if len(buffers) != 1:
        return
    buf = buffers[0]
    ints = [r for r in out if _integer(r)]
    widths = [r for r in ints if r is not None and WIDTH.search(r.param.name)]
    heights = [r for r in ints if r is not None and HEIGHT.search(r.param.name)]
    strides = [r for r in ints if r is not None and STRIDE.search(r.param.name)]
    holder = next((r for r in out if r is not None and r.type_key and r.kind in ("object", "handle")
                   and dimension_fields(idx, r.type_key)), None)
    if len(widths) == 1 and len(heights) == 1 and len(strides) <= 1:
        out[buf.index] = Role("pixels", buf.index, buf.param)
        out[widths[0].index] = Role("dim_w", widths[0].index, widths[0].param)
        out[heights[0].index] = Role("dim_h", heights[0].index, heights[0].param)
    elif holder is not None and len(strides) == 1 and not widths and not heights:
        out[buf.index] = Role("pixels", buf.index, buf.param, pair=holder.index, type_key=holder.type_key)
    else:
        return
    for s in strides:
        out[s.index] = Role("dim_stride", s.index, s.param)


def mark_raster(out: list[Role | None], idx: ApiIndex) -> None:
    """An output array of pixels sized by a width and a height the call is given, and no length.

    ``read_rgba_image(img, uint32_t rwidth, uint32_t rheight, uint32_t *raster, ...)``: the
    library writes ``rwidth * rheight`` elements into ``raster`` (a single ``uint32_t`` there is a
    stack overflow in the harness). The harness allocates that many for dimensions it draws small.
    """
    del idx
    outs = [r for r in out if r is not None and r.pair is None and r.kind in ("out_scalar", "outbuf")
            and ckinds.pointer_depth(r.param.type) == 1 and not ckinds.is_const_target(r.param.type)
            and (ckinds.is_integer(ckinds.pointee(r.param.type)) or ckinds.is_bytes(r.param.type))]
    ints = [r for r in out if _integer(r)]
    widths = [r for r in ints if r is not None and RASTER_W.search(r.param.name)]
    heights = [r for r in ints if r is not None and RASTER_H.search(r.param.name)]
    if len(outs) != 1 or len(widths) != 1 or len(heights) != 1:
        return
    raster = outs[0]
    out[raster.index] = Role("raster", raster.index, raster.param)
    out[widths[0].index] = Role("raster_w", widths[0].index, widths[0].param)
    out[heights[0].index] = Role("raster_h", heights[0].index, heights[0].param)


def build_raster(c: Call, r: Role) -> None:
    """The argument of a ``raster``, ``raster_w`` or ``raster_h`` role: small dimensions, room for all."""
    if c.dims is None:
        pl, f = c.pl, c.pl.f
        w, h = pl.var("int", "lf_width"), pl.var("int", "lf_height")
        buf = pl.var("void *", "lf_raster", "NULL")
        raster = next(x for x in c.rs if x.kind == "raster")
        element = cdecl.normalize_type(ckinds.pointee(raster.param.type))
        f.opts.append(f"{w} = {f.take_int((1, MAX_SIDE))};")
        f.opts.append(f"{h} = {f.take_int((1, MAX_SIDE))};")
        f.setup.append(f"{buf} = calloc((size_t){w} * (size_t){h}, sizeof({element}));")
        f.setup.append(f"if ({buf} == NULL) {f.fail()}")
        f.cleanup.append(f"free({buf});")
        f.include("<stdlib.h>")
        c.dims = (w, h, buf)
    w, h, buf = c.dims
    c.args[r.index] = f"({decl_cast(r.param.type)})" + {"raster": buf, "raster_w": w, "raster_h": h}[r.kind]


def _dims(c: Call) -> tuple[str, str, str]:
    """The call's width, height and stride variables (made once per call)."""
    if c.dims is None:
        pl, f = c.pl, c.pl.f
        w, h, s = pl.var("int", "lf_width"), pl.var("int", "lf_height"), pl.var("int", "lf_stride")
        f.opts.append(f"{w} = {f.take_int((1, MAX_SIDE))};")
        f.opts.append(f"{h} = {f.take_int((1, MAX_SIDE))};")
        f.setup.append(f"{s} = {w} * {BYTES_PER_PIXEL}; /* room for {BYTES_PER_PIXEL} bytes per pixel */")
        f.setup.append(f"if ((size_t){s} * (size_t){h} > size) {h} = (int)(size / (size_t){s});")
        f.setup.append(f"if ({h} <= 0) {f.fail()} /* not one row of pixels */")
        c.dims = (w, h, s)
    return c.dims


def build(c: Call, r: Role) -> None:
    """The argument of a ``pixels``, ``dim_w``, ``dim_h`` or ``dim_stride`` role."""
    w, h, s = _dims(c)
    cast = f"({decl_cast(r.param.type)})"
    if r.kind == "pixels":
        c.pl.fed = True
        c.args[r.index] = f"{cast}data"
        fields = dimension_fields(c.pl.idx, r.type_key)
        holder = c.args.get(r.pair) if r.pair is not None else None
        if fields and holder:
            c.pl.f.setup.append(f"({holder})->{fields[0]} = {w};")
            c.pl.f.setup.append(f"({holder})->{fields[1]} = {h};")
    else:
        c.args[r.index] = cast + {"dim_w": w, "dim_h": h, "dim_stride": s}[r.kind]
