"""A ``void *`` releaser is tied to a record by name only when their nouns match.

``xx_nano_ftp_free_ctxt(void *ctx)`` releases a transfer context the header keeps opaque; it
shares the word ``ctxt`` with the parser's ``xx_parser_ctxt``, and one shared word made it that
record's releaser, so the analysis told every harness of a parser context to release it there
(an invalid free). The record's words must all be the releaser's, or the releaser's nouns all
the record's.
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from fuzzkit.header_facts import Record
from fuzzkit.header_releasers import find_releasers

API = parse_prototypes("""
struct xx_parser_ctxt *xx_new_parser_ctxt(void);
void xx_free_parser_ctxt(struct xx_parser_ctxt *ctxt);
void xx_nano_ftp_free_ctxt(void *ctx);
void xx_image_free(void *img);
int xx_image_width(const struct xx_image *img);
int xx_parse_text(const char *text, int len);
int xx_version(void);
""")
RECORDS = [Record("struct", "xx_parser_ctxt", ("xx_parser_ctxt",), (("input", "const char *"),), False),
           Record("struct", "xx_image", ("xx_image",), (("width", "int"),), False)]


def test_a_void_releaser_names_the_records_whose_nouns_it_shares_all_of() -> None:
    releasers = find_releasers(API, {}, RECORDS, {})
    found = {(r.function, r.releases, r.evidence) for r in releasers}
    named = {(f, what) for f, what, evidence in found if evidence == "by name"}
    assert ("xx_nano_ftp_free_ctxt", "xx_parser_ctxt") not in named
    assert ("xx_nano_ftp_free_ctxt", "void *", "parameter type") in found
    assert ("xx_image_free", "xx_image") in named
    assert ("xx_free_parser_ctxt", "struct xx_parser_ctxt *", "parameter type") in found
    assert {r.function for r in releasers if r.heap} == {"xx_free_parser_ctxt"}  # a maker returns one
