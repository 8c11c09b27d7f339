"""Parameters documented as taking NULL, read from comments where a library defines its functions."""

from __future__ import annotations

from pathlib import Path

from agents.offline.type_table import read_types
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.param_docs import nullable, optional_params

API = [
    FunctionDecl("tag_register", "int", [Param("ulabel", "const char *"), Param("alabel", "const char *"),
                                         Param("out", "char **"), Param("flags", "int")]),
    FunctionDecl("tag_open", "tag_t *", [Param("path", "const char *"), Param("mode", "const char *")]),
    FunctionDecl("tag_close", "void", [Param("t", "tag_t *")]),
]

GTKDOC = """\
#include "tag.h"

/**
 * tag_register:
 * @ulabel: the label in Unicode, or NULL.
 * @alabel: the label in ASCII form,
 *   or %NULL to derive it from @ulabel.
 * @out: where the result goes; must not be NULL.
 * @flags: NULL-free options.
 *
 * Returns: 0 on success.
 **/
int
tag_register (const char *ulabel, const char *alabel, char **out, int flags)
{
  return 0;
}
"""

DOXYGEN = """\
/**
 * \\brief Open a tag file.
 * \\param path  the file to open (never NULL)
 * @param[in] mode  an fopen mode; may be NULL for "r".
 */
tag_t *tag_open(const char *path, const char *mode);

/* A plain comment naming NULL: documents nothing. */
void tag_close(tag_t *t);
"""


def test_gtk_doc_and_doxygen_descriptions(tmp_path: Path) -> None:
    (tmp_path / "tag.c").write_text(GTKDOC)
    (tmp_path / "tag.h").write_text(DOXYGEN)
    found = optional_params([tmp_path / "tag.h", tmp_path / "tag.c"], API)
    assert found == {"tag_open": ["mode"], "tag_register": ["ulabel", "alabel"]}


def test_a_refusal_wins_over_an_allowance() -> None:
    assert nullable(" * @p: a buffer, or NULL.\n * @q: must not be NULL, or the call fails.\n") == ["p"]


def test_a_comment_documents_the_function_after_it_only_up_to_its_body(tmp_path: Path) -> None:
    helper = "static int helper(void) { return tag_open(0, 0) != 0; }\n"
    (tmp_path / "x.c").write_text("/** @mode: or NULL */\n" + helper)
    assert optional_params([tmp_path / "x.c"], API) == {}


def test_the_types_section_carries_it_to_the_offline_model() -> None:
    facts = HeaderFacts(optional={"tag_register": ["ulabel", "alabel"]})
    assert "  tag_register: [ulabel, alabel]" in facts.render()
    assert HeaderFacts.from_dict(facts.to_dict()).optional == facts.optional
    table = read_types(facts.render())
    assert table.optional == {"tag_register": {"ulabel", "alabel"}}
    assert "tag_register" not in table.returns
