"""A crash in a follow-up call: the library's when the harness made none of its arguments up.

A harness that compiles a regular expression and prints it with the library's public print
function to a stream it opened hit a use-after-free inside the library, freed during the
compile; it was dismissed as misuse because the print was a follow-up. Its arguments are all
the library's own (the compiled object) or the C library's (the stream): a library bug. A
follow-up given a number picked from the option bytes, or a release the harness made itself,
stays the harness's.
"""

from __future__ import annotations

from agents.crash_analyzer import report_text
from agents.offline.crash_roles import judge_feasibility
from agents.offline.prompt_reader import PromptFacts

HARNESS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = lf_strndup(data, size);
  rx_t *re = rx_compile((const char *)text);
  if (re != NULL) {
    FILE *out = fopen("/dev/null", "w");
    if (out != NULL) { rx_print(out, re); fclose(out); }
    int n = (int)lf_take_int(&lf_opt, 0, 255);
    rx_group_name(re, n);
    rx_free(re);
    rx_free(re);
  }
  free(text);
  return 0;
}
"""
API = "```c\nrx_t *rx_compile(const char *pattern);\nvoid rx_print(FILE *out, rx_t *re);\n" \
      "const char *rx_group_name(rx_t *re, int n);\nvoid rx_free(rx_t *re);\n```"


def _verdict(kind: str, line: int, called: str, freed_in: str = "") -> dict:
    report = report_text({"kind": kind, "freed_first_in": freed_in})
    stack = f"#0 {called} rx.c:40\n#1 LLVMFuzzerTestOneInput harness.c:{line}\n"
    facts = PromptFacts(role="crash_feasibility_analyzer", sections={
        "Target function": "rx_t *rx_compile(const char *pattern);",
        "Current harness": f"```c\n{HARNESS}```", "Crash report": report, "Stack": stack,
        "Library functions the harness calls": API, "Library functions in the stack": API})
    payload, _code = judge_feasibility(facts)
    return payload


def test_a_use_after_free_in_a_print_of_the_library_s_own_object_is_a_library_bug() -> None:
    verdict = _verdict("heap-use-after-free", 6, "rx_print", freed_in="rx_compile")
    assert verdict["verdict"] == "library_bug" and verdict["feasible"], verdict
    assert "rx_print" in verdict["reasoning"]


def test_a_follow_up_given_an_option_number_stays_misuse() -> None:
    verdict = _verdict("heap-buffer-overflow", 8, "rx_group_name")
    assert verdict["verdict"] == "harness_misuse", verdict


def test_memory_the_harness_released_itself_stays_misuse() -> None:
    assert _verdict("heap-use-after-free", 6, "rx_print", freed_in="rx_free")["verdict"] == "harness_misuse"
    assert _verdict("double-free", 10, "rx_free", freed_in="rx_free")["verdict"] == "harness_misuse"
