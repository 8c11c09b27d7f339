"""Bytes a function takes with no length get room for the fixed length it reads.

``tag_write(ctx, const unsigned char *tag, data, len)`` (an invented API shaped like a chunk
writer) reads a 4-byte tag. The synthesizer used to give it a short string from the input (0 to
16 bytes and a NUL), so the callee read past the harness's own buffer, and the crash was
reported as a library bug. Text (``const char *``) keeps its string: a read past a NUL is the
library's.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness

API = parse_prototypes("""
tag_ctx *tag_new(void);
void tag_free(tag_ctx *ctx);
int tag_write(tag_ctx *ctx, const unsigned char *tag, const unsigned char *data, size_t len);
int tag_label(tag_ctx *ctx, const char *label, const unsigned char *data, size_t len);
""")
BY = {f.name: f for f in API}


def _draft(name: str) -> str:
    target = BY[name]
    analysis = analyze_function(target, API)
    return write_harness(target, API, ["tag.h"], analysis.archetype, default_skeleton(analysis.archetype),
                         rules=analysis.rules).code


def test_an_unsized_byte_buffer_is_a_zeroed_buffer_with_room() -> None:
    code = _draft("tag_write")
    call = re.search(r"tag_write\([^;]*\);", code)
    assert call, code
    tag = call[0].split(",")[1].strip().rsplit(")", 1)[-1]
    assert re.search(rf"unsigned char {tag}\[64\];", code), code
    assert "lf_take_str" not in code, code


def test_text_keeps_its_terminated_string() -> None:
    assert "lf_take_str" in _draft("tag_label")
