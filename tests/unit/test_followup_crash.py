"""A crash in a follow-up call after the target is the harness's, and the repair drops it.

From an unseen regex library: a follow-up passed a callout number taken from option bytes,
which the library indexes unchecked; the crash was judged a library bug and ended the run
although the target itself ran fine.
"""

from __future__ import annotations

from agents.offline.followups import crashed_followup, drop_followup, without_crashed_followup

HARNESS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kx_re *re = NULL;
  int rc = 0;
  if (kx_parse(&re, data, size) != 0) goto lf_cleanup;
  /* @LF:CALL */
  rc = kx_search(re, data, data + size);
  /* @LF:USE */
  /* kx_get_data on the result */
  if (re != NULL) {
    int n = 0;
    n = (int)lf_take_int(&lf_opt, 0, 255);
    rc = kx_get_data(re, n);
  }
  /* kx_count on the result */
  if (re != NULL) {
    rc = kx_count(re);
  }
  lf_cleanup: ;
  kx_free(re);
  return 0;
}
"""


def _stack(fn: str, line: int) -> str:
    return f"#0 {fn} /src/kx.c:120\n#1 LLVMFuzzerTestOneInput /run/harness.c:{line}\n#2 main ?:?"


def test_a_crash_in_a_follow_up_is_found_and_its_block_dropped() -> None:
    line = HARNESS.splitlines().index("    rc = kx_get_data(re, n);") + 1
    assert crashed_followup(HARNESS, _stack("kx_get_data", line), "kx_search") == "kx_get_data"
    dropped = drop_followup(HARNESS, "kx_get_data", "kx_search")
    assert dropped is not None
    assert "kx_get_data" not in dropped and "kx_count(re)" in dropped and "kx_search(re" in dropped
    assert dropped.count("{") == dropped.count("}")


def test_a_crash_in_the_target_or_before_it_is_no_follow_up() -> None:
    parse = HARNESS.splitlines().index("  if (kx_parse(&re, data, size) != 0) goto lf_cleanup;") + 1
    assert crashed_followup(HARNESS, _stack("kx_parse", parse), "kx_search") is None
    call = HARNESS.splitlines().index("  rc = kx_search(re, data, data + size);") + 1
    assert crashed_followup(HARNESS, _stack("kx_search", call), "kx_search") is None
    # Inside the library (no harness frame right below the crash): not a follow-up either.
    assert crashed_followup(HARNESS, "#0 kx_get_data /src/kx.c:1\n#1 helper /src/kx.c:2", "kx_search") is None


def _frame(function: str, file: str = "", line: int = 0) -> dict[str, object]:
    return {"function": function, "file": file, "line": line}


# An unseen JSON library's type-specific accessor, called as a follow-up on a parsed value of
# another type: an assertion fails, abort() raises SIGABRT and libFuzzer reports a "deadly signal"
# whose first eight frames are the sanitizer's, libFuzzer's and libc's.
ABORT = {"kind": "deadly-signal", "frames": [
    _frame("__sanitizer_print_stack_trace"), _frame("fuzzer::PrintStackTrace()"),
    _frame("fuzzer::Fuzzer::CrashCallback()"), _frame("?"),
    _frame("__pthread_kill_implementation", "nptl/pthread_kill.c", 43), _frame("raise", "raise.c", 26),
    _frame("abort", "abort.c", 79), _frame("__assert_fail_base", "assert.c", 94),
    _frame("__assert_fail", "assert.c", 103), _frame("kx_get_data", "/src/kx.c", 1473),
    _frame("LLVMFuzzerTestOneInput", "/run/harness.c", 12),
    _frame("fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long)")]}


def test_the_enhancer_s_stack_starts_past_the_fuzzer_s_own_frames() -> None:
    from agents.crash_analyzer import stack_text
    stack = stack_text(ABORT, limit=8)
    assert "LLVMFuzzerTestOneInput /run/harness.c:12" in stack and "__sanitizer" not in stack
    dropped = without_crashed_followup(HARNESS, stack, "kx_search")
    assert dropped is not None and "kx_get_data" not in dropped[0] and "kx_count(re)" in dropped[0]


def test_the_crash_judge_s_hint_drops_the_follow_up_when_no_frame_shows_it() -> None:
    from agents.offline.followups import without_crashed_followup

    triage = ("kind: deadly-signal\nverdict: harness_misuse\n"
              "fix_hint: leave out the follow-up call to kx_get_data\n")
    dropped = without_crashed_followup(HARNESS, triage, "kx_search")
    assert dropped is not None and "kx_get_data" not in dropped[0]


def test_a_leak_a_follow_up_made_drops_the_follow_up_when_nothing_else_repairs_it() -> None:
    from agents.offline.followups import without_crashed_followup

    # The leak's allocation stack runs through a copy the follow-up made (its entry function),
    # not through a harness line the repair could find.
    leak = "#0 malloc ?:?\n#1 kx_strdup /src/kx.c:9\n#2 kx_new_doc /src/kx.c:40\n#3 kx_count /src/kx.c:77"
    assert without_crashed_followup(HARNESS, leak, "kx_search") is None
    dropped = without_crashed_followup(HARNESS, leak, "kx_search", entry="kx_count")
    assert dropped is not None and "kx_count" not in dropped[0] and "kx_get_data(re, n)" in dropped[0]
    # The target itself, or a call before it, is never left out.
    assert without_crashed_followup(HARNESS, leak, "kx_search", entry="kx_search") is None
    assert without_crashed_followup(HARNESS, leak, "kx_search", entry="kx_parse") is None
