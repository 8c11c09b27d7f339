"""One comment over several prototypes: a releaser it names belongs to the functions its sentence names.

The invented query library documents ``q_text`` and ``q_text_copy`` in one comment: the first's
string is the statement's, the second's must go to ``q_free``. Read as each function's own
documentation, the comment tied ``q_free`` to both, and harnesses freed the borrowed string (an
invalid free on every input).
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from fuzzkit.header_releasers import find_releasers

API = parse_prototypes("""
typedef struct q_stmt q_stmt;
const char *q_text(q_stmt *stmt);
char *q_text_copy(q_stmt *stmt);
void q_free(void *p);
void q_stmt_close(q_stmt *stmt);
""")
SHARED = ("Retrieve the text of a statement. The string returned by q_text() is managed by the "
          "library and freed when the statement is closed. The string returned by q_text_copy(), "
          "on the other hand, is obtained from q_malloc() and must be passed to q_free() by the caller.")


def _linked(docs: dict[str, str]) -> set[tuple[str, str]]:
    return {(r.function, r.releases) for r in find_releasers(API, docs, [], {})
            if r.releases.startswith("what ")}


def test_a_shared_comment_ties_the_releaser_to_the_function_its_sentence_names() -> None:
    linked = _linked({"q_text": SHARED, "q_text_copy": SHARED})
    assert ("q_free", "what q_text_copy allocates") in linked
    assert not any(what == "what q_text allocates" for _f, what in linked)


def test_a_comment_of_its_own_still_names_the_releaser_for_its_function() -> None:
    own = "Returns the text; the caller passes it to q_free() when done."
    assert ("q_free", "what q_text allocates") in _linked({"q_text": own})


def test_a_comment_attached_to_the_first_prototype_only_is_read_the_same_way() -> None:
    """A header parser attaches the comment to the first declaration after it; the others have none."""
    linked = _linked({"q_text": SHARED})
    assert not any(what == "what q_text allocates" for _f, what in linked)
