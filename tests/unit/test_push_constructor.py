"""A context fed piece by piece gets the constructor that sets up pushing.

An invented markup library has one context type with three constructors: a generic one that
sets up no input (``mk_new_ctx``: a chunk given to it is ignored, the target does nothing), and
a push constructor per dialect (``mk_create_push_ctx`` and ``hmk_create_push_ctx``). The chunk
parsers of both dialects got the generic one, the simplest.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct mk_ctx_s *mk_ctx_p;
mk_ctx_p mk_new_ctx(void);
mk_ctx_p mk_create_push_ctx(const char *chunk, int size, const char *filename);
mk_ctx_p hmk_create_push_ctx(const char *chunk, int size, const char *filename, int encoding);
mk_ctx_p mk_create_memory_ctx(const char *buffer, int size);
int mk_parse_chunk(mk_ctx_p ctx, const char *chunk, int size, int terminate);
int hmk_parse_chunk(mk_ctx_p ctx, const char *chunk, int size, int terminate);
int mk_parse_document(mk_ctx_p ctx);
void mk_free_ctx(mk_ctx_p ctx);
"""

TYPES = render_types("""```c
typedef struct mk_ctx_s *mk_ctx_p;
struct mk_ctx_s;  /* opaque: only pointers, made by the API */
```
Release functions:
- mk_free_ctx releases mk_ctx_p (parameter type)
""")


def _draft(name: str) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == name)
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        return write_harness(target, decls, ["mk.h"], arche, default_skeleton(arche)).code


def test_a_chunk_parser_gets_its_dialects_push_context() -> None:
    code = _draft("mk_parse_chunk")
    assert "mk_create_push_ctx(" in code and "mk_new_ctx(" not in code, code
    assert "hmk_create_push_ctx(" not in code, code
    assert "(const char *)data, (int)size" in code[code.index("mk_parse_chunk("):], code
    assert "mk_free_ctx(" in code, code


def test_the_other_dialect_gets_its_own() -> None:
    code = _draft("hmk_parse_chunk")
    assert "hmk_create_push_ctx(" in code and "mk_new_ctx(" not in code, code


def test_a_whole_document_parser_keeps_the_context_it_had() -> None:
    code = _draft("mk_parse_document")
    assert "_push_ctx(" not in code, code
