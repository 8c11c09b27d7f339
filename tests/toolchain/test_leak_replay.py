"""A leak whose allocation stack stops inside a dependency is replayed with the slow unwinder.

Distribution libraries (a bignum or compression library the target links) are built without
frame pointers. ASan's fast unwinder, used on every ``malloc`` while fuzzing, follows frame
pointers and stops at the first such frame: the leak report shows ``malloc`` and the
dependency's allocator, nothing of the library or the harness, and cannot be told from a leak of
the library's own (the offline triage then calls it a library bug and the run stops there).
The runner replays that input with ``fast_unwind_on_malloc=0`` and keeps the full report.

The dependency here is one function built the way such libraries are (``-fomit-frame-pointer``,
``%rbp`` holding its own data while it calls ``malloc``), linked as an uninstrumented archive.
"""

from __future__ import annotations

import platform
import re
import subprocess
from pathlib import Path

import pytest

from fuzzkit.crash_replay import _symbolized_replay
from fuzzkit.harness import build_harness
from fuzzkit.library import BuildRecipe, build_library
from fuzzkit.runner import run_fuzzer
from fuzzkit.sandbox import Limits
from fuzzkit.source import SourceSpec, fetch_source

pytestmark = [pytest.mark.toolchain,
              pytest.mark.skipif(platform.machine() != "x86_64", reason="the dependency is x86-64 assembly")]

DEP = r"""
#include <stdlib.h>
void *dep_alloc(size_t n) {
  void *p;
  __asm__ volatile("push %%rbp\n\t.cfi_adjust_cfa_offset 8\n\t.cfi_rel_offset %%rbp, 0\n\t"
                   "xor %%ebp, %%ebp\n\t"
                   "call malloc@PLT\n\t"
                   "pop %%rbp\n\t.cfi_adjust_cfa_offset -8\n\t.cfi_restore %%rbp"
                   : "=a"(p), "+D"(n)
                   : : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc");
  return p;
}
"""

HEADER = """\
#ifndef QN_H
#define QN_H
#include <stddef.h>
typedef struct qn_num qn_num;
int qn_read(const unsigned char *data, size_t n, qn_num **out);
void qn_free(qn_num *num);
#endif
"""

SOURCE = """\
#include "qn.h"
#include <string.h>
#include <stdlib.h>
void *dep_alloc(size_t n);
struct qn_num { size_t n; unsigned char *digits; };
int qn_read(const unsigned char *data, size_t n, qn_num **out) {
  qn_num *num = calloc(1, sizeof *num);
  if (!num) return -1;
  num->digits = dep_alloc(n + 1);
  if (num->digits) memcpy(num->digits, data, n);
  num->n = n;
  *out = num;
  return 0;
}
void qn_free(qn_num *num) { if (num) { free(num->digits); free(num); } }
"""

# The harness frees the record but forgets its digits: the leaked block is the dependency's.
HARNESS = """\
#include <stdint.h>
#include <stdlib.h>
#include "qn.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  qn_num *num = NULL;
  if (qn_read(data, size, &num) == 0) free(num);
  return 0;
}
"""


def _qn_harness(tmp_path: Path, cache: Path) -> Path:
    """The harness above, built against the library linking the frame-pointer-less dependency."""
    dep = tmp_path / "dep"
    dep.mkdir()
    (dep / "dep.c").write_text(DEP)
    subprocess.run(["cc", "-O2", "-fomit-frame-pointer", "-mno-red-zone", "-fPIC", "-c", "dep.c"],
                   cwd=dep, check=True)
    subprocess.run(["ar", "rcs", "libdep.a", "dep.o"], cwd=dep, check=True)
    root = tmp_path / "qn"
    root.mkdir()
    (root / "qn.h").write_text(HEADER)
    (root / "qn.c").write_text(SOURCE)
    lib = build_library(fetch_source(SourceSpec(path=str(root))),
                        BuildRecipe(sources=["qn.c"], headers=["qn.h"], ldflags=[str(dep / "libdep.a")]),
                        cache=cache)
    (tmp_path / "harness.c").write_text(HARNESS)
    built = build_harness(tmp_path / "harness.c", lib, tmp_path / "out")
    assert built.ok, built.log
    return Path(str(built.fuzz_binary))


def test_a_leak_cut_short_by_a_dependency_is_replayed_with_its_whole_stack(
    tmp_path: Path, cache: Path
) -> None:
    binary = _qn_harness(tmp_path, cache)
    run = run_fuzzer(binary, tmp_path / "run", seconds=20, seed=1, runs=2000)

    assert run.crash is not None and run.crash.kind == "leak", Path(run.log_path).read_text()[-3000:]
    functions = [f.function for f in run.crash.frames]
    # The fuzzing run's own report ends in the dependency; the replay's goes on to the library
    # function that called it and the harness.
    log = Path(run.log_path).read_text()
    first = log[: log.index("SUMMARY:")]
    assert "qn_read" not in first and "dep_alloc" in first
    replayed = re.search(r"allocation stack stopped before any project frame(, as a corpus)?\) ====", log)
    assert replayed, log[-4000:]
    # The plain replay came first and, its stack cut as short, was said to be of no use.
    assert "gave no symbolized frame" in log
    order = [functions.index(f) for f in ("dep_alloc", "qn_read", "LLVMFuzzerTestOneInput")]
    assert order == sorted(order)
    assert [f.function for f in run.crash.project_frames][:1] == ["qn_read"]
    assert run.crash.entry_function == "qn_read"


def test_the_corpus_form_of_the_replay_finds_the_leak_right_after_the_input(
    tmp_path: Path, cache: Path
) -> None:
    # The fallback when a lone run's exit-time check finds nothing: one input as a corpus, where
    # libFuzzer checks for leaks after each input, with the slow unwinder.
    binary = _qn_harness(tmp_path, cache)
    work = tmp_path / "replay"
    work.mkdir()
    unit = tmp_path / "unit"
    unit.write_bytes(b"12345")
    log = work / "fuzz.log"

    crash = _symbolized_replay(binary, work, unit, log, "harness.c", 10, Limits(),
                               slow_unwind=True, as_corpus=True)

    assert crash is not None and crash.kind == "leak", log.read_text()[-3000:]
    assert [f.function for f in crash.project_frames][:1] == ["qn_read"]
    assert "as a corpus) ====" in log.read_text()
    assert sorted(p.name for p in work.iterdir()) == ["fuzz.log"]  # no corpus or artifact left
