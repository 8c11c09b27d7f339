"""A read just past libFuzzer's input where the documentation says the input is NUL-terminated.

``ntx`` (written here) counts words in ``(buf, len, flags)``; its header documents the option
``NTX_TERMINATED`` with "the input is NUL-terminated", and with it the count reads up to the NUL,
not ``len`` bytes. ``ntx_check``'s ``text`` is documented as NUL-terminated (it checks the
terminator at ``text[len]``). A harness handing either libFuzzer's bytes as they are (no NUL
after them) reads just past their end: harness misuse, never a library bug, even though it
passed the data with its exact size; the repair hands a NUL-terminated copy and the harness
runs clean. A real overread inside the library stays a library bug: past the NUL of a copy the
harness terminated, or past ``len`` when the option was not passed.
Real clang builds and libFuzzer runs; the offline agents judge from their rendered prompts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents.crash_analyzer import CrashAnalyzer, CrashFeasibilityAnalyzer, report_text, stack_text
from agents.enhancer import Enhancer
from agents.offline.model import OfflineChatModel
from agents.sections import terminated_arguments
from fuzzkit.api import FunctionDecl
from fuzzkit.crash import CrashReport
from fuzzkit.facts_block import read_facts
from fuzzkit.harness import build_harness
from fuzzkit.header_facts import NOTES_KIND, FunctionNotes, HeaderFacts
from fuzzkit.library import LibraryBuild
from fuzzkit.runner import run_fuzzer
from fuzzkit.toolchain import Fuzzkit
from tests.toolchain.conftest import assert_runs_clean, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

HEADER = """\
#ifndef NTX_H
#define NTX_H
#include <stddef.h>

/* Options for ntx_count(). */
#define NTX_SPACES     0x1  /* count runs of spaces too */
#define NTX_TERMINATED 0x2  /* the input is NUL-terminated: len is ignored */

/* Counts the words in buf, len bytes long. Returns the count. */
int ntx_count(const char *buf, size_t len, int flags);

/**
 * ntx_check:
 * @text: a NUL-terminated string
 * @len: its length, without the NUL
 *
 * Returns 1 when text holds only letters, else 0.
 */
int ntx_check(const char *text, size_t len);

/* Counts the words of a C string, a backslash escaping the character after it. */
int ntx_words(const char *text);
#endif
"""

SOURCE = """\
#include "ntx.h"
int ntx_count(const char *buf, size_t len, int flags) {
  int words = 0, in = 0;
  for (size_t i = 0; (flags & NTX_TERMINATED) ? buf[i] != '\\0' : i < len; i++) {
    int space = buf[i] == ' ';
    if (space && (flags & NTX_SPACES) && buf[i + 1] == ' ') words++;  /* a bug: peeks past len */
    if (!space && !in) words++;
    in = !space;
  }
  return words;
}
int ntx_check(const char *text, size_t len) {
  if (text[len] != '\\0') return 0;
  for (size_t i = 0; i < len; i++)
    if (!((text[i] | 32) >= 'a' && (text[i] | 32) <= 'z')) return 0;
  return 1;
}
int ntx_words(const char *text) {
  int words = 0, in = 0;
  for (size_t i = 0; text[i] != '\\0'; i++) {
    if (text[i] == '\\\\') i++;  /* a bug: skips the NUL after a final backslash */
    if (text[i] != ' ' && !in) words++;
    in = text[i] != ' ';
  }
  return words;
}
"""

CHECK = """\
#include <stdint.h>
#include <stddef.h>
#include "ntx.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  ntx_check((const char *)data, size);
  return 0;
}
"""

# The calls on a terminated copy (made as the repair makes it), or without the option: what the
# library then overreads is its own.
TERMINATED = """\
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ntx.h"
static char *lf_strndup(const uint8_t *p, size_t n) {
  char *s = (char *)malloc(n + 1);
  if (s == NULL) return NULL;
  if (n) memcpy(s, p, n);
  s[n] = '\\0';
  return s;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = lf_strndup(data, size);
  if (text == NULL) return 0;
  ntx_words(text);
  ntx_count(text, size, NTX_TERMINATED);
  free(text);
  return 0;
}
"""
COUNTED = """\
#include <stdint.h>
#include <stddef.h>
#include "ntx.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ntx_count((const char *)data, size, NTX_SPACES);
  return 0;
}
"""


@pytest.fixture(scope="module")
def ntx(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> tuple[LibraryBuild, list[FunctionDecl]]:
    lib = tiny_library(tmp_path_factory.mktemp("ntx"), "ntx", HEADER, SOURCE, cache)
    return lib, Fuzzkit().parse_api(lib)


def _crash(code: str, lib: LibraryBuild, work: Path, seed: int = 1) -> CrashReport | None:
    work.mkdir(parents=True)
    (work / "harness.c").write_text(code)
    built = build_harness(work / "harness.c", lib, work / "out")
    assert built.ok, built.log
    return run_fuzzer(Path(str(built.fuzz_binary)), work / "run", seconds=20, seed=seed, runs=200000).crash


def _state(code: str, crash: CrashReport, api: list[FunctionDecl], facts: HeaderFacts,
           target: str) -> dict[str, Any]:
    """The graph's state at a crash, its crash record made as the execution node makes it."""
    state: dict[str, Any] = {"target": next(d for d in api if d.name == target).to_dict(),
                             "api": [d.to_dict() for d in api], "harness_code": code,
                             "header_facts": facts.to_dict()}
    reproducer = crash.to_dict().get("reproducer") or ""
    state["crash"] = {**crash.to_dict(), "reproducer": reproducer,
                      "terminated_arguments": terminated_arguments(state)}
    return state


def _verdict(state: dict[str, Any]) -> dict[str, Any]:
    model = OfflineChatModel()
    state["crash_analysis"] = CrashAnalyzer(model).run(CrashAnalyzer.variables(state, ())).output.model_dump()
    judged = CrashFeasibilityAnalyzer(model).run(CrashFeasibilityAnalyzer.variables(state, ()))
    state["crash_analysis"].update(judged.output.model_dump())
    return judged.output.model_dump()


def _repaired(state: dict[str, Any]) -> str:
    triage = state["crash_analysis"]
    text = report_text(state["crash"]) + "\n" + "\n".join(
        f"{k}: {triage.get(k, '')}" for k in ("root_cause", "verdict", "fix_hint"))
    text += "\nstack:\n" + stack_text(state["crash"], limit=8)
    problem = "the harness crashes by misusing the API (not a library bug)"
    variables = Enhancer.fix_variables(state, (), problem, "", text, "", "")
    reply = Enhancer(OfflineChatModel()).run(variables)
    return str(reply.code)


def test_the_option_documented_as_nul_terminated_is_read_from_the_header(
        ntx: tuple[LibraryBuild, list[FunctionDecl]]) -> None:
    facts = header_facts(ntx[0])
    assert facts.terminated_flags == {"NTX_TERMINATED": 2}, facts.terminated_flags
    assert facts.terminated == {"ntx_check": ["text"]}, facts.terminated
    notes = read_facts(facts.render(), NOTES_KIND, FunctionNotes)  # the Types section's data
    assert notes is not None and notes.terminated_flags == {"NTX_TERMINATED": 2}


def test_the_drafted_option_word_carrying_the_flag_is_misuse_and_a_terminated_copy_runs(
        ntx: tuple[LibraryBuild, list[FunctionDecl]], tmp_path: Path) -> None:
    lib, api = ntx
    facts = header_facts(lib)
    code = offline_draft(lib, facts, "ntx_count")
    assert "ntx_count((const char *)data" in code, code  # the raw input, and flags drawn from the input
    crash = _crash(code, lib, tmp_path / "v1")
    assert crash is not None and crash.kind == "heap-buffer-overflow", "the unterminated read never happened"
    state = _state(code, crash, api, facts, "ntx_count")
    assert "documented nul-terminated input: flags NTX_TERMINATED=0x2" in report_text(state["crash"])
    verdict = _verdict(state)
    assert verdict["verdict"] == "harness_misuse" and not verdict["feasible"], verdict
    assert "NTX_TERMINATED" in verdict["reasoning"], verdict
    fixed = _repaired(state)
    assert "lf_terminated = lf_strndup(data, (size_t)(" in fixed, fixed
    assert "ntx_count((const char *)lf_terminated" in fixed, fixed
    assert_runs_clean(fixed, lib, tmp_path / "v2")


def test_a_parameter_documented_as_nul_terminated_given_the_raw_input_is_misuse(
        ntx: tuple[LibraryBuild, list[FunctionDecl]], tmp_path: Path) -> None:
    lib, api = ntx
    facts = header_facts(lib)
    crash = _crash(CHECK, lib, tmp_path / "v1")
    assert crash is not None and crash.kind == "heap-buffer-overflow"
    state = _state(CHECK, crash, api, facts, "ntx_check")
    verdict = _verdict(state)
    assert verdict["verdict"] == "harness_misuse", verdict
    assert "text is NUL-terminated" in verdict["reasoning"], verdict
    fixed = _repaired(state)
    assert "ntx_check((const char *)lf_terminated, size)" in fixed, fixed
    assert_runs_clean(fixed, lib, tmp_path / "v2")


@pytest.mark.parametrize("code", [TERMINATED, COUNTED], ids=["past-the-nul", "past-len-without-the-flag"])
def test_an_overread_inside_the_library_stays_a_library_bug(
        ntx: tuple[LibraryBuild, list[FunctionDecl]], tmp_path: Path, code: str) -> None:
    lib, api = ntx
    crash = _crash(code, lib, tmp_path / "v1")
    assert crash is not None and crash.kind == "heap-buffer-overflow", "the library's overread never happened"
    assert crash.entry_function == ("ntx_words" if code == TERMINATED else "ntx_count"), crash.excerpt
    verdict = _verdict(_state(code, crash, api, header_facts(lib), crash.entry_function))
    assert verdict["verdict"] == "library_bug" and verdict["feasible"], verdict
