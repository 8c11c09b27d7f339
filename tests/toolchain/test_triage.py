from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fuzzkit.crash import CrashReport, dedupe_crashes, parse_sanitizer_report
from fuzzkit.harness import HarnessBuild, build_harness
from fuzzkit.library import LibraryBuild
from fuzzkit.runner import run_fuzzer

pytestmark = pytest.mark.toolchain

# cJSON_Parse needs a NUL-terminated string; libFuzzer's input is not terminated.
CJSON_MISUSE = """\
#include <stdint.h>
#include <stddef.h>
#include "cJSON.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON_Delete(cJSON_Parse((const char *)data));
  return 0;
}
"""

# The harness overflows its own buffer (one byte too small for the terminator).
HARNESS_OVERFLOW = """\
if (data[0] == 'H') {
  char *copy = malloc(size);
  memcpy(copy, data, size);
  copy[size] = 0;
  keep_alive = (void *)(long)lib_ok((const unsigned char *)copy, size);
  free(copy);
}
"""


def test_library_function_misused_on_purpose_is_flagged_as_misuse(
    cjson_lib: LibraryBuild, tmp_path: Path
) -> None:
    source = tmp_path / "misuse.c"
    source.write_text(CJSON_MISUSE)
    build = build_harness(source, cjson_lib, tmp_path / "out")
    assert build.ok and build.fuzz_binary, build.log
    run = run_fuzzer(Path(build.fuzz_binary), tmp_path / "run", seconds=3)
    crash = run.crash
    assert crash is not None and crash.kind == "heap-buffer-overflow"
    # The fault is inside the library, but the evidence points at the harness.
    assert not crash.in_harness and crash.category in ("near-init", "library")
    assert crash.entry_function == "cJSON_Parse" and crash.crash_function == "strlen"
    assert crash.access.startswith("READ of size") and crash.buffer_origin == "fuzzer-input"
    assert "to the right of" in crash.region
    assert "NUL-terminated" in crash.misuse_hint and "cJSON_Parse" in crash.misuse_hint
    assert [f.function for f in crash.project_frames][-1] == "LLVMFuzzerTestOneInput"


def test_buggy_harness_is_blamed(make_harness: Callable[[str, str], HarnessBuild], tmp_path: Path) -> None:
    build = make_harness("ownbug", "#include <string.h>\n" + HARNESS_OVERFLOW)
    assert build.fuzz_binary
    run = run_fuzzer(Path(build.fuzz_binary), tmp_path, seconds=20, extra_args=["-seed=3"])
    crash = run.crash
    assert crash is not None and crash.kind == "heap-buffer-overflow"
    assert crash.in_harness and crash.category == "harness"
    assert crash.access == "WRITE of size 1" and crash.buffer_origin == "harness"
    assert crash.entry_function == "" and "ownbug.c" in crash.misuse_hint


def test_null_dereference_reached_from_the_harness() -> None:
    report = parse_sanitizer_report(
        "INFO: Seed: 1\n#2\tINITED cov: 3 ft: 3\n"
        "==9==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000008 (pc 0x1 bp 0x2 sp 0x3 T0)\n"
        "==9==The signal is caused by a READ memory access.\n"
        "==9==Hint: address points to the zero page.\n"
        "    #0 0x55 in node_name /src/lib/tree.c:12:20\n"
        "    #1 0x55 in tree_first_name /src/lib/tree.c:30:10\n"
        "    #2 0x55 in LLVMFuzzerTestOneInput /src/h/harness.c:9:3\n"
        "    #3 0x55 in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) (/b+0x1)\n"
        "SUMMARY: AddressSanitizer: SEGV /src/lib/tree.c:12:20 in node_name\n",
        harness_name="harness.c",
    )
    assert report is not None and report.category == "library" and report.kind == "SEGV"
    assert report.entry_function == "tree_first_name" and report.crash_function == "node_name"
    assert "null-pointer" in report.misuse_hint and "tree_first_name" in report.misuse_hint


def test_crash_signatures_deduplicate(
    make_harness: Callable[[str, str], HarnessBuild], tmp_path: Path
) -> None:
    body = (
        "if (data[0] == 'A') keep_alive = (void *)(long)bug_sum(data, size);\n"
        "if (data[0] == 'U') keep_alive = (void *)(long)bug_use_after_free(data[0]);\n"
    )
    build = make_harness("two_bugs", body)
    assert build.fuzz_binary
    reports: list[CrashReport] = []
    for i, first_input in enumerate((b"A", b"Uq", b"Axyz", b"U")):
        seeds = tmp_path / f"seeds{i}"
        seeds.mkdir()
        (seeds / "input").write_bytes(first_input)
        run = run_fuzzer(Path(build.fuzz_binary), tmp_path / f"run{i}", seconds=20, seed_dirs=[seeds])
        assert run.crash is not None and run.crash.reproducer
        reports.append(run.crash)
    groups = dedupe_crashes([reports[0], *(r.to_dict() for r in reports[1:])])
    assert [g.signature for g in groups] == [
        "heap-buffer-overflow@sum_bytes<bug_sum<LLVMFuzzerTestOneInput",
        "heap-use-after-free@bug_use_after_free<LLVMFuzzerTestOneInput",
    ]
    assert [g.count for g in groups] == [2, 2]
    assert groups[0].report == reports[0] and groups[1].report == reports[1]
    for group in groups:
        assert len(group.reproducers) == 2 and all(Path(p).is_file() for p in group.reproducers)
    assert dedupe_crashes([]) == []
