"""A library bug found by a run becomes a finding: minimized reproducer, stack, harness, report.

The invented ``mg`` library copies the body of an input that starts with the magic ``MGK!``
into an 8-byte buffer without checking its length: a heap overflow in ``mg_fill`` for any body
longer than 8 bytes. Two targets' harnesses reach it (bytes, and a NUL-terminated text), each
with a 204-byte crash input; the run's records judge both a library bug. Built and replayed
with the real toolchain: one finding for both targets, its reproducer minimized by libFuzzer
and still crashing in ``mg_fill``, its report naming the frame.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fuzzkit.harness import build_harness
from fuzzkit.library import BuildRecipe, build_library
from fuzzkit.source import SourceSpec, fetch_source
from logicfuzz.cli import main
from logicfuzz.findings import load_findings, write_findings

pytestmark = pytest.mark.toolchain

HEADER = """\
#ifndef MG_H
#define MG_H
#include <stddef.h>
int mg_scan(const unsigned char *data, size_t n);
int mg_scan_text(const char *text);
#endif
"""

SOURCE = """\
#include "mg.h"
#include <stdlib.h>
#include <string.h>
static void mg_fill(unsigned char *dst, const unsigned char *src, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = (unsigned char)(src[i] ^ 0x5a);
}
int mg_scan(const unsigned char *data, size_t n) {
  if (n < 4 || memcmp(data, "MGK!", 4) != 0) return 0;
  unsigned char *body = malloc(8);
  if (!body) return -1;
  mg_fill(body, data + 4, n - 4);  /* the planted bug: the body may be longer than 8 bytes */
  int first = body[0];
  free(body);
  return first;
}
int mg_scan_text(const char *text) { return mg_scan((const unsigned char *)text, strlen(text)); }
"""

BYTES_HARNESS = """\
#include <stdint.h>
#include "mg.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { mg_scan(data, size); return 0; }
"""

TEXT_HARNESS = """\
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "mg.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\\0';
  mg_scan_text(text);
  free(text);
  return 0;
}
"""

CRASH_INPUT = b"MGK!" + b"A" * 200


def _target(run: Path, lib: Any, function: str, version: int, code: str,
            outcome: str = "library_bug") -> dict[str, Any]:
    """A target directory as a run leaves it, and its result record with the crash."""
    vdir = run / "mg" / function / f"v{version}"
    vdir.mkdir(parents=True)
    (vdir / "harness.c").write_text(code)
    built = build_harness(vdir / "harness.c", lib, vdir)
    assert built.ok, built.log
    unit = vdir / "run" / "artifacts" / "crash-0"
    unit.parent.mkdir(parents=True)
    unit.write_bytes(CRASH_INPUT)
    verdict = {"library_bug": "library_bug", "unclear": None}.get(outcome, "harness_misuse")
    return {"project": "mg", "function": function, "compiles": True, "runs": True,
            "crashes": outcome == "library_bug",
            "crash": {"kind": "heap-buffer-overflow", "signature": "heap-buffer-overflow@mg_fill",
                      "summary": "", "reproducer": str(unit), "verdict": verdict,
                      "feasible": outcome == "library_bug", "version": version, "final_version": version,
                      "outcome": outcome, "fuzz_binary": str(built.fuzz_binary)}}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Path:
    """A run with the bug found by two targets, one unclear crash and one repaired misuse crash."""
    root = tmp_path_factory.mktemp("mg")
    (root / "mg.h").write_text(HEADER)
    (root / "mg.c").write_text(SOURCE)
    lib = build_library(fetch_source(SourceSpec(path=str(root))),
                        BuildRecipe(sources=["mg.c"], headers=["mg.h"]), cache=cache)
    run = tmp_path_factory.mktemp("run")
    records = [_target(run, lib, "mg_scan", 1, BYTES_HARNESS),
               _target(run, lib, "mg_scan_text", 2, TEXT_HARNESS),
               _target(run, lib, "mg_scan_unjudged", 1, BYTES_HARNESS, outcome="unclear"),
               _target(run, lib, "mg_scan_misuse", 3, BYTES_HARNESS, outcome="repaired")]
    entries = write_findings(run, records, {"mg": "source: path mg"}, runs=4000, seconds=20)
    assert [e["id"] for e in entries] == [e["id"] for e in load_findings(run)]
    return run


def _bug(run: Path) -> dict[str, Any]:
    bugs = [e for e in load_findings(run) if not e["unclear"]]
    assert len(bugs) == 1, bugs
    return bugs[0]


def test_one_finding_for_the_bug_both_targets_reach(run_dir: Path) -> None:
    bug = _bug(run_dir)
    assert bug["id"].startswith("heap-buffer-overflow-mg_fill-")
    assert bug["targets"] == ["mg/mg_scan", "mg/mg_scan_text"]
    assert bug["top_frame"].startswith("mg_fill ") and bug["replays"] is True
    folder = run_dir / "findings" / bug["id"]
    assert sorted(p.name for p in folder.iterdir()) == ["finding.json", "harness.c", "replay.sh",
                                                         "report.md", "reproducer", "stack.txt"]
    assert (folder / "harness.c").read_text() == BYTES_HARNESS
    assert "mg_fill" in (folder / "stack.txt").read_text()
    assert not (run_dir / ".findings.tmp").exists()


def test_the_minimized_reproducer_replays_the_crash(run_dir: Path) -> None:
    bug = _bug(run_dir)
    folder = run_dir / "findings" / bug["id"]
    data = (folder / "reproducer").read_bytes()
    assert bug["minimized"] and bug["original_bytes"] == len(CRASH_INPUT)
    assert data.startswith(b"MGK!") and 12 < len(data) < len(CRASH_INPUT) // 2, data
    replay = subprocess.run([str(folder / "replay.sh")], capture_output=True, text=True, timeout=60)
    assert replay.returncode != 0 and "heap-buffer-overflow" in replay.stderr, replay.stderr[-2000:]
    assert "mg_fill" in replay.stderr


def test_the_report_names_the_frame_and_holds_what_a_maintainer_needs(run_dir: Path) -> None:
    bug = _bug(run_dir)
    report = (run_dir / "findings" / bug["id"] / "report.md").read_text()
    assert report.startswith("# heap-buffer-overflow in mg_fill\n")
    assert "source: path mg" in report and "`mg/mg_scan`, `mg/mg_scan_text`" in report
    assert "00000000: 4d 47 4b 21" in report  # the reproducer as hex, magic first
    assert "mg_scan(data, size)" in report and "./harness reproducer" in report


def test_unclear_crashes_are_kept_apart_and_misuse_is_no_finding(run_dir: Path) -> None:
    unclear = [e for e in load_findings(run_dir) if e["unclear"]]
    assert [e["targets"] for e in unclear] == [["mg/mg_scan_unjudged"]]
    assert unclear[0]["folder"].startswith("findings/unclear/")
    report = (run_dir / unclear[0]["folder"] / "report.md").read_text()
    assert "Not a confirmed library bug" in report
    assert all("mg/mg_scan_misuse" not in e["targets"] for e in load_findings(run_dir))


def test_logicfuzz_findings_lists_them(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", str(run_dir), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["id"] for e in listed] == [e["id"] for e in load_findings(run_dir)]
    assert main(["findings", str(run_dir)]) == 0
    text = capsys.readouterr().out
    assert _bug(run_dir)["id"] in text and "mg_fill" in text and "mg/mg_scan_text" in text
