"""A handle that hides a record pointer and comes back through an out-parameter.

A resolver library's channel is ``typedef struct kd_chandata *kd_channel``; the only way to get
one is ``int kd_init(kd_channel *out)``, and ``kd_destroy(kd_channel)`` releases it. No function
returns one by value. A harness (or an improvement block) calling ``kd_process_fd(channel, ...)``
on a zeroed ``kd_channel`` hands the library a NULL channel, which it dereferences at once: every
such block crashed and was dropped. The channel is made by its constructor and destroyed.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct kd_chandata *kd_channel;
struct kd_reply { struct kd_reply *next; char *host; unsigned short port; };
int kd_init(kd_channel *channelptr);
int kd_dup(kd_channel *dest, kd_channel src);
void kd_destroy(kd_channel channel);
void kd_process_fd(kd_channel channel, int read_fd, int write_fd);
int kd_set_sortlist(kd_channel channel, const char *sortstr);
int kd_parse_reply(const unsigned char *abuf, int alen, struct kd_reply **out);
void kd_free_data(void *dataptr);
"""

TYPES = render_types("""```c
typedef struct kd_chandata *kd_channel;
struct kd_chandata;  /* opaque: only pointers, made by the API */
struct kd_reply { struct kd_reply *next; char *host; unsigned short port; };
```
Release functions:
- kd_destroy releases kd_channel (parameter type)
- kd_free_data releases void * (parameter type)
""")


def _draft(name: str) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == name)
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        return write_harness(target, decls, ["kd.h"], arche, default_skeleton(arche)).code


def _made_and_destroyed(code: str) -> None:
    made = re.search(r"kd_init\(&(\w+)\)", code)
    assert made, code
    var = made.group(1)
    assert re.search(rf"\bkd_channel {var} = NULL;", code), code
    assert re.search(rf"kd_destroy\({var}\);", code), code
    assert not re.search(r"memset\(&\w+, 0, sizeof \w+\);\n\s*kd_", code), code
    assert "kd_channel channel;" not in code, code


def _improved(call: str) -> tuple[str, str]:
    """The parser's harness with an improvement block calling ``call``, and that block."""
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "kd_parse_reply")
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["kd.h"], arche, default_skeleton(arche)).code
        improved = improve_harness(code, target, decls, [call])
    assert improved.added_calls, improved.directions
    block = improved.code[improved.code.index("LF improve"):]
    return improved.code, block


def test_the_target_gets_a_channel_from_its_constructor() -> None:
    code = _draft("kd_set_sortlist")
    _made_and_destroyed(code)
    made = re.search(r"kd_init\(&(\w+)\)", code)
    assert made and f"kd_set_sortlist({made.group(1)}, " in code, code


def test_an_improvement_block_makes_its_own_channel() -> None:
    _, block = _improved("kd_process_fd")
    _made_and_destroyed(block)
    assert re.search(r"kd_process_fd\(kd_\w+, ", block), block


def test_a_handle_written_out_by_another_call_is_destroyed() -> None:
    """``kd_dup(&dest, src)`` writes a second channel out; it leaked on every input before."""
    code, block = _improved("kd_dup")
    dup = re.search(r"kd_dup\(&(\w+), (\w+)\)", block)
    assert dup, block
    dest, src = dup.groups()
    assert re.search(rf"\bkd_channel {dest} = NULL;", code), code
    assert re.search(rf"kd_destroy\({dest}\);", block[dup.end():]), block
    assert re.search(rf"kd_destroy\({src}\);", block[dup.end():]), block
