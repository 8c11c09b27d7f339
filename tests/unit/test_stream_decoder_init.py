# ruff: noqa: E501
"""A stream struct made ready to decode by a function named for a decoder, not an init verb.

From an unseen compression library (invented names here): ``qs_code(qs_stream *, qs_action)``
ran on a zeroed stream nobody had set up (0.2% of the library's lines), with no ``qs_end``; its
set-up functions are named ``qs_auto_decoder``, ``qs_stream_decoder``... A memory limit drawn from
0..255 bytes stopped every input at once.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = parse_prototypes("""
typedef unsigned long size_t;
qs_ret qs_code(qs_stream *strm, qs_action action);
void qs_end(qs_stream *strm);
qs_ret qs_auto_decoder(qs_stream *strm, uint64_t memlimit, uint32_t flags);
qs_ret qs_raw_buffer_decode(const unsigned char *in, size_t *in_pos, size_t in_size, unsigned char *out, size_t *out_pos, size_t out_size);
qs_ret qs_easy_encoder(qs_stream *strm, uint32_t preset, int check);
""")
TYPES = render_types("""```c
typedef struct { const uint8_t *next_in; size_t avail_in; uint64_t total_in; uint8_t *next_out; size_t avail_out; uint64_t total_out; } qs_stream;
typedef enum { QS_OK = 0, QS_STREAM_END = 1, QS_DATA_ERROR = 9 } qs_ret;
typedef enum { QS_RUN = 0, QS_FINISH = 3 } qs_action;
```
Release functions:
- qs_end releases qs_stream * (parameter type)
""")


def test_the_stream_is_set_up_to_decode_fed_in_chunks_and_ended() -> None:
    target = next(d for d in API if d.name == "qs_code")
    with using(read_types(TYPES)):
        assert ApiIndex(API).lifecycle("qs_stream").init == ["qs_auto_decoder"]  # not the encoder
        arche = analyze_function(target, API).archetype
        code = write_harness(target, API, ["qs.h"], arche, default_skeleton(arche)).code
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    assert re.search(r"qs_auto_decoder\(&(\w+), memlimit, flags\)", body), body
    assert "next_in = (const uint8_t *)lf_chunk;" in body and "qs_code(&" in body
    assert re.search(r"if \(\w+_ready\) qs_end\(&\w+\);", body), body
    memlimit = re.search(r"static const int (\w+)\[\] = \{67108864, 268435456, 1073741824\};", body)
    assert memlimit and f"memlimit = (uint64_t)lf_take_pick(&lf_in, {memlimit.group(1)}" in body, body
