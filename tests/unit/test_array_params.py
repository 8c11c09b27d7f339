"""A parameter declared with a bound (``const unsigned char input[16]``) keeps it when read from a prompt.

The offline model reads the API from the prompt's prototypes. It used to turn every array
parameter into a pointer, so an improvement that called ``blk_decrypt(ctx, input[16],
output[16])`` (an invented API) on a short fuzz input passed a copy of the input as it was: the
cipher read 16 bytes past its end (a heap overflow, judged misuse, on a development-set
library). With the bound kept, the block copies at most 16 bytes into a zeroed 16-byte array.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness
from agents.offline.synth import default_skeleton, write_harness

API = parse_prototypes("""
int blk_decode_text(const char *text, size_t len);
void blk_init(blk_ctx *ctx);
void blk_free(blk_ctx *ctx);
int blk_decrypt(blk_ctx *ctx, const unsigned char input[16], unsigned char output[16]);
int blk_names(const char *names[], int count);
""")
BY = {f.name: f for f in API}


def test_a_plain_bound_is_kept_as_clang_spells_it_and_other_arrays_are_pointers() -> None:
    assert [p.type for p in BY["blk_decrypt"].params[1:]] == ["const unsigned char[16]", "unsigned char[16]"]
    assert BY["blk_decrypt"].prototype() == (
        "int blk_decrypt(blk_ctx *ctx, const unsigned char input[16], unsigned char output[16]);")
    assert BY["blk_names"].params[0].type == "const char **"


def test_an_improvement_reads_no_more_of_the_input_than_the_bound() -> None:
    target = BY["blk_decode_text"]
    analysis = analyze_function(target, API)
    first = write_harness(target, API, ["blk.h"], analysis.archetype, default_skeleton(analysis.archetype),
                          rules=analysis.rules).code
    made = improve_harness(first, target, API, ["blk_decrypt"])
    assert made.directions == ["call blk_decrypt on a new blk_ctx"]
    block = made.code[made.code.index("LF improve: call blk_decrypt"):]
    call = re.search(r"blk_decrypt\(&\w+, (\w+), (\w+)\);", block)
    assert call, block
    arr = call.group(1)
    assert re.search(rf"unsigned char {arr}\[16\];", made.code)
    assert f"memcpy({arr}, data, size < sizeof {arr} ? size : sizeof {arr});" in block
