"""``bench/bugbench.py`` end to end on an invented library with a planted bug and Debian-style patches.

Two source trees of the ``ring`` library, each with a fuzz harness and a ``debian/patches/``:
one ships the fix of the planted overread (reversing it brings the bug back: the known bug is
found, the crash replays on the vulnerable build only), the other ships a patch that only edits
a comment (the same crash replays on both builds: some other crash, not the known bug). Real
builds, real fuzzing, a tiny budget.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.bench_scripts import load_bench_script

pytestmark = pytest.mark.toolchain

HEADER = "#include <stddef.h>\nint ring_sum(const unsigned char *data, size_t size);\n"
BUGGY = """\
#include "ring.h"
/* Sums a ring record. */
int ring_sum(const unsigned char *data, size_t size) {
  int sum = 0;
  if (size >= 2 && data[0] == 'R' && data[1] == 'G') {
    sum += data[2] + data[3];
  }
  for (size_t i = 0; i < size; i++) sum += data[i];
  return sum;
}
"""
FIXED = BUGGY.replace("size >= 2 && data[0]", "size >= 4 && data[0]")
# Its header by a path relative to itself, as shipped harnesses often do (`../ring.h`): the fixed
# build's twin must be compiled from the fixed tree's copy for it to resolve.
HARNESS = """\
#include <stdint.h>
#include "../ring.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ring_sum(data, size);
  return 0;
}
"""


def _tree(root: Path, shipped: str, before: str, patch: str) -> Path:
    """A source tree as Debian ships it, with ``patch`` (before -> shipped) in debian/patches/."""
    (root / "fuzz").mkdir(parents=True)
    (root / "debian" / "patches").mkdir(parents=True)
    (root / "ring.h").write_text(HEADER)
    (root / "ring.c").write_text(shipped)
    (root / "fuzz" / "ring_fuzzer.c").write_text(HARNESS)
    old = root.parent / f"{root.name}-old.c"
    old.write_text(before)
    labels = ["--label", "a/ring.c", "--label", "b/ring.c"]
    diff = subprocess.run(["diff", "-u", *labels, str(old), str(root / "ring.c")],
                          capture_output=True, text=True, check=False).stdout
    assert diff, "the two versions must differ"
    (root / "debian" / "patches" / patch).write_text(diff)
    (root / "debian" / "patches" / "series").write_text(patch + "\n")
    return root


def test_the_known_bug_is_found_and_another_crash_is_not(tmp_path: Path) -> None:
    fixed = _tree(tmp_path / "ring-fixed", FIXED, BUGGY, "fix-overread.patch")
    comment = _tree(tmp_path / "ring-comment", BUGGY, BUGGY.replace("Sums a", "Adds up a"), "comment.patch")
    build = "{sources: [ring.c], headers: [ring.h]}"
    bugs = tmp_path / "bugs.yaml"
    bugs.write_text(f"bugs:\n  - {{id: ring-overread, source: {{path: {fixed.name}}}, "
                    f"patch: fix-overread.patch, build: {build}}}\n"
                    f"  - {{id: ring-comment, source: {{path: {comment.name}}}, patch: comment.patch,"
                    f" build: {build}}}\n")
    bench = load_bench_script("bugbench")
    out = tmp_path / "out"
    markdown = tmp_path / "table.md"
    rc = bench.main([str(bugs), "--sides", "upstream", "--seconds", "15", "--repeats", "1", "--parallel", "1",
                     "--out", str(out), "--markdown", str(markdown)])
    assert rc == 0
    rows = {r["id"]: r for r in json.loads((out / "bugbench.json").read_text())["rows"]}
    found = rows["ring-overread"]
    assert found["patched_built_files"] == ["ring.c"]
    side = found["sides"]["upstream"]
    assert side["built"] == ["ring_fuzzer.c"] and side["found"] == 1 and side["repeats"] == 1
    crash = side["repeat_runs"][0]["crashes"][0]
    assert crash["class"] == "known" and crash["kind"] == "heap-buffer-overflow" and crash["fixed_kind"] == ""
    assert 0 < side["median_cpu_seconds_to_find"] <= 16
    other = rows["ring-comment"]["sides"]["upstream"]
    assert other["found"] == 0
    crashes = other["repeat_runs"][0]["crashes"]
    assert crashes[0]["class"] == "other" and crashes[0]["fixed_kind"] == "heap-buffer-overflow"
    # Not the known bug: the harness fuzzed on after it, and found it again.
    assert len(crashes) > 1 and {c["class"] for c in crashes} == {"other"}
    text = markdown.read_text()
    assert "| ring-overread |" in text and "| 1/1 |" in text and "| 0/1 |" in text


def test_logicfuzz_runs_on_the_vulnerable_tree_and_its_verdict_is_read(tmp_path: Path) -> None:
    """Both sides, with ``logicfuzz run`` (offline model) on the patch-reversed tree, blind to its harness."""
    fixed = _tree(tmp_path / "ring-fixed", FIXED, BUGGY, "fix-overread.patch")
    bugs = tmp_path / "bugs.yaml"
    bugs.write_text(f"bugs:\n  - {{id: ring-overread, source: {{path: {fixed.name}}}, "
                    "patch: fix-overread.patch, build: {sources: [ring.c], headers: [ring.h]}}\n")
    out = tmp_path / "out"
    rc = load_bench_script("bugbench").main([
        str(bugs), "--seconds", "10", "--repeats", "1", "--parallel", "1", "--fuzz-seconds", "5",
        "--max-iterations", "2", "--out", str(out)])
    assert rc == 0
    row = json.loads((out / "bugbench.json").read_text())["rows"][0]
    init = (out / "ring-overread" / "benchmark.yaml").read_text().partition("\n")[0]
    assert "--path " + str(out / "ring-overread" / "vulnerable" / "ring-fixed") in init
    assert "--ignore-fuzz-harnesses" in init
    assert row["functions_running"] == 1 and row["sides"]["logicfuzz"]["built"] == ["ring_sum/harness.c"]
    assert row["sides"]["logicfuzz"]["found"] == 1 and row["sides"]["upstream"]["found"] == 1
    assert row["logicfuzz_verdict"] == "library_bug"
    # Its library-bug verdict's reproducer, replayed alone on its harness built on both builds.
    verdicts = row["library_bug_verdicts"]
    assert verdicts and verdicts[0]["known_bug"], verdicts
    assert verdicts[0]["replay"] == "vulnerable only", verdicts
