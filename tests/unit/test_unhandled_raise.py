"""An ``abort()`` from the library's own public error raiser is an error nobody handled, not a bug.

Interpreters and some parsers raise errors by jumping to a handler the caller sets up (a
protected call, a try, a panic handler); with none set, the raiser aborts. The invented ``qjs``
library's ``qjs_throw`` does so on a syntax error in the input text: a harness that calls
``qjs_loadtext`` with no handler aborts on most inputs, which was reported as a "real crash
found in library code". An assertion that fails inside the library (``__assert_fail`` calls
``abort``) is still the library's.
"""

from __future__ import annotations

from typing import Any

from agents.crash_analyzer import CrashAnalyzer, CrashFeasibilityAnalyzer
from agents.offline.model import OfflineChatModel
from fuzzkit.api import FunctionDecl, Param

LOAD = FunctionDecl("qjs_loadtext", "void", [Param("J", "qjs_State *"), Param("name", "const char *"),
                                               Param("src", "const char *")]).to_dict()
API = [LOAD, FunctionDecl("qjs_throw", "void", [Param("J", "qjs_State *")]).to_dict(),
       FunctionDecl("qjs_newstate", "qjs_State *", [Param("flags", "int")]).to_dict(),
       FunctionDecl("qjs_error", "void", [Param("J", "qjs_State *"), Param("msg", "const char *")]).to_dict(),
       FunctionDecl("qjs_longjmp", "void", [Param("J", "qjs_State *"), Param("val", "int")]).to_dict()]
HARNESS = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  qjs_State *J = qjs_newstate(0);
  char *text = lf_strndup(data, size);
  if (J == NULL || text == NULL) goto lf_cleanup;
  qjs_loadtext(J, "input", text);
  lf_cleanup: ;
  free(text);
  if (J != NULL) qjs_freestate(J);
  return 0;
}
"""


def _abort(*inner: str) -> dict[str, Any]:
    names = ["__pthread_kill_implementation", "raise", "abort", *inner, "qjs_loadtext",
             "LLVMFuzzerTestOneInput"]
    frames = [{"function": f, "file": "harness.c" if f.startswith("LLVM") else "qjs.c", "line": 10 + i}
              for i, f in enumerate(names)]
    return {"kind": "deadly-signal", "summary": "SUMMARY: libFuzzer: deadly signal", "in_harness": False,
            "near_init": False, "category": "library", "entry_function": "qjs_loadtext",
            "signature": f"deadly-signal@{'<'.join(inner)}<qjs_loadtext", "buffer_origin": "",
            "misuse_hint": "", "frames": frames}


def verdict(crash: dict[str, Any]) -> str:
    state: dict[str, Any] = {"target": LOAD, "api": API, "crash": crash, "harness_code": HARNESS}
    model = OfflineChatModel()
    state["crash_analysis"] = CrashAnalyzer(model).run(CrashAnalyzer.variables(state, ())).output.model_dump()
    judged = CrashFeasibilityAnalyzer(model).run(CrashFeasibilityAnalyzer.variables(state, ()))
    return str(judged.output.verdict)


def test_an_abort_from_the_librarys_public_raiser_is_the_harness_missing_a_handler() -> None:
    assert verdict(_abort("qjs_throw", "qjs_syntaxerror", "qjs_parse")) == "harness_misuse"


def test_an_assertion_failing_inside_the_library_stays_a_library_bug() -> None:
    assert verdict(_abort("__assert_fail", "qjs_parse")) == "library_bug"
    # an abort from an internal function (not the API's raiser) is the library's too
    assert verdict(_abort("qjs_fatal_internal", "qjs_parse")) == "library_bug"


def test_an_abort_reached_through_the_raisers_default_handler_is_the_harness_missing_a_handler() -> None:
    # `qjs_error` -> its static default handler -> `qjs_longjmp`, which aborts with no jump buffer set
    assert verdict(_abort("qjs_longjmp", "qjs_default_error", "qjs_error", "qjs_parse")) == "harness_misuse"
