"""A leak out of a record passed as an array typedef (``num_t x``) is the harness's.

Bignum-style libraries declare ``typedef num_struct num_t[1];``: a ``num_t`` parameter is a
pointer to the caller's record, and the call allocates into its fields. The harness that never
releases ``x`` leaks, however the library's frames look; only a ``const num_t`` is read-only.
Invented API, judged by the offline model as it is prompted.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage

from agents.crash_analyzer import report_text
from agents.offline.model import OfflineChatModel
from agents.parsing import extract_json
from tests.types_text import render_types

TYPES = render_types("```c\ntypedef struct { int size; unsigned *limbs; } num_struct;\n"
                     "typedef num_struct[1] num_t;\n```")

HARNESS = """\
#include <stdint.h>
#include <string.h>
#include "num.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  num_t x;
  memset(&x, 0, sizeof x);
  num_read(x, size, data);
  return 0;
}
"""


def _verdict(param: str) -> str:
    proto = f"void num_read({param} x, size_t n, const uint8_t *s);"
    triage = report_text({"kind": "leak", "summary": "24 byte(s) leaked", "category": "library",
                          "entry_function": "num_read"})
    user = (f"## Target function\n{proto}\n\n## Crash triage\n{triage}\n\n"
            "## Stack\n#0 malloc ?:?\n#1 num_grow num.c:12\n#2 num_read num.c:40\n"
            "#3 LLVMFuzzerTestOneInput harness.c:7\n\n"
            f"## Library functions in the stack\n```c\n{proto}\n```\n\n"
            f"## Library functions the harness calls\n```c\n{proto}\n```\n\n## Types\n{TYPES}\n\n"
            f"## Current harness\n```c\n{HARNESS}```\n")
    reply = OfflineChatModel().invoke([SystemMessage("ROLE: crash_feasibility_analyzer"), HumanMessage(user)])
    return str(extract_json(str(reply.content))["verdict"])


def test_a_record_filled_through_an_array_typedef_is_the_harnesss_to_release() -> None:
    assert _verdict("num_t") == "harness_misuse"
    assert _verdict("const num_t") == "library_bug"  # read only: the library lost its own block
