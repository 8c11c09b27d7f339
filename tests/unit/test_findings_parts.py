"""Pieces of the findings output that need no toolchain: the dedupe key, the hex dump, the CLI's errors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fuzzkit.crash import CrashReport, Frame, dedupe_crashes, library_signature
from logicfuzz.cli import main
from logicfuzz.findings_report import hex_dump


def _report(*frames: Frame) -> CrashReport:
    return CrashReport(kind="heap-buffer-overflow", summary="", frames=list(frames), signature="own")


FILL = Frame("mg_fill", "/src/mg/mg.c", 5)
SCAN = Frame("mg_scan", "/src/mg/mg.c", 11)
HARNESS = Frame("LLVMFuzzerTestOneInput", "/run/mg/f/v1/harness.c", 3)


def test_one_fault_reached_through_two_entry_points_has_one_library_signature() -> None:
    direct = _report(FILL, SCAN, HARNESS)
    through_text = _report(FILL, SCAN, Frame("mg_scan_text", "/src/mg/mg.c", 16),
                           Frame("feed", "/run/mg/g/v2/harness.c", 9), HARNESS)
    assert library_signature(direct, "harness.c") == "heap-buffer-overflow@mg_fill<mg_scan"
    assert library_signature(through_text, "harness.c") == library_signature(direct, "harness.c")
    keyed = [replace(r, signature=library_signature(r, "harness.c")) for r in (direct, through_text)]
    assert [g.count for g in dedupe_crashes(keyed)] == [2]


def test_a_crash_in_the_harness_alone_keeps_its_own_signature() -> None:
    assert library_signature(_report(HARNESS), "harness.c") == "own"


def test_hex_dump_is_xxd_like() -> None:
    assert hex_dump(b"MGK!\x00") == "00000000: 4d 47 4b 21 00" + " " * 33 + "  MGK!."
    assert len(hex_dump(bytes(17)).splitlines()) == 2


def test_findings_of_a_directory_without_them_is_an_error_that_says_what_to_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "has no findings/index.json" in err and "rerun it with the same --out" in err
    (tmp_path / "findings").mkdir()
    (tmp_path / "findings" / "index.json").write_text("[{")
    assert main(["findings", str(tmp_path)]) == 2
    assert "is not readable JSON" in capsys.readouterr().err


def test_no_findings_is_an_empty_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "findings").mkdir()
    (tmp_path / "findings" / "index.json").write_text(json.dumps([]))
    assert main(["findings", str(tmp_path)]) == 0
    assert "0 finding(s)" in capsys.readouterr().out
