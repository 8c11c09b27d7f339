"""Two typedefs of anonymous records are two types: one's releaser is not the other's.

An invented metadata library declares ``typedef struct { ... } cm_entry;`` and ``typedef struct
{ ... } cm_track;``; only the track has a releaser. Canonically both are ``struct {...}``, and
read by that spelling the track's releaser was taken for the entry's: the entry then counted as
a record with a releaser of its own, so the bytes a call left in its field were never freed
(every harness leaked and never ran).
"""

from __future__ import annotations

from agents.offline import fixer_leak
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth_api import ApiIndex
from agents.offline.type_releasers import releasers_of
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

TYPES = render_types("""```c
typedef struct { unsigned length; unsigned char *entry; } cm_entry;
typedef struct { unsigned long offset; unsigned char number; } cm_track;
```
Release functions:
- cm_track_delete releases cm_track * (parameter type)
""")
API = parse_prototypes("""
int cm_entry_from_pair(cm_entry *entry, const char *name, const char *value);
void cm_track_delete(cm_track *track);
""")
HARNESS = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cm_entry entry;
  memset(&entry, 0, sizeof entry);
  (void)cm_entry_from_pair(&entry, "TITLE", (const char *)data);
  return 0;
}
"""


def test_an_anonymous_records_releaser_is_its_own() -> None:
    with using(read_types(TYPES, API)):
        assert releasers_of("cm_track *") == ["cm_track_delete"]
        assert releasers_of("cm_entry *") == []
        # so the bytes the call leaves in the entry's field are the harness's to free
        assert fixer_leak.byte_field_releases(HARNESS, API[0], ApiIndex(API)) == ["entry.entry"]


def test_a_setter_of_an_end_handler_releases_nothing() -> None:
    from fuzzkit.header_releasers import find_releasers

    api = parse_prototypes("""
void cm_set_end_element_handler(struct cm_parser_s *parser, cm_end_fn end);
void cm_parser_free(struct cm_parser_s *parser);
""")
    found = {r.function for r in find_releasers(api, {}, [], {})}
    assert found == {"cm_parser_free"}, found


def test_a_finalize_of_one_object_releases_it() -> None:
    # `db_finalize(db_stmt *)`: the statement's releaser (a database refuses to close while one is live)
    from fuzzkit.header_releasers import find_releasers

    api = parse_prototypes("int db_finalize(struct db_stmt *stmt);\nint db_step(struct db_stmt *stmt);\n")
    assert {r.function for r in find_releasers(api, {}, [], {})} == {"db_finalize"}
