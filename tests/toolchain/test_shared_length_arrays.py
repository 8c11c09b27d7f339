"""Arrays that share the input's length, in a library nobody tuned the engine for.

``bx_join(types, len, levels, props)`` and ``bx_shape(flags, levels, len, props, str)`` read and
write ``len`` elements of every array they take (a text-layout library's parallel arrays of
character types, levels and properties, with integer and enum typedefs for the elements). The
harness passes the input as the levels with its length, so every other array must hold that
many elements: eight zeroed ones, or a 64 KiB byte buffer for an array of 4-byte characters,
overflowed as soon as the input was longer. ``bx_types(str, len, types)`` takes the input as
4-byte code points: ``len`` counts elements, not bytes, and there is one type out per element.
The library has no bug, so any crash is the harness's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.harness import build_harness
from fuzzkit.header_facts_collect import collect_facts
from fuzzkit.headers import parse_header
from fuzzkit.runner import run_fuzzer
from tests.toolchain.conftest import tiny_library

pytestmark = pytest.mark.toolchain

BX_HEADER = """\
#ifndef BX_H
#define BX_H
#include <stdint.h>
typedef uint32_t bx_type;
#define BX_TYPE_LTR 0x110
#define BX_TYPE_RTL 0x111
#define BX_TYPE_AL 0x113
typedef uint32_t bx_char;
typedef int bx_index;
typedef signed char bx_level;
typedef uint8_t bx_prop;
typedef uint32_t bx_flags;
typedef enum { BX_KIND_L = 0x110, BX_KIND_R = 0x111, BX_KIND_AL = 0x113 } bx_kind;
void bx_mark(const bx_kind *kinds, const bx_index len, const bx_level *levels, bx_prop *props);
void bx_types(const bx_char *str, const bx_index len, bx_kind *btypes);
void bx_join(const bx_type *types, const bx_index len, const bx_level *levels, bx_prop *props);
void bx_shape(bx_flags flags, const bx_level *levels, const bx_index len, bx_prop *props, bx_char *str);
#endif
"""

BX_SOURCE = """\
#include "bx.h"
void bx_join(const bx_type *types, const bx_index len, const bx_level *levels, bx_prop *props) {
  for (bx_index i = 0; i < len; i++) props[i] = (bx_prop)(types[i] + (uint32_t)levels[i]);
}
void bx_mark(const bx_kind *kinds, const bx_index len, const bx_level *levels, bx_prop *props) {
  for (bx_index i = 0; i < len; i++) props[i] = (bx_prop)((unsigned)kinds[i] + (uint32_t)levels[i]);
}
void bx_types(const bx_char *str, const bx_index len, bx_kind *btypes) {
  for (bx_index i = 0; i < len; i++) btypes[i] = (str[i] & 1) ? BX_KIND_L : BX_KIND_R;
}
void bx_shape(bx_flags flags, const bx_level *levels, const bx_index len, bx_prop *props, bx_char *str) {
  for (bx_index i = 0; i < len; i++) str[i] = (bx_char)(props[i] + levels[i] + (flags & 1));
}
"""


@pytest.mark.parametrize("name", ["bx_join", "bx_mark", "bx_shape", "bx_types"])
def test_every_array_holds_as_many_elements_as_the_input(tmp_path: Path, cache: Path, name: str) -> None:
    lib = tiny_library(tmp_path / "bxlib", "bx", BX_HEADER, BX_SOURCE, cache)
    api = parse_header(Path(lib.headers[0]), lib.include_dirs, lib.defines)
    facts = collect_facts(lib.headers, lib.include_dirs, lib.defines, api)
    target = next(f for f in api if f.name == name)
    with using(read_types(facts.render())):
        analysis = analyze_function(target, api)
        draft = write_harness(target, api, ["bx.h"], analysis.archetype,
                              default_skeleton(analysis.archetype), rules=analysis.rules)
    source = tmp_path / "h.c"
    source.write_text(draft.code)
    built = build_harness(source, lib, tmp_path / "out")
    assert built.ok, built.log
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "long").write_bytes(b"\x01" * 70000)  # longer than any fixed buffer
    run = run_fuzzer(Path(str(built.fuzz_binary)), tmp_path / "work", seconds=3, seed_dirs=[corpus],
                     max_len=80000)
    assert run.crash is None, run.crash.excerpt
    assert run.stats.execs > 10
