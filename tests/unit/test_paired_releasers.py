"""A part made inside another object goes back through the releaser that takes that object.

``ed_new_doc_part(doc, name)`` makes a part in the document's own storage; the header's
``ed_free_doc_part(doc, part)`` releases it, while ``ed_free_part(part)`` (the releaser of the
type, for parts made on their own) frees it wrongly: an invalid free on every input. The pair is
read from names and types (the producer's make verb for the releaser's release verb, the same
maker type first, the result's type second) when the documentation links nothing.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_releasers import find_releasers
from tests.types_text import render_types

API = """
typedef struct ed_doc_s ed_doc;
typedef struct ed_part_s ed_part;
ed_doc *ed_doc_new(void);
void ed_doc_free(ed_doc *doc);
ed_part *ed_new_part(const char *name);
ed_part *ed_new_doc_part(ed_doc *doc, const char *name);
ed_part *ed_copy_doc_part(ed_doc *doc, ed_part *part);
void ed_free_doc_part(ed_doc *doc, ed_part *part);
void ed_free_part(ed_part *part);
"""


def test_the_releaser_taking_the_maker_is_paired_with_its_producers_by_name() -> None:
    releasers = find_releasers(parse_prototypes(API), {}, [], {})
    found = {(r.function, r.releases, r.evidence) for r in releasers}
    paired = {(f, w) for f, w, e in found if e.startswith("by name, given")}
    assert paired == {("ed_free_doc_part", "what ed_new_doc_part allocates"),
                      ("ed_free_doc_part", "what ed_copy_doc_part allocates")}
    assert ("ed_free_part", "ed_part *", "parameter type") in found
    assert {r.function for r in releasers if r.heap} == {"ed_doc_free", "ed_free_part"}  # makers return them
    # the documentation, when it names a releaser, wins
    docs = {"ed_new_doc_part": "Returns a new part; release it with ed_free_part()."}
    linked = {(r.function, r.releases) for r in find_releasers(parse_prototypes(API), docs, [], {})
              if r.releases == "what ed_new_doc_part allocates"}
    assert linked == {("ed_free_part", "what ed_new_doc_part allocates")}


TYPES = render_types("""```c
struct ed_doc_s;  /* opaque: only pointers, made by the API */
struct ed_part_s;  /* opaque: only pointers, made by the API */
```
Release functions:
- ed_doc_free releases ed_doc * (parameter type)
- ed_free_part releases ed_part * (parameter type)
- ed_free_doc_part releases what ed_new_doc_part allocates (by name, given the object it was made in)
""")


def test_the_harness_releases_the_part_through_its_document() -> None:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "ed_new_doc_part")
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["ed.h"], arche, default_skeleton(arche)).code
    assert "ed_new_doc_part(" in code
    assert "ed_free_part(" not in code, code
    maker = code[code.index("ed_new_doc_part(") + len("ed_new_doc_part("):].split(",")[0]
    assert re.search(rf"ed_free_doc_part\({re.escape(maker)}, \w+\);", code), code


def test_a_releaser_named_as_the_producer_plus_a_release_verb_is_paired() -> None:
    """``ed_maketables_free(ctx, tables)`` releases what ``ed_maketables(ctx)`` returns: the tables
    leaked on every input of a harness that called the producer."""
    api = parse_prototypes(
        "typedef struct ed_ctx_s ed_ctx;\n"
        "const unsigned char *ed_maketables(ed_ctx *ctx);\n"
        "void ed_maketables_free(ed_ctx *ctx, const unsigned char *tables);\n"
        "const unsigned char *ed_tables_peek(ed_ctx *ctx);\n")
    found = {(r.function, r.releases) for r in find_releasers(api, {}, [], {})}
    assert ("ed_maketables_free", "what ed_maketables allocates") in found
    assert ("ed_maketables_free", "what ed_tables_peek allocates") not in found


MAKETABLES = render_types("""```c
struct ed_ctx_s;  /* opaque: only pointers, made by the API */
```
Release functions:
- ed_ctx_free releases ed_ctx * (parameter type)
- ed_maketables_free releases what ed_maketables allocates (by name, given the object it was made in)
""")


def test_a_releaser_taking_bytes_is_no_input_feeder_and_releases_the_result() -> None:
    """A producer that takes no input got the releaser, which has a feeder's shape (the object,
    then bytes), called on the fuzz input before it; the tables it made leaked."""
    decls = parse_prototypes(
        "typedef struct ed_ctx_s ed_ctx;\ned_ctx *ed_ctx_create(void);\nvoid ed_ctx_free(ed_ctx *c);\n"
        "const unsigned char *ed_maketables(ed_ctx *ctx);\n"
        "void ed_maketables_free(ed_ctx *ctx, const unsigned char *tables);\n")
    target = next(d for d in decls if d.name == "ed_maketables")
    with using(read_types(MAKETABLES)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["ed.h"], arche, default_skeleton(arche)).code
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    assert body.index("ed_maketables(") < body.index("ed_maketables_free("), body
    assert re.search(r"ed_maketables_free\(\w+, (\(const unsigned char \*\))?result\);", body), body
