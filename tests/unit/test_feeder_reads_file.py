"""A writer's object is read from the input first, and a feeder that takes no input leaves no trace.

An invented metadata library: ``md_chain_write(chain, pad)`` writes back what the chain holds;
the chain holds something only once ``md_chain_read(chain, filename)`` (or its callback twin)
read it. The draft of the writer hands the input over as a file the reader reads (its own name
says it reads, even though the harness's purpose is writing), and the feeders tried before it
that did not take the input leave no declaration or allocation behind.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = parse_prototypes("""
typedef struct md_chain md_chain;
typedef struct { size_t (*read)(void *ptr, size_t size, size_t n, void *handle); } md_io;
md_chain *md_chain_new(void);
void md_chain_delete(md_chain *chain);
int md_chain_read_with_callbacks(md_chain *chain, void *handle, md_io callbacks);
int md_chain_read(md_chain *chain, const char *filename);
int md_chain_write(md_chain *chain, int use_padding);
""")
TYPES = render_types("```c\ntypedef struct md_chain md_chain;\n```\nRelease functions:\n"
                     "- md_chain_delete releases md_chain * (parameter type)\n")


def test_the_writer_s_chain_is_read_from_the_input_and_nothing_else_is_left() -> None:
    target = next(d for d in API if d.name == "md_chain_write")
    with using(read_types(TYPES)):
        arche = analyze_function(target, API).archetype
        draft = write_harness(target, API, ["md.h"], arche, default_skeleton(arche))
    body = draft.code[draft.code.index("LLVMFuzzerTestOneInput"):]
    assert "md_chain_read(" in body and body.index("md_chain_read(") < body.index("md_chain_write("), body
    assert "lf_tmpfile(data, size," in body
    assert "md_chain_read_with_callbacks" not in body and "md_io" not in body, body
    assert "md_chain_read_with_callbacks" not in draft.calls
