"""Which library lines each harness covers, and the fewest harnesses that cover them all.

A harness's lines come from replaying its inputs through its coverage binary (as
:func:`fuzzkit.coverage.measure_coverage` does) and reading ``llvm-cov export -format=lcov``:
a line of the library's own files (``LibraryBuild.coverage_files``) counts when it ran at
least once. :func:`greedy_cover` then picks harnesses by set cover over those lines.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from fuzzkit.coverage import merge_profiles, replay_inputs
from fuzzkit.errors import ToolchainError
from fuzzkit.library import LibraryBuild
from fuzzkit.tools import tool

Line = tuple[str, int]


def parse_lcov(text: str, wanted: Iterable[str]) -> set[Line]:
    """(file, line) of every line with a non-zero count in ``wanted`` files of an lcov report; pure."""
    files, current, lines = set(wanted), "", set()
    for row in text.splitlines():
        if row.startswith("SF:"):
            current = row[3:]
        elif row.startswith("DA:") and current in files:
            number, count = row[3:].split(",")[:2]
            if int(count) > 0:
                lines.add((current, int(number)))
    return lines


def covered_lines(profdata: Path, binaries: Sequence[Path], lib: LibraryBuild) -> set[Line]:
    """The library lines ``profdata`` records as run, read through ``binaries``' coverage mapping.

    Raises:
        ToolchainError: ``llvm-cov export`` fails.
    """
    objects = [str(binaries[0])] + [arg for b in binaries[1:] for arg in ("-object", str(b))]
    proc = subprocess.run(
        [tool("llvm-cov"), "export", "-format=lcov", "-skip-expansions", f"-instr-profile={profdata}",
         *objects, *lib.coverage_files],
        capture_output=True, text=True, check=False, timeout=600)  # fmt: skip
    if proc.returncode != 0:
        raise ToolchainError(f"llvm-cov export -format=lcov failed: {proc.stderr.strip()[-300:]}",
                             "llvm-cov must be the same LLVM version as clang")
    return parse_lcov(proc.stdout, lib.coverage_files)


def harness_lines(cov_binary: Path, inputs: Sequence[Path], lib: LibraryBuild, work_dir: Path,
                  timeout_per_input: int = 10) -> set[Line]:
    """The library lines one harness runs on ``inputs`` (corpus directories or files).

    ``work_dir`` is replaced; it keeps the profiles and the replay log.

    Raises:
        ToolchainError: The binary is missing, no profile was written, or the LLVM tools fail.
    """
    work_dir = Path(work_dir).resolve()
    shutil.rmtree(work_dir, ignore_errors=True)
    prof_dir = work_dir / "profraw"
    replay_inputs(Path(cov_binary), inputs, prof_dir, work_dir / "replay.log", timeout_per_input)
    profdata = merge_profiles(sorted(prof_dir.glob("*.profraw")), work_dir / "lines.profdata",
                              Path(cov_binary).name)
    return covered_lines(profdata, [Path(cov_binary).resolve()], lib)


def greedy_cover(line_sets: Sequence[set[Line]]) -> list[tuple[int, int]]:
    """Set cover, greedily: the harnesses whose lines together are every set's lines.

    Each step takes the set that adds the most lines not yet covered (the earlier one on a
    tie), until none adds any. Returns ``(index, lines it added)`` in the order taken; a set
    whose lines the others already cover is left out.
    """
    covered: set[Line] = set()
    chosen: list[tuple[int, int]] = []
    left = list(range(len(line_sets)))
    while left:
        best = max(left, key=lambda i: (len(line_sets[i] - covered), -i))
        gain = len(line_sets[best] - covered)
        if gain == 0:
            break
        chosen.append((best, gain))
        covered |= line_sets[best]
        left.remove(best)
    return chosen
