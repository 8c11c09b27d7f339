"""A leak of the bytes a call left in a record the harness passed by address: the field is freed.

An invented tag library: ``vc_entry_from_pair(vc_entry *entry, name, value)`` fills
``entry->length`` and ``entry->bytes`` with a malloc'd ``name=value`` (``vc_byte``, a typedef
of ``uint8_t``); the record has no release function: its caller frees the bytes. A harness that
passed ``&entry`` leaked them on every input; the repair frees ``entry.bytes`` (never the
record, never a ``const`` field or a library object's field).
"""

from __future__ import annotations

from pathlib import Path

from agents.crash_analyzer import report_text
from agents.enhancer import Enhancer
from agents.offline.cdecl import parse_prototypes
from agents.offline.prompt_reader import read_prompt
from agents.offline.roles import enhance
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts_collect import collect_facts
from prompts import render

HEADER = """\
#include <stddef.h>
#include <stdint.h>
typedef uint8_t vc_byte;
typedef struct vc_obj vc_obj;
typedef struct { uint32_t length; vc_byte *bytes; const char *label; vc_obj *owner; } vc_entry;
int vc_entry_from_pair(vc_entry *entry, const char *name, const char *value);
"""
HARNESS = """\
#include "vc.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vc_entry entry;
  memset(&entry, 0, sizeof entry);
  int result = 0;
  /* @LF:CALL */
  result = vc_entry_from_pair(&entry, "k", "v");
  (void)result;
  /* @LF:CLEANUP */
  lf_cleanup: ;
  return 0;
}
"""


def test_the_bytes_left_in_the_record_are_freed_after_a_leak(tmp_path: Path) -> None:
    (tmp_path / "vc.h").write_text(HEADER)
    api = parse_prototypes("int vc_entry_from_pair(vc_entry *entry, const char *name, const char *value);")
    facts = collect_facts([tmp_path / "vc.h"], [tmp_path], api=api)
    state = {"target": api[0].to_dict(), "api": [f.to_dict() for f in api], "headers": ["vc.h"],
             "header_facts": facts.to_dict(), "analysis": {"archetype": "stateless_parser"},
             "harness_code": HARNESS, "session_memory": {}}
    signature = "leak@vc_malloc<vc_entry_from_pair<LLVMFuzzerTestOneInput"
    triage = (report_text({"kind": "leak", "signature": signature, "entry_function": "vc_entry_from_pair"})
              + "\nroot_cause: leak\nverdict: harness_misuse")
    values = Enhancer.fix_variables(state, (), "the harness crashes by misusing the API (not a library bug)",
                                    "", triage, "", "(none)")
    facts_ = read_prompt(*render("enhancer_fix", values))
    with using(read_types(facts_.text("Types"), api)):  # as the offline model reads its prompt
        payload, code = enhance(facts_)
    assert code is not None
    assert "free(entry.bytes); entry.bytes = NULL;" in code, (payload, code)
    assert "free(entry.label)" not in code and "entry.owner" not in code.split("/* @LF:CALL */")[1]
