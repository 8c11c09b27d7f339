"""A crash on an empty input: the crash report says so and the offline fixer guards the entry."""

from __future__ import annotations

from pathlib import Path

from agents.crash_analyzer import report_text
from agents.enhancer import Enhancer
from agents.harness_marks import guard_empty_input
from agents.offline.prompt_reader import read_prompt
from agents.offline.roles import enhance
from fuzzkit.api import FunctionDecl, Param
from prompts import render

TARGET = FunctionDecl("qz_append", "int", (Param("dec", "qz_dec *"), Param("data", "const unsigned char *"),
                                          Param("size", "size_t")), "qz.h")
HARNESS = """#include <stdint.h>
#include "qz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:GUARD */
  if (size > 1048576u) return 0;
  qz_dec *dec = qz_dec_new();
  if (dec == NULL) return 0;
  qz_append(dec, data, size);
  qz_dec_free(dec);
  return 0;
}
"""


def _fix(tmp_path: Path, reproducer: bytes) -> tuple[dict, str]:
    crash_input = tmp_path / "crash-input"
    crash_input.write_bytes(reproducer)
    crash = {"kind": "deadly-signal", "summary": "SUMMARY: libFuzzer: deadly signal",
             "signature": "deadly-signal@append_mem<qz_append<LLVMFuzzerTestOneInput",
             "reproducer": str(crash_input)}
    state = {"target": TARGET.to_dict(), "api": [TARGET.to_dict()], "headers": ["qz.h"],
             "analysis": {"archetype": "object_lifecycle"}, "harness_code": HARNESS,
             "session_memory": {}}
    triage = report_text(crash) + "\nverdict: harness_misuse"
    variables = Enhancer.fix_variables(state, (), "the harness crashes by misusing the API", "", triage,
                                       "", "(none)")
    payload, code = enhance(read_prompt(*render("enhancer_fix", variables)))
    return payload, code or ""


def test_an_empty_crash_input_gets_an_early_return_at_the_guard_slot(tmp_path: Path) -> None:
    payload, code = _fix(tmp_path, b"")
    assert "input size: 0 bytes" in report_text({"reproducer": str(tmp_path / "crash-input")})
    assert payload["fixes"] == ["return early on an empty input (the crash input is empty)"]
    guard = code.index("if (size == 0) return 0;")
    assert code.index("/* @LF:GUARD */") < guard < code.index("qz_dec_new")
    assert guard_empty_input(code) == (code, None)  # once is enough


def test_a_non_empty_crash_input_is_not_guarded_away(tmp_path: Path) -> None:
    payload, code = _fix(tmp_path, b"\x01\x02")
    assert "size == 0" not in code and payload["fixes"] == []
    assert report_text({"reproducer": str(tmp_path / "gone")}).count("input size") == 0
