# ruff: noqa: E501
"""What the library keeps, the harness never frees: documented, or handed back by an object's getter.

``an`` (written here) decodes an animation. ``an_dec_next`` hands back the decoder's own frame
buffer through ``uint8_t **``, and its comment says the buffer "is valid only until the next
call"; ``an_dec_get_canvas`` hands back another of the decoder's buffers with no word on
ownership. A harness that frees either frees the decoder's memory, and the decoder frees it
again (ASan: double free): an improvement of a development-set library's animation decoder
crashed this way, round after round. The header's words are read at prepare time (the Types
section lists the functions whose results the library keeps); a getter on an object hands back
the object's buffer, as the engine already assumes for a returned one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.improver import improve_harness
from agents.offline.type_table import read_types, using
from fuzzkit.headers import parse_header
from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import assert_runs_clean, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

AN_HEADER = """\
#ifndef AN_H
#define AN_H
#include <stddef.h>
#include <stdint.h>
typedef struct an_dec an_dec;
/* Makes a decoder for the animation in data; NULL on error. */
an_dec *an_dec_new(const uint8_t *data, size_t n);
void an_dec_free(an_dec *d);
/* Decodes the next frame. The returned buffer 'frame' is valid only until the next call to
   an_dec_next() or an_dec_free(). Returns 1 on success, 0 at the end. */
int an_dec_next(an_dec *d, uint8_t **frame, int *timestamp);
/* The canvas the frames are drawn on. */
int an_dec_get_canvas(an_dec *d, uint8_t **pixels);
/* The last error. The returned string is owned by the decoder. */
const char *an_dec_error(const an_dec *d);
/* Sets the decoder's name. The name must not be freed while the decoder uses it. */
void an_dec_set_name(an_dec *d, const char *name);
#endif
"""

AN_SOURCE = """\
#include "an.h"
#include <stdlib.h>
#include <string.h>
struct an_dec { uint8_t *frame; uint8_t *canvas; size_t n; size_t at; const char *name; };
an_dec *an_dec_new(const uint8_t *data, size_t n) {
  if (n < 2) return NULL;
  an_dec *d = calloc(1, sizeof *d);
  d->n = n; d->frame = malloc(n); d->canvas = calloc(1, 64); memcpy(d->frame, data, n);
  return d;
}
void an_dec_free(an_dec *d) { if (!d) return; free(d->frame); free(d->canvas); free(d); }
int an_dec_next(an_dec *d, uint8_t **frame, int *timestamp) {
  if (!d || d->at >= d->n) return 0;
  *frame = d->frame; *timestamp = (int)d->at++; return 1;
}
int an_dec_get_canvas(an_dec *d, uint8_t **pixels) { if (!d) return 0; *pixels = d->canvas; return 1; }
const char *an_dec_error(const an_dec *d) { return d ? "none" : "no decoder"; }
void an_dec_set_name(an_dec *d, const char *name) { if (d) d->name = name; }
"""


@pytest.fixture(scope="module")
def an_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("anlib"), "an", AN_HEADER, AN_SOURCE, cache)


def test_results_the_header_says_the_library_keeps_are_listed(an_lib: LibraryBuild) -> None:
    facts = header_facts(an_lib)
    assert facts.borrows == ["an_dec_error", "an_dec_next"]  # not the name the decoder keeps
    assert "borrows: [an_dec_error, an_dec_next]" in facts.render()
    assert read_types(facts.render()).borrows == {"an_dec_error", "an_dec_next"}


def test_an_improvement_never_frees_the_decoder_s_buffers(an_lib: LibraryBuild, tmp_path: Path) -> None:
    facts = header_facts(an_lib)
    code = offline_draft(an_lib, facts, "an_dec_new")
    api = parse_header(Path(an_lib.headers[0]), an_lib.include_dirs, an_lib.defines)
    target = next(f for f in api if f.name == "an_dec_new")
    with using(read_types(facts.render())):
        improved = improve_harness(code, target, api, ["an_dec_next", "an_dec_get_canvas"])
    assert "an_dec_next(" in improved.code and "an_dec_get_canvas(" in improved.code, improved.code
    assert_runs_clean(improved.code, an_lib, tmp_path)
