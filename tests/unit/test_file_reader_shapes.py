# ruff: noqa: E501
"""Shapes from an unseen audio-file library opened on the input file (invented names).

- ``au_open(const char *path, int mode, au_info *info)``: ``mode`` took the values of a large
  anonymous enum of file formats, so the open failed for every input and the reader never ran;
  it opens for reading (the header's ``AUM_READ``).
- ``au_read_short(AUFILE *f, short *ptr, au_count_t items)``: ``ptr`` was one ``short`` and
  ``items`` up to 255, room for as many elements as the count says.
- "The memory for the iterator belongs to the AUFILE* handle and is freed when au_close() is
  called": the iterator is the handle's, not released with ``au_close`` of its own.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts import HeaderFacts, Record
from fuzzkit.header_releasers import find_releasers
from tests.types_text import render_types

API = """
typedef long au_count_t;
AUFILE *au_open(const char *path, int mode, au_info *sfinfo);
int au_close(AUFILE *f);
au_count_t au_read_short(AUFILE *f, short *ptr, au_count_t items);
AU_CHUNK_ITERATOR *au_get_chunk_iterator(AUFILE *f, const au_chunk_info *chunk_info);
"""
DOCS = {"au_open": "Open the file for read or write. Close it with au_close().",
        "au_get_chunk_iterator": "The memory for the iterator belongs to the AUFILE* handle and is freed when au_close() is called."}
RECORDS = [Record("struct", "", ("AUFILE",), (), True), Record("struct", "", ("AU_CHUNK_ITERATOR",), (), True),
           Record("struct", "", ("au_info",), (("frames", "au_count_t"), ("format", "int")), False),
           Record("struct", "", ("au_chunk_info",), (("id", "char[64]"),), False)]
CONSTANTS = "typedef long au_count_t;\n#define AU_FORMAT_WAV 65536\n#define AU_FORMAT_AIFF 131072\n#define AUC_SET_DITHER_ON_READ 4257\n#define AUM_READ 16\n#define AUM_WRITE 32\n"


def _draft(name: str) -> str:
    decls = parse_prototypes(API)
    facts = HeaderFacts(records=RECORDS, releasers=find_releasers(decls, DOCS, RECORDS, {}))
    text = "```c\n" + CONSTANTS + "```\n" + facts.render()
    target = next(d for d in decls if d.name == name)
    with using(read_types(render_types(text))):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["au.h"], arche, default_skeleton(arche)).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_a_part_freed_with_its_handle_is_not_linked_to_the_handle_s_releaser() -> None:
    found = [(r.function, r.releases) for r in find_releasers(parse_prototypes(API), DOCS, RECORDS, {})]
    assert ("au_close", "what au_open allocates") in found
    assert not any("au_get_chunk_iterator" in what for _, what in found)


def test_the_reader_opens_its_input_for_reading_into_room_for_the_count() -> None:
    code = _draft("au_read_short")
    assert "mode = (int)16;" in code and "au_open(path, mode, " in code, code
    room = re.search(r"short (\w+)\[(\d+)\]", code)
    assert room is not None, code
    assert re.search(rf"au_read_short\(\w+, {room.group(1)}, \(au_count_t\){room.group(2)}\)", code), code
