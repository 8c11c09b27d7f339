"""A codec header that names no parameter and never writes ``const``.

``int vx_decode(vx, vx_byte *, vx_sample *)`` reads one frame of 33 bytes and writes 160
samples; ``vx_encode(vx, vx_sample *, vx_byte *)`` the reverse. Nothing says which buffer is the
input or how long either is. The input comes first (a header without ``const`` still lists it
first), a pointer to ``short`` samples is an array and not a value handed back (nor the frame's
length), and a call told no length gets a copy of the input with room after it. The offline
engine's first drafts of both build and run clean. Real clang build and libFuzzer runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.toolchain.conftest import assert_runs_clean, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

HEADER = """\
#ifndef VX_H
#define VX_H
typedef short vx_sample;
typedef unsigned char vx_byte;
typedef struct vx_state *vx;
extern vx vx_create(void);
extern void vx_destroy(vx);
extern int vx_decode(vx, vx_byte *, vx_sample *);
extern void vx_encode(vx, vx_sample *, vx_byte *);
#endif
"""

SOURCE = """\
#include "vx.h"
#include <stdlib.h>
struct vx_state { int last; };
vx vx_create(void) { return calloc(1, sizeof(struct vx_state)); }
void vx_destroy(vx s) { free(s); }
int vx_decode(vx s, vx_byte *frame, vx_sample *pcm) {
  if ((frame[0] >> 4) != 0xD) return -1;
  for (int i = 0; i < 160; i++) pcm[i] = (vx_sample)(frame[1 + i % 32] * 7 + s->last);
  s->last = pcm[159];
  return 0;
}
void vx_encode(vx s, vx_sample *pcm, vx_byte *frame) {
  frame[0] = 0xD0;
  for (int i = 0; i < 160; i++) frame[1 + i % 32] ^= (vx_byte)(pcm[i] + s->last);
}
"""


@pytest.mark.parametrize("name", ["vx_decode", "vx_encode"])
def test_first_drafts_pass_the_input_first_and_give_frames_room(
    tmp_path: Path, cache: Path, name: str
) -> None:
    lib = tiny_library(tmp_path / "vx", "vx", HEADER, SOURCE, cache)
    code = offline_draft(lib, header_facts(lib), name)
    assert "&" not in code[code.index(f"{name}("):].split(";")[0], code  # no single value for samples
    assert_runs_clean(code, lib, tmp_path / "run")
