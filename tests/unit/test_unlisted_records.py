"""An improvement block never declares by value a record the Types section does not show.

A large library has more records than the Types section lists (it keeps the first ones the API
reaches); a typedef of one of the others (``typedef struct _acme_pat acme_pat;``) says nothing
about whether the header defines it. Declaring ``acme_pat v;`` for a call on "a new acme_pat"
then fails to build when the record is opaque ("variable has incomplete type"), a wasted fix
round. Optional code makes no such guess: the block is left out. A record the section lists
with its fields is still declared and zeroed.
"""

from __future__ import annotations

from agents.offline import type_table
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver_blocks import one_block
from agents.offline.synth_api import ApiIndex
from tests.types_text import render_types

HEADER = """
typedef struct _acme_pat acme_pat;
typedef struct _acme_stream acme_stream;
acme_stream *acme_pat_stream(acme_pat *pat);
void acme_stream_free(acme_stream *stream);
"""

TYPEDEFS = """typedef struct _acme_pat acme_pat;
typedef struct _acme_stream acme_stream;"""


def _block(types: str) -> str | None:
    idx = ApiIndex(parse_prototypes(HEADER))
    with type_table.using(type_table.read_types(render_types(types))):
        made = one_block(idx, idx.by_name["acme_pat_stream"], [], set(), set(), 1)
    return None if made is None else "\n".join(made[0].lines)


def test_a_record_the_section_does_not_list_is_not_declared_by_value() -> None:
    code = _block(TYPEDEFS)
    assert code is None or "acme_pat acme_pat" not in code, code


def test_a_listed_record_with_fields_is_still_zeroed() -> None:
    code = _block(TYPEDEFS + "\nstruct _acme_pat { int flags; };")
    assert code is not None and "memset(&" in code, code


def test_an_opaque_record_is_not_declared_by_value() -> None:
    code = _block(TYPEDEFS + "\nstruct _acme_pat;  /* opaque: only pointers, made by the API */")
    assert code is None or "acme_pat acme_pat" not in code, code
