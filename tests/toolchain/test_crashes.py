from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fuzzkit.crash import CrashReport, Frame, parse_sanitizer_report
from fuzzkit.harness import HarnessBuild, build_harness
from fuzzkit.library import LibraryBuild
from fuzzkit.runner import FuzzRun, run_fuzzer

pytestmark = pytest.mark.toolchain

MakeHarness = Callable[[str, str], HarnessBuild]

OVERFLOW = "if (data[0] == 'A') keep_alive = (void *)(long)bug_sum(data, size);"
LEAK = "if (data[0] == 'L') keep_alive = bug_keep(data, size);"
USE_AFTER_FREE = "if (data[0] == 'U') keep_alive = (void *)(long)bug_use_after_free(data[0]);"
NULL_IN_HARNESS = "if (data[0] == 'N') { int *volatile p = 0; keep_alive = (void *)(long)*p; }"
LOOP = "if (data[0] == 'T') { volatile unsigned spin = 0; for (;;) spin++; }"
HOG = "if (data[0] == 'M') for (;;) { void **block = malloc(1 << 20); memset(block, 1, 1 << 20); *block = keep_alive; keep_alive = block; }"  # noqa: E501


def _fuzz(build: HarnessBuild, work: Path, **kwargs: object) -> FuzzRun:
    assert build.fuzz_binary
    return run_fuzzer(Path(build.fuzz_binary), work, **kwargs)  # type: ignore[arg-type]


def test_overflow_in_library_is_found_and_described(make_harness: MakeHarness, tmp_path: Path) -> None:
    build = make_harness("overflow", OVERFLOW)
    first = _fuzz(build, tmp_path / "one", seconds=30, extra_args=["-seed=1"])
    assert first.crashed and not first.timed_out and first.seconds < 30
    crash = first.crash
    assert crash is not None
    assert crash.kind == "heap-buffer-overflow"
    assert crash.signature == "heap-buffer-overflow@sum_bytes<bug_sum<LLVMFuzzerTestOneInput"
    assert [f.function for f in crash.project_frames] == ["sum_bytes", "bug_sum", "LLVMFuzzerTestOneInput"]
    assert crash.project_frames[0].file.endswith("buggy.c") and crash.project_frames[0].line == 8
    assert not crash.in_harness and not crash.near_init
    # A real library bug: the overflowed copy was allocated by the library, no misuse evidence.
    assert crash.category == "library" and crash.entry_function == "bug_sum"
    assert crash.access == "READ of size 1" and crash.buffer_origin == "library"
    assert crash.region.startswith("0 bytes to the right of") and crash.misuse_hint == ""
    assert crash.summary.startswith("SUMMARY: AddressSanitizer: heap-buffer-overflow")
    assert "0x" not in crash.signature
    assert len(first.crash_files) == 1 and Path(first.crash_files[0]).read_bytes().startswith(b"A")
    assert crash.reproducer == first.crash_files[0]
    assert "ERROR: AddressSanitizer: heap-buffer-overflow" in crash.excerpt
    assert FuzzRun.from_dict(json.loads(json.dumps(first.to_dict()))) == first

    second = _fuzz(build, tmp_path / "two", seconds=30, extra_args=["-seed=2"])
    assert second.crash is not None and second.crash.signature == crash.signature


def test_different_bugs_have_different_signatures(make_harness: MakeHarness, tmp_path: Path) -> None:
    leak = _fuzz(make_harness("leak", LEAK), tmp_path / "leak", seconds=30).crash
    uaf = _fuzz(make_harness("uaf", USE_AFTER_FREE), tmp_path / "uaf", seconds=30).crash
    assert leak is not None and uaf is not None
    assert leak.kind == "leak" and leak.signature == "leak@bug_keep<LLVMFuzzerTestOneInput"
    assert uaf.kind == "heap-use-after-free"
    assert uaf.signature == "heap-use-after-free@bug_use_after_free<LLVMFuzzerTestOneInput"
    assert len({leak.signature, uaf.signature}) == 2
    assert leak.category == "leak" and leak.entry_function == "bug_keep"
    assert "never freed" in leak.misuse_hint and "bug_keep" in leak.misuse_hint
    assert uaf.category == "library" and uaf.access.startswith("READ")


def test_crash_in_harness_is_flagged(make_harness: MakeHarness, tmp_path: Path) -> None:
    run = _fuzz(make_harness("nullharness", NULL_IN_HARNESS), tmp_path, seconds=30)
    assert run.crash is not None
    assert run.crash.kind == "SEGV" and run.crash.in_harness
    assert run.crash.signature == "SEGV@LLVMFuzzerTestOneInput"
    assert run.crash.category == "harness" and "harness's own code" in run.crash.misuse_hint


def test_crash_on_the_first_input_is_near_init(buggy_lib: LibraryBuild, tmp_path: Path) -> None:
    source = tmp_path / "eager.c"
    source.write_text(
        '#include <stdint.h>\n#include "buggy.h"\n'
        "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return bug_use_after_free((int)n); }\n"
    )
    build = build_harness(source, buggy_lib, tmp_path / "out")
    run = _fuzz(build, tmp_path / "work", seconds=30)
    assert run.crash is not None and run.crash.near_init
    assert run.crash.kind == "heap-use-after-free" and not run.crash.in_harness
    assert run.crash.category == "near-init" and "first inputs" in run.crash.misuse_hint


def test_endless_loop_is_stopped_as_a_timeout(make_harness: MakeHarness, tmp_path: Path) -> None:
    run = _fuzz(make_harness("loop", LOOP), tmp_path, seconds=20, timeout_per_input=1)
    assert run.crash is not None and run.crash.kind == "timeout"
    assert run.crashed and not run.timed_out
    assert run.seconds < 20 + 1 + 15
    assert any(Path(f).name.startswith("timeout-") for f in run.crash_files)
    assert run.crash.signature == "timeout@LLVMFuzzerTestOneInput"
    assert run.crash.category == "timeout"


def test_unbounded_allocation_is_stopped_as_oom(make_harness: MakeHarness, tmp_path: Path) -> None:
    run = _fuzz(make_harness("hog", "#include <string.h>\n" + HOG), tmp_path, seconds=20, rss_limit_mb=300)
    assert run.crash is not None and run.crash.kind == "oom" and run.crash.category == "oom"
    assert run.seconds < 20 + 10 + 15
    # libFuzzer reports it (with a reproducer) unless the memory cgroup, its backstop, kills first.
    assert any(Path(f).name.startswith("oom-") for f in run.crash_files) or run.limit == "memory"


def test_report_parsing_edge_cases() -> None:
    assert parse_sanitizer_report("") is None
    assert parse_sanitizer_report("INFO: Seed: 1\n#2\tINITED cov: 3 ft: 3\nDone 10 runs\n") is None
    report = parse_sanitizer_report(
        "==7==ERROR: AddressSanitizer: stack-overflow on address 0x7ffe (pc 0x55 bp 0x7f sp 0x7f T0)\n"
        "    #0 0x55 in walk /src/lib/tree.c:40\n"
        "    #1 0x55 in walk /src/lib/tree.c:44:12\n"
        "    #2 0x55 in walk /src/lib/tree.c:44:12\n"
        "    #3 0x55 in visit /src/lib/tree.c:60:3\n"
        "    #4 0x7f in __libc_start_main csu/../csu/libc-start.c:360:3\n"
        "SUMMARY: AddressSanitizer: stack-overflow /src/lib/tree.c:40 in walk\n",
        harness_name="fuzz_tree.c",
    )
    assert report is not None
    assert report.kind == "stack-overflow"
    assert report.signature == "stack-overflow@walk<visit"  # recursion collapsed
    assert report.frames[-1] == Frame("__libc_start_main", "csu/../csu/libc-start.c", 360)
    assert not report.in_harness and not report.near_init
    assert report.category == "library" and report.entry_function == ""  # no harness frame
    assert CrashReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


def test_a_report_the_fuzzer_could_not_symbolize_comes_from_the_input_replayed_alone(
        make_harness: MakeHarness, tmp_path: Path) -> None:
    """A harness that used up its descriptors leaves none for the symbolizer's pipe.

    After the first input every descriptor is taken, so the fuzzing process prints bare
    addresses; the crash input run alone in a fresh process is symbolized, and is placed in
    the library as it should be.
    """
    build = make_harness("fdleak", (
        "static int runs;\n"
        "if (++runs > 1) while (open(\"/dev/null\", O_RDONLY) >= 0) {}\n" + OVERFLOW),
        includes="#include <fcntl.h>")
    run = _fuzz(build, tmp_path, seconds=30, extra_args=["-seed=1"])
    assert run.crash is not None and run.crash.kind == "heap-buffer-overflow"
    assert "external symbolizer" in Path(run.log_path).read_text()  # the fuzzing process could not
    assert [f.function for f in run.crash.project_frames] == [
        "sum_bytes", "bug_sum", "LLVMFuzzerTestOneInput"]
    assert run.crash.category == "library"
    assert run.crash.reproducer == run.crash_files[0]
