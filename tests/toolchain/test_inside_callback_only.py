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
    assert "- vt_walk_depth is called by no harness" in facts.render()
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
