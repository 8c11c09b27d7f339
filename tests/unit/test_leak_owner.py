"""Whose leak it is: what the harness got back and did not release, or what the library lost.

The invented ``cfgx`` library reads a configuration text into a record the caller sets up and
tears down; its lexer drops a token buffer on an error path (LeakSanitizer reports the block
allocated under ``cfgx_read_text``). A harness that tears the record down cannot fix that: the
leak is the library's. The same report is the harness's when it skips the teardown, frees a
library record with plain ``free``, or when a public maker allocated the block (a field of the
record may hand it back). Judged by the offline model through the prompt a real model gets.
"""

from __future__ import annotations

from typing import Any

from agents.crash_analyzer import CrashAnalyzer, CrashFeasibilityAnalyzer
from agents.offline.model import OfflineChatModel
from fuzzkit.api import FunctionDecl, Param


def _decl(name: str, ret: str, *params: tuple[str, str]) -> dict[str, Any]:
    return FunctionDecl(name, ret, [Param(n, t) for n, t in params]).to_dict()


READ = _decl("cfgx_read_text", "int", ("cfg", "cfgx_t *"), ("text", "const char *"))
API = [READ, _decl("cfgx_setup", "void", ("cfg", "cfgx_t *")),
       _decl("cfgx_teardown", "void", ("cfg", "cfgx_t *")),
       _decl("cfgx_new_node", "cfgx_node *", ("cfg", "cfgx_t *"), ("name", "const char *")),
       _decl("cfgx_parse_reply", "int", ("buf", "const unsigned char *"), ("len", "int"),
             ("out", "struct cfgx_reply **")),
       _decl("cfgx_reply_release", "void", ("reply", "struct cfgx_reply *")),
       _decl("cfgx_view", "int", ("src", "const cfgx_t *"), ("depth", "int"), ("dst", "cfgx_t *")),
       _decl("cfgx_equal", "int", ("a", "const cfgx_t *"), ("b", "const cfgx_t *"))]
HARNESS = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cfgx_t cfg;
  char *text = NULL;
  cfgx_setup(&cfg);
  text = lf_strndup(data, size);
  if (text == NULL) goto lf_cleanup;
  (void)cfgx_read_text(&cfg, (const char *)text);
  lf_cleanup: ;
  free(text);
  cfgx_teardown(&cfg);
  return 0;
}
"""
OUT_HARNESS = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct cfgx_reply *reply = NULL;
  int rc = cfgx_parse_reply(data, (int)size, &reply);
  (void)rc;
  RELEASE
  return 0;
}
"""


def _leak(*inner: str, entry: str = "cfgx_read_text") -> dict[str, Any]:
    frames = [{"function": "__interceptor_realloc", "file": "", "line": 0},
              *({"function": f, "file": "cfgx.c", "line": 10 + i} for i, f in enumerate(inner)),
              {"function": entry, "file": "cfgx.c", "line": 90},
              {"function": "LLVMFuzzerTestOneInput", "file": "harness.c", "line": 7}]
    return {"kind": "leak", "summary": "SUMMARY: AddressSanitizer: 64 byte(s) leaked in 1 allocation(s).",
            "in_harness": False, "near_init": False, "category": "leak", "entry_function": entry,
            "signature": f"leak@{'<'.join([*inner, entry])}<LLVMFuzzerTestOneInput",
            "buffer_origin": "library",
            "misuse_hint": f"memory allocated inside {entry} (called by the harness) was never freed: if the "
                           "API has a free/delete/cleanup function for that result, the harness must call it",
            "frames": frames}


def verdict(harness: str, crash: dict[str, Any], target: dict[str, Any] = READ) -> tuple[str, str]:
    state: dict[str, Any] = {"target": target, "api": API, "crash": crash, "harness_code": harness}
    model = OfflineChatModel()
    triage = CrashAnalyzer(model).run(CrashAnalyzer.variables(state, ()))
    state["crash_analysis"] = triage.output.model_dump()
    variables = CrashFeasibilityAnalyzer.variables(state, ())
    judged = CrashFeasibilityAnalyzer(model).run(variables)
    return str(judged.output.verdict), variables["stack_api"]


def test_a_block_lost_inside_the_library_while_the_harness_releases_everything_is_a_library_bug() -> None:
    judged, shown = verdict(HARNESS, _leak("tokbuf_grow", "cfgx_lex"))
    assert judged == "library_bug"
    assert shown == "int cfgx_read_text(cfgx_t *cfg, const char *text);"  # internal frames not listed


def test_the_same_leak_is_the_harness_when_it_keeps_or_misreleases_what_it_gave() -> None:
    leak = _leak("tokbuf_grow", "cfgx_lex")
    assert verdict(HARNESS.replace("  cfgx_teardown(&cfg);\n", ""), leak)[0] == "harness_misuse"
    assert verdict(HARNESS.replace("cfgx_teardown(&cfg)", "free(&cfg)"), leak)[0] == "harness_misuse"
    # a public maker allocated it on the way: a field of the record may hand it back
    made, shown = verdict(HARNESS, _leak("cfgx_new_node", "cfgx_lex"))
    assert made == "harness_misuse" and "cfgx_node *cfgx_new_node(" in shown


def test_an_out_parameter_is_the_harness_until_it_releases_it() -> None:
    parse = API[4]
    leak = _leak("reply_grow", entry="cfgx_parse_reply")
    assert verdict(OUT_HARNESS.replace("RELEASE", ""), leak, parse)[0] == "harness_misuse"
    assert verdict(OUT_HARNESS.replace("RELEASE", "free(reply);"), leak, parse)[0] == "harness_misuse"
    released = OUT_HARNESS.replace("RELEASE", "cfgx_reply_release(reply);")
    assert verdict(released, leak, parse)[0] == "library_bug"


def test_a_later_call_writing_into_the_object_makes_the_leak_the_harness() -> None:
    """``cfgx_view(&other, 1, &cfg)`` after ``cfgx_read_text(&cfg, ...)`` overwrites what ``cfg``
    held (a view shares another record's memory): the teardown then releases the view, and the
    blocks read into ``cfg`` are lost by the harness, not by the library. A read-only later
    argument (``cfgx_equal(&other, &cfg)``) overwrites nothing."""
    leak = _leak("tokbuf_grow", "cfgx_lex")
    call = "  (void)cfgx_read_text(&cfg, (const char *)text);\n"
    view = "  cfgx_t other;\n  cfgx_setup(&other);\n  (void)cfgx_view(&other, 1, &cfg);\n"
    viewed = HARNESS.replace(call, call + view)
    assert verdict(viewed, leak)[0] == "harness_misuse"
    compared = viewed.replace("cfgx_view(&other, 1, &cfg)", "cfgx_equal(&other, &cfg)")
    assert verdict(compared, leak)[0] == "library_bug"
