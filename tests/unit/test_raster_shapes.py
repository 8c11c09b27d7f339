"""An output raster sized by the width and height the call is given, with no length of its own.

An invented image reader: ``img_read_rgba(img, uint32_t rwidth, uint32_t rheight, uint32_t
*raster, int orientation)`` writes ``rwidth * rheight`` pixels into ``raster``. A single
``uint32_t`` there overflows the harness's stack on every input; the draft allocates room for
the dimensions it draws (small ones), and frees it.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct img img;
img *img_open_memory(const unsigned char *data, size_t size);
void img_close(img *p);
int img_read_rgba(img *p, uint32_t rwidth, uint32_t rheight, uint32_t *raster, int orientation);
int img_get_pixel(img *p, uint32_t x, uint32_t y, uint32_t *value);
"""
TYPES = render_types("```c\ntypedef struct img img;\n```\nRelease functions:\n"
                     "- img_close releases img * (parameter type)\n")


def _draft(name: str) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == name)
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        return write_harness(target, decls, ["img.h"], arche, default_skeleton(arche)).code


def test_the_raster_has_room_for_the_drawn_width_times_height() -> None:
    code = _draft("img_read_rgba")
    alloc = re.search(r"(\w+) = calloc\(\(size_t\)(\w+) \* \(size_t\)(\w+), sizeof\(uint32_t\)\);", code)
    assert alloc, code
    buf, w, h = alloc.groups()
    call = rf"img_read_rgba\(\w+, \(uint32_t\){w}, \(uint32_t\){h}, \(uint32_t \*\){buf}, "
    assert re.search(call, code), code
    assert f"free({buf});" in code
    assert re.search(rf"{w} = lf_take_int\(&lf_in, 1, 64\);", code), code  # small, never 0


def test_one_value_out_is_not_a_raster() -> None:
    code = _draft("img_get_pixel")  # x and y are a position, `value` one pixel
    assert "calloc((size_t)" not in code, code
