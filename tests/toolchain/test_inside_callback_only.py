# ruff: noqa: E501
"""A function the documentation allows only inside the library's own callback is left alone.

``vt`` (written here) parses a tree and walks it with a visitor; ``vt_walk_depth`` reads the
state of the walk in progress and, says its comment, "may only be called from within the visit
callback". Called by a harness on a parsed tree it reads a walk that does not exist: a crash
blamed on the harness (a database library's virtual-table calls, valid only inside the method
the library calls, crashed an improvement this way). The header's documentation is read at
prepare time; the Types section lists such functions and no harness part calls them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.improver import improve_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.headers import parse_header
from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import assert_runs_clean, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

VT_HEADER = """\
#ifndef VT_H
#define VT_H
#include <stddef.h>
typedef struct vt_tree vt_tree;
/* Parses text into a tree; NULL on error. */
vt_tree *vt_parse(const char *text, size_t len);
void vt_free(vt_tree *t);
/* Number of nodes of the tree. */
int vt_node_count(const vt_tree *t);
/* Depth of the node being visited. This function may only be called from within the visit
   callback given to vt_walk. */
int vt_walk_depth(const vt_tree *t);
/* Height of the tree. */
int vt_height(const vt_tree *t);
#endif
"""

VT_SOURCE = """\
#include "vt.h"
#include <stdlib.h>
struct vt_walk { int depth; };
struct vt_tree { int nodes; int height; struct vt_walk *walk; };
vt_tree *vt_parse(const char *text, size_t len) {
  vt_tree *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  for (size_t i = 0; i < len; i++) { t->nodes += text[i] == '('; if (t->nodes > t->height) t->height = t->nodes; }
  return t;
}
void vt_free(vt_tree *t) { free(t); }
int vt_node_count(const vt_tree *t) { return t ? t->nodes : 0; }
int vt_walk_depth(const vt_tree *t) { return t->walk->depth; }  /* set only during vt_walk */
int vt_height(const vt_tree *t) { return t ? t->height : 0; }
"""


@pytest.fixture(scope="module")
def vt_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("vtlib"), "vt", VT_HEADER, VT_SOURCE, cache)


def test_a_callback_only_function_is_listed_and_never_called(vt_lib: LibraryBuild, tmp_path: Path) -> None:
    facts: HeaderFacts = header_facts(vt_lib)
    assert facts.inside_only == ["vt_walk_depth"]
    assert "inside_only: [vt_walk_depth]" in facts.render()
    assert read_types(facts.render()).inside_only == {"vt_walk_depth"}
    code = offline_draft(vt_lib, facts, "vt_parse")
    assert "vt_walk_depth(" not in code, code
    # The improver offered every function the harness does not call yet adds the others only.
    api = parse_header(Path(vt_lib.headers[0]), vt_lib.include_dirs, vt_lib.defines)
    target = next(f for f in api if f.name == "vt_parse")
    with using(read_types(facts.render())):
        improved = improve_harness(code, target, api, ["vt_walk_depth", "vt_height", "vt_node_count"])
    assert "vt_height(" in improved.code and "vt_walk_depth(" not in improved.code, improved.code
    assert_runs_clean(improved.code, vt_lib, tmp_path)


IX_HEADER = """\
#ifndef IX_H
#define IX_H
#include <stddef.h>
typedef struct ix_doc ix_doc;
/** Parses bytes into a document; NULL on error. */
ix_doc *ix_parse(const unsigned char *data, size_t len);
void ix_free(ix_doc *d);
/** Number of records. */
int ix_count(const ix_doc *d);
/*! \\internal */
void ix_swap_words(unsigned char *b, unsigned int n);
#endif
"""
IX_SOURCE = """\
#include "ix.h"
#include <stdlib.h>
#include <string.h>
struct ix_doc { int n; };
ix_doc *ix_parse(const unsigned char *data, size_t len) {
  ix_doc *d = calloc(1, sizeof *d);
  if (d) d->n = len ? data[0] : 0;
  return d;
}
void ix_free(ix_doc *d) { free(d); }
int ix_count(const ix_doc *d) { return d ? d->n : 0; }
/* n counts 4-byte words, not bytes: a caller passing a byte count reads past the buffer */
void ix_swap_words(unsigned char *b, unsigned int n) {
  for (unsigned int i = 0; i < n; i++) { unsigned char t = b[4 * i]; b[4 * i] = b[4 * i + 3]; b[4 * i + 3] = t; }
}
"""


def test_a_function_documented_internal_is_listed_and_never_called(tmp_path: Path, cache: Path) -> None:
    lib = tiny_library(tmp_path / "ixlib", "ix", IX_HEADER, IX_SOURCE, cache)
    facts: HeaderFacts = header_facts(lib)
    assert facts.internal == ["ix_swap_words"]
    assert "internal: [ix_swap_words]" in facts.render()
    assert read_types(facts.render()).inside_only == {"ix_swap_words"}
    api = parse_header(Path(lib.headers[0]), lib.include_dirs, lib.defines)
    target = next(f for f in api if f.name == "ix_parse")
    code = offline_draft(lib, facts, "ix_parse")
    with using(read_types(facts.render())):
        improved = improve_harness(code, target, api, ["ix_swap_words", "ix_count"])
    assert "ix_count(" in improved.code and "ix_swap_words(" not in improved.code, improved.code
