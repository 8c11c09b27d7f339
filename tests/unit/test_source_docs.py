"""Documentation read where the library writes it: beside the definition, in its sources.

Many C libraries leave their headers bare and document each function above its definition
(``tagBuildRef:`` gtk-doc blocks in ``ref.c``). An invented API: ``tagBuildRef`` returns a
``tagChar *`` (a typedef of ``unsigned char``) documented "Returns a new reference string (to be
freed by the caller)". Read only from the header, nothing ties a releaser to the result and
every harness leaked it (one crash round per target, and again on the next target). Read from
the source, ``free`` releases it, through the canonical type behind the typedef.
"""

from __future__ import annotations

from pathlib import Path

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts_collect import collect_facts
from fuzzkit.param_docs import definition_docs
from tests.types_text import released

HEADER = """\
typedef unsigned char tagChar;
tagChar *tagBuildRef(const tagChar *ref, const tagChar *base);
int tagRefLength(const tagChar *ref);
"""

SOURCE = """\
#include "tag.h"

/**
 * tagRefLength:
 * @ref: the reference
 *
 * Returns the length of @ref, or -1.
 */
int
tagRefLength(const tagChar *ref) { return ref ? 1 : -1; }

/* the helper below is the library's own */
static int helper(void) { return 0; }

/**
 * tagBuildRef:
 * @ref: the reference
 * @base: the base
 *
 * Returns a new reference string (to be freed by the caller) or NULL in case of error.
 */
tagChar *
tagBuildRef(const tagChar *ref, const tagChar *base) { return 0; }
"""


def _facts(tmp_path: Path, with_sources: bool) -> str:
    (tmp_path / "tag.h").write_text(HEADER)
    (tmp_path / "ref.c").write_text(SOURCE)
    api = parse_prototypes(HEADER)
    docs = definition_docs([tmp_path / "ref.c"], [d.name for d in api]) if with_sources else {}
    facts = collect_facts([tmp_path / "tag.h"], [tmp_path], api=api, docs=docs)
    return "\n".join(facts.render().splitlines()[1:])


def test_source_comments_document_the_functions_the_header_leaves_bare(tmp_path: Path) -> None:
    (tmp_path / "ref.c").write_text(SOURCE)
    docs = definition_docs([tmp_path / "ref.c"], ["tagBuildRef", "tagRefLength", "helper"])
    assert "to be freed by the caller" in docs["tagBuildRef"]
    assert "length of @ref" in docs["tagRefLength"]
    assert "helper" not in docs or "library's own" in docs["helper"]


def test_the_result_documented_in_the_source_is_released_with_free(tmp_path: Path) -> None:
    assert ("free", "what tagBuildRef allocates") not in released(_facts(tmp_path, with_sources=False))
    types = _facts(tmp_path, with_sources=True)
    assert ("free", "what tagBuildRef allocates") in released(types), types
    assert "tagRefLength allocates" not in types
    api = parse_prototypes(HEADER)
    target = api[0]
    with using(read_types(types)):
        arche = analyze_function(target, api).archetype
        code = write_harness(target, api, ["tag.h"], arche, default_skeleton(arche)).code
    assert "free((void *)" in code or "free(result)" in code, code
