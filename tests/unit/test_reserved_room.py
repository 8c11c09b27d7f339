"""A streaming unpacker fed through its own buffer, and a type made both on the stack and on the heap.

An invented API (``mq``): no function takes the bytes. ``mq_reserve_buffer(u, n)`` makes room,
``mq_buffer(u)`` is where the bytes go and ``mq_buffer_consumed(u, n)`` commits them (in the
real headers of such libraries these three are static inline helpers, so they reach the API
only because the headers' inline functions are read too). ``mq_unpacker_init(&u, n)`` is
undone by ``mq_unpacker_destroy(&u)``, ``mq_unpacker_new(n)`` by ``mq_unpacker_free(u)``:
given the stack struct's address, ``free`` is a bad free and the zone reset leaks the buffer.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct mq_unpacker { char *buffer; size_t used; size_t free; } mq_unpacker;
typedef struct mq_unpacked { void *zone; int data; } mq_unpacked;
typedef enum { MQ_SUCCESS = 2, MQ_EXTRA = 1, MQ_CONTINUE = 0, MQ_PARSE_ERROR = -1 } mq_return;
_Bool mq_unpacker_init(mq_unpacker *mpac, size_t initial_buffer_size);
void mq_unpacker_destroy(mq_unpacker *mpac);
mq_unpacker *mq_unpacker_new(size_t initial_buffer_size);
void mq_unpacker_free(mq_unpacker *mpac);
void mq_unpacker_reset_zone(mq_unpacker *mpac);
_Bool mq_unpacker_expand_buffer(mq_unpacker *mpac, size_t size);
_Bool mq_unpacker_reserve_buffer(mq_unpacker *mpac, size_t size);
char *mq_unpacker_buffer(mq_unpacker *mpac);
size_t mq_unpacker_buffer_capacity(const mq_unpacker *mpac);
void mq_unpacker_buffer_consumed(mq_unpacker *mpac, size_t size);
mq_return mq_unpacker_next(mq_unpacker *mpac, mq_unpacked *pac);
void mq_unpacked_init(mq_unpacked *result);
void mq_unpacked_destroy(mq_unpacked *result);
"""
TYPES = render_types("""```c
struct mq_unpacker { char *buffer; size_t used; size_t free; };
struct mq_unpacked { void *zone; int data; };
typedef enum { MQ_SUCCESS = 2, MQ_EXTRA = 1, MQ_CONTINUE = 0, MQ_PARSE_ERROR = -1 } mq_return;
```
Release functions:
- mq_unpacker_destroy releases mq_unpacker * (parameter type; the library allocates it)
- mq_unpacker_free releases mq_unpacker * (parameter type; the library allocates it)
- mq_unpacker_reset_zone releases mq_unpacker * (parameter type; the library allocates it)
- mq_unpacked_destroy releases mq_unpacked * (parameter type)
""")


def _body(name: str, api: str = API) -> str:
    decls = parse_prototypes(api)
    target = next(d for d in decls if d.name == name)
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["mq.h"], arche, default_skeleton(arche)).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_the_input_is_copied_into_reserved_room_and_committed_before_the_unpacker_runs() -> None:
    body = _body("mq_unpacker_next")
    reserve = body.index("mq_unpacker_reserve_buffer(&unpacker, size);")
    guard = body.index("if (mq_unpacker_buffer_capacity(&unpacker) < size) goto lf_cleanup;")
    copy = body.index("memcpy(mq_unpacker_buffer(&unpacker), data, size);")
    commit = body.index("mq_unpacker_buffer_consumed(&unpacker, size);")
    assert reserve < guard < copy < commit < body.index("mq_unpacker_next(&unpacker"), body


def test_without_a_capacity_the_reservations_own_answer_guards_the_copy() -> None:
    body = _body("mq_unpacker_next", API.replace(
        "size_t mq_unpacker_buffer_capacity(const mq_unpacker *mpac);\n", ""))
    assert re.search(r"if \(!mq_unpacker_reserve_buffer\(&unpacker, size\)\) goto lf_cleanup;", body), body
    # a reservation whose failure cannot be read gets no copy at all
    untold = API.replace("size_t mq_unpacker_buffer_capacity(const mq_unpacker *mpac);\n", "").replace(
        "_Bool mq_unpacker_reserve_buffer", "int mq_unpacker_reserve_buffer").replace(
        "_Bool mq_unpacker_expand_buffer", "int mq_unpacker_expand_buffer")
    assert "memcpy(mq_unpacker_buffer" not in _body("mq_unpacker_next", untold)


def test_an_initialized_stack_struct_is_undone_by_destroy_not_freed_or_reset() -> None:
    body = _body("mq_unpacker_next")
    assert "mq_unpacker_destroy(&unpacker);" in body, body
    assert "mq_unpacker_free(&unpacker)" not in body and "reset_zone" not in body, body
    assert "mq_unpacked_destroy(&pac);" in body, body  # each result released where it was made
