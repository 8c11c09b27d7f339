"""The union coverage of all of a project's harnesses: what they cover together.

Each harness has its own coverage binary and corpus. Every binary replays its own inputs
into its own profile directory; ``llvm-profdata merge`` joins all profiles (records are
keyed by function name and hash, and the library is the same build in every binary), and
``llvm-cov export`` reads them with every binary as an object, so a library line counts as
covered when any harness reached it.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from fuzzkit.coverage import CoverageReport, export_report, merge_profiles, replay_inputs
from fuzzkit.errors import ToolchainError
from fuzzkit.library import LibraryBuild


def union_coverage(
    cov_binaries_and_inputs: Sequence[tuple[Path, Sequence[Path]]],
    lib: LibraryBuild,
    work_dir: Path,
    timeout_per_input: int = 10,
    writable_tmp: bool = False,
) -> CoverageReport:
    """Coverage of ``lib``'s own files over all harnesses together.

    Args:
        cov_binaries_and_inputs: For each harness, its coverage binary and what to replay
            (corpus directories, seed directories, crash files; see
            :meth:`fuzzkit.runner.FuzzRun.replay_inputs`).
        lib: The library build every binary links (its ``coverage_files`` are reported).
        work_dir: Scratch directory for profiles and logs (replaced).
        timeout_per_input: Seconds allowed per replayed input.
        writable_tmp: The harnesses may write ``/tmp`` (a library's own; see
            :class:`fuzzkit.sandbox.Limits`).

    Raises:
        ToolchainError: No harness was given, a binary is missing, or the LLVM tools fail.
    """
    if not cov_binaries_and_inputs:
        raise ToolchainError("union coverage needs at least one harness", "pass (cov_binary, inputs) pairs")
    start = time.monotonic()
    work_dir = Path(work_dir).resolve()
    shutil.rmtree(work_dir, ignore_errors=True)
    raws: list[Path] = []
    binaries: list[Path] = []
    inputs_run = 0
    for i, (binary, inputs) in enumerate(cov_binaries_and_inputs):
        binary = Path(binary).resolve()
        here = work_dir / f"h{i}"
        inputs_run += replay_inputs(binary, inputs, here / "profraw", here / "replay.log", timeout_per_input,
                                    writable_tmp)
        raws += sorted((here / "profraw").glob("*.profraw"))
        if binary not in binaries:
            binaries.append(binary)
    profdata = merge_profiles(raws, work_dir / "union.profdata", "the harnesses")
    report = export_report(profdata, binaries, lib)
    report.inputs_run = inputs_run
    report.seconds = round(time.monotonic() - start, 3)
    return report
