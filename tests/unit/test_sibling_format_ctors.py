"""An object for a call comes from the constructor of that call's own family, not a sibling format's.

The invented ``mk`` markup library reads two formats that share one context type: the strict
one (``mk_create_memory_ctxt``, ``mk_read_ctxt``) and a lenient one (``htm_create_memory_ctxt``,
``htm_parse_ctxt``). Both constructors read a buffer with its length, so they ranked equal and
the name's alphabet picked the lenient one for the strict reader too; the strict parser then ran
past the stacks only its own constructor allocates (a heap overflow judged harness misuse, again
on every call of the strict family). Of equal constructors, the one named most like the call wins.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness

API = """
typedef struct mk_ctxt_s mk_ctxt;
typedef struct mk_doc_s mk_doc;
mk_ctxt *htm_create_memory_ctxt(const char *buffer, int size);
mk_ctxt *mk_create_memory_ctxt(const char *buffer, int size);
int htm_parse_ctxt(mk_ctxt *ctxt);
int mk_read_ctxt(mk_ctxt *ctxt);
void mk_free_ctxt(mk_ctxt *ctxt);
void mk_free_doc(mk_doc *doc);
"""


def _maker(target_name: str) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == target_name)
    arche = analyze_function(target, decls).archetype
    code = write_harness(target, decls, ["mk.h"], arche, default_skeleton(arche)).code
    made = re.search(r"=\s*(\w+_create_memory_ctxt)\(", code)
    assert made, code
    return made.group(1)


def test_each_family_gets_its_own_constructor() -> None:
    assert _maker("mk_read_ctxt") == "mk_create_memory_ctxt"
    assert _maker("htm_parse_ctxt") == "htm_create_memory_ctxt"
