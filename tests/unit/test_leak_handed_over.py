"""A leak of an object the harness made, handed to a parent and let go, is the harness's, not a bug.

Invented tree library: ``tr_new_node()`` makes a node, ``tr_add_child(parent, node)`` takes it
over (the harness sets its variable to NULL when the add succeeded, and releases it only when
the add failed), ``tr_detach_last(parent)`` takes a child back out and hands it to the caller.
A harness that detaches and never releases what came back leaks the node ``tr_new_node`` made:
LeakSanitizer's stack is ``malloc <- tr_new_node <- LLVMFuzzerTestOneInput``, and the harness's
conditional release of the node does not make the leak the library's. Seen on cJSON
(``cJSON_CreateArray`` / ``cJSON_AddItemToArray`` / ``cJSON_DetachItemViaPointer``), where the
leak was reported as a library bug. Judged by the offline model through the prompt a real model gets.
"""

from __future__ import annotations

from typing import Any

from agents.crash_analyzer import CrashAnalyzer, CrashFeasibilityAnalyzer
from agents.offline.model import OfflineChatModel
from tests.unit.test_leak_owner import _decl

NEW = _decl("tr_new_node", "tr_node *")
API = [NEW, _decl("tr_add_child", "int", ("parent", "tr_node *"), ("node", "tr_node *")),
       _decl("tr_detach_last", "tr_node *", ("parent", "tr_node *")),
       _decl("tr_free", "void", ("node", "tr_node *"))]
HARNESS = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tr_node *root = tr_new_node();
  if (root == NULL) return 0;
  {
    tr_node *item = NULL;
    int rc = 0;
    item = tr_new_node();
    if (item == NULL) goto lf_skip_1;
    rc = tr_add_child(root, item);
    if (rc) item = NULL;
    lf_skip_1: ;
    if (item != NULL) tr_free(item);
  }
  {
    tr_node *back = NULL;
    back = tr_detach_last(root);
  }
  tr_free(root);
  return 0;
}
"""


def _leak() -> dict[str, Any]:
    frames = [{"function": "malloc", "file": "", "line": 0},
              {"function": "tr_new_node", "file": "tr.c", "line": 12},
              {"function": "LLVMFuzzerTestOneInput", "file": "harness.c", "line": 7}]
    return {"kind": "leak", "summary": "SUMMARY: AddressSanitizer: 64 byte(s) leaked in 1 allocation(s).",
            "in_harness": False, "near_init": False, "category": "leak", "entry_function": "tr_new_node",
            "signature": "leak@tr_new_node<LLVMFuzzerTestOneInput", "buffer_origin": "library",
            "misuse_hint": "", "frames": frames}


def judged(harness: str) -> str:
    """The offline verdict on the leak for ``harness``."""
    state: dict[str, Any] = {"target": NEW, "api": API, "crash": _leak(), "harness_code": harness}
    model = OfflineChatModel()
    state["crash_analysis"] = CrashAnalyzer(model).run(CrashAnalyzer.variables(state, ())).output.model_dump()
    judge = CrashFeasibilityAnalyzer(model)
    return str(judge.run(CrashFeasibilityAnalyzer.variables(state, ())).output.verdict)


def test_an_object_handed_to_a_parent_then_let_go_leaks_by_the_harness() -> None:
    assert judged(HARNESS) == "harness_misuse"
    # released unconditionally, never handed over: what leaks then is lost inside the library
    kept = HARNESS.replace("    rc = tr_add_child(root, item);\n    if (rc) item = NULL;\n", "")
    assert judged(kept) == "library_bug"
