"""A call that reads the input itself gets its object unfed, not one a constructor read the input into.

``mark_ctx_read_doc(ctx, text, ...)`` parses its own text. A context that a memory constructor
of another family already set up from the input (``webx_ctx_from_memory``) is a context for that
family's format: the reader then runs on state it does not expect (an overflow inside the
library, judged misuse, one crash round). An improvement block makes the object with the plain
constructor instead; a call that takes no input of its own still gets its object from the input.
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from agents.offline.improver_blocks import one_block
from agents.offline.synth_api import ApiIndex

HEADER = """
typedef struct mark_ctx mark_ctx;
typedef struct mark_doc mark_doc;
mark_ctx *mark_ctx_new(void);
mark_ctx *webx_ctx_from_memory(const char *buffer, int size);
void mark_ctx_free(mark_ctx *ctx);
void mark_doc_free(mark_doc *doc);
mark_doc *mark_ctx_read_doc(mark_ctx *ctx, const char *text, const char *url, int options);
int mark_ctx_parse_document(mark_ctx *ctx);
"""


def _block(function: str) -> tuple[str, str]:
    idx = ApiIndex(parse_prototypes(HEADER))
    made = one_block(idx, idx.by_name[function], [], set(), set(), 1)
    assert made is not None
    return "\n".join(made[0].lines), made[1]


def test_a_reader_of_its_own_text_gets_the_plain_constructor() -> None:
    code, what = _block("mark_ctx_read_doc")
    assert "on a new mark_ctx" in what, what
    assert "mark_ctx_new()" in code, code
    assert "webx_ctx_from_memory" not in code, code


def test_a_call_without_input_of_its_own_still_gets_a_fed_object() -> None:
    code, _ = _block("mark_ctx_parse_document")
    assert "webx_ctx_from_memory((const char *)data" in code, code
