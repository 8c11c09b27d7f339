"""An improvement block reuses the harness's object only for calls of the family that made it.

One context type serves three formats, each with constructors that name the format before the
verb (``tagCreatePushParserCtxt``, ``docCreatePushParserCtxt``, ``mlNewCtxt``). A context the tag
format's push constructor made is a tag context: ``docParseChunk`` on it runs the document
format's parser on state it does not expect (an overflow inside the library, judged misuse, one
crash round). The block calls it on a new object instead; a call of the tag family still reuses
the harness's context, and so does a function of no family the constructors name. A new object
for the document call comes from the document format's constructor, not the tag format's memory
reader.
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from agents.offline.improver_blocks import one_block, reusable
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_types import Obj
from agents.offline.synth_vocab import maker_stem

HEADER = """
typedef struct mlCtxt mlCtxt;
typedef mlCtxt *mlCtxtPtr;
mlCtxtPtr mlNewCtxt(void);
mlCtxtPtr tagCreatePushParserCtxt(const char *chunk, int size, const char *filename);
mlCtxtPtr docCreatePushParserCtxt(const char *chunk, int size, const char *filename);
void mlFreeCtxt(mlCtxtPtr ctxt);
int tagParseChunk(mlCtxtPtr ctxt, const char *chunk, int size, int terminate);
int docParseChunk(mlCtxtPtr ctxt, const char *chunk, int size, int terminate);
void tagCtxtReset(mlCtxtPtr ctxt);
int rootCountNodes(mlCtxtPtr ctxt);
"""


def _reusable(function: str) -> bool:
    idx = ApiIndex(parse_prototypes(HEADER))
    obj = Obj(type_key=str(idx.type_key("mlCtxtPtr")), expr="ctxt", var="ctxt",
              origin="tagCreatePushParserCtxt")
    return reusable(idx, obj, idx.by_name[function])


def test_a_sibling_formats_call_does_not_reuse_the_context() -> None:
    assert not _reusable("docParseChunk")


def test_calls_of_the_makers_own_family_reuse_it() -> None:
    assert _reusable("tagCtxtReset")


def test_a_function_of_no_named_family_reuses_it() -> None:
    assert _reusable("rootCountNodes")


def test_the_family_is_the_name_before_the_constructors_verb() -> None:
    assert maker_stem("tagCreatePushCtxt") == "tag"
    assert maker_stem("html_new_reader") == "html_"
    assert maker_stem("newThing") == "newThing"
    assert maker_stem("rootCountNodes") == "rootCountNodes"


def test_a_new_object_for_a_sibling_formats_call_comes_from_that_family() -> None:
    header = HEADER + "mlCtxtPtr tagCreateMemoryCtxt(const char *buffer, int size);\n" \
                      "int docParseDocument(mlCtxtPtr ctxt);\n"
    idx = ApiIndex(parse_prototypes(header))
    made = one_block(idx, idx.by_name["docParseDocument"], [], set(), set(), 1)
    assert made is not None
    code = "\n".join(made[0].lines)
    assert "docCreatePushParserCtxt(" in code, code
    assert "tagCreate" not in code, code
