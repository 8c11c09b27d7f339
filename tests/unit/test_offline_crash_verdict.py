"""The offline crash roles read the same prompts a real model gets and judge from their facts.

The crash dicts are what ``fuzzkit.crash`` parsed from real ASan reports of the ``kv`` library
(its ``kv_check`` overflows a buffer it allocates itself: a library bug).
"""

from __future__ import annotations

from typing import Any

import pytest

from agents.crash_analyzer import CrashAnalyzer, CrashFeasibilityAnalyzer
from agents.offline.model import OfflineChatModel

TARGET = {"name": "kv_check", "signature": "int kv_check(const char * text)", "return_type": "int",
          "params": [{"name": "text", "type": "const char *"}]}
LIBRARY_BUG = {
    "kind": "heap-buffer-overflow",
    "summary": "SUMMARY: AddressSanitizer: heap-buffer-overflow kv.c:47:60 in kv_check",
    "in_harness": False, "near_init": False,
    "signature": "heap-buffer-overflow@kv_check<LLVMFuzzerTestOneInput",
    "category": "library", "entry_function": "kv_check", "access": "WRITE of size 1",
    "buffer_origin": "library", "misuse_hint": "",
    "frames": [{"function": "kv_check", "file": "kv.c", "line": 47},
               {"function": "LLVMFuzzerTestOneInput", "file": "harness.c", "line": 12}],
}
UNTERMINATED = {**LIBRARY_BUG, "kind": "heap-buffer-overflow", "access": "READ of size 1",
                "buffer_origin": "fuzzer-input",
                "misuse_hint": "kv_check made a READ of size 1, and that region is libFuzzer's own input "
                               "buffer, which the harness passed to kv_check unchanged"}
IN_HARNESS = {**LIBRARY_BUG, "in_harness": True, "category": "harness",
              "misuse_hint": "the fault is in the harness's own code (harness.c:12): fix the harness"}
# ASan's "nested bug in the same thread": a WRITE on the stack and no frame at all.
NO_FRAMES = {**LIBRARY_BUG, "kind": "stack-buffer-overflow", "signature": "stack-buffer-overflow",
             "category": "unknown", "entry_function": "", "access": "WRITE of size 4", "frames": []}


def verdict(crash: dict[str, Any]) -> str:
    state: dict[str, Any] = {"target": TARGET, "api": [TARGET], "crash": crash,
                             "harness_code": "int LLVMFuzzerTestOneInput(void) { return 0; }"}
    model = OfflineChatModel()
    triage = CrashAnalyzer(model).run(CrashAnalyzer.variables(state, ()))
    state["crash_analysis"] = triage.output.model_dump()
    judged = CrashFeasibilityAnalyzer(model).run(CrashFeasibilityAnalyzer.variables(state, ()))
    return str(judged.output.verdict)


@pytest.mark.parametrize(("crash", "expected"), [
    (LIBRARY_BUG, "library_bug"),  # an empty misuse hint is no evidence of misuse
    (UNTERMINATED, "harness_misuse"),
    (IN_HARNESS, "harness_misuse"),
    (NO_FRAMES, "harness_misuse"),  # nothing places the fault in the library: no library bug
])
def test_verdict_follows_the_parsed_report(crash: dict[str, Any], expected: str) -> None:
    assert verdict(crash) == expected
