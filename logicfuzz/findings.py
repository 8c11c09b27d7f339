"""A run's findings: ``RUN/findings/<id>/`` per distinct library bug, written at the end of a run.

Only crashes judged a library bug (``crash_outcome`` ``library_bug``) whose input still crashes
when replayed alone become findings. Each gets its minimized reproducer, the symbolized stack of
that replay, the harness that found it, ``replay.sh`` (one line: the fuzz binary on the
reproducer) and a ``report.md`` to file. The same fault reached by several targets' harnesses
(the same kind and library frames, :func:`fuzzkit.crash.library_signature`) is one finding
listing every target. Crashes judged ``unclear``, and library-bug verdicts whose input does not
crash alone, go to ``RUN/findings/unclear/<id>/`` in the same form, never among the findings.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePath
from typing import Any

from fuzzkit.crash import CrashReport, Frame, dedupe_crashes, library_frames, library_signature
from fuzzkit.reproducer import Reproducer, reproduce
from logicfuzz.findings_report import render_report
from logicfuzz.results import LIBRARY_BUG, crash_outcome

FINDINGS = "findings"
UNCLEAR = "unclear"
HARNESS = "harness.c"


@dataclass
class Candidate:
    """One target's crash that may become a finding, and its replay once reproduced."""

    project: str
    function: str
    crash: dict[str, Any]
    binary: Path
    unclear: str = ""
    """Why the crash is not a finding ("" for a library bug that replays)."""
    found: Reproducer | None = None

    @property
    def target(self) -> str:
        """``project/function``."""
        return f"{self.project}/{self.function}"

    @property
    def harness(self) -> Path:
        """The source of the harness version that crashed (built beside its binary)."""
        return self.binary.parent / HARNESS


def candidates(records: list[dict[str, Any]]) -> list[Candidate]:
    """The crashes of ``records`` judged a library bug or unclear whose binary and input are on disk."""
    out = []
    for rec in records:
        outcome, crash = crash_outcome(rec), rec.get("crash") or {}
        binary = crash.get("fuzz_binary") or ""
        if outcome not in (LIBRARY_BUG, "unclear") or not binary or not crash.get("reproducer"):
            continue
        if not (Path(binary).is_file() and Path(crash["reproducer"]).is_file()):
            continue
        why = "" if outcome == LIBRARY_BUG else f"verdict {crash.get('verdict') or 'none'}"
        out.append(Candidate(str(rec["project"]), str(rec["function"]), crash, Path(binary), why))
    return out


def finding_id(project: str, signature: str, report: CrashReport) -> str:
    """``<kind>-<top library function>-<8 hex>``: readable, a file name, stable across runs."""
    frames = library_frames(report, HARNESS) or report.project_frames
    top = frames[0].function if frames else "unknown"
    digest = hashlib.sha1(f"{project}\n{signature}".encode()).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{report.kind}-{top}")[:80] + f"-{digest}"


def write_findings(out: Path, records: list[dict[str, Any]], sources: Mapping[str, str],
                   *, runs: int = 10000, seconds: int = 30) -> list[dict[str, Any]]:
    """Write ``out/findings/`` afresh from the run's records; one summary entry per finding.

    ``sources`` says where each project's library came from (a line for ``report.md``);
    ``runs`` and ``seconds`` bound each libFuzzer minimization step.
    """
    work = out / f".{FINDINGS}.tmp"
    shutil.rmtree(work, ignore_errors=True)
    found = candidates(records)
    for i, each in enumerate(found):
        each.found = reproduce(each.binary, Path(each.crash["reproducer"]), work / f"in-{i}",
                               work / f"run-{i}", harness_name=HARNESS, runs=runs, seconds=seconds)
        if each.found.report is None and not each.unclear:
            each.unclear = "the input does not crash when replayed alone"
    entries = []
    for group in _groups(found):
        entries.append(_write_one(work, out, group, sources.get(group[0].project, "")))
    for scratch in work.glob("run-*"):
        shutil.rmtree(scratch)
    for scratch in work.glob("in-*"):
        scratch.unlink()
    final = out / FINDINGS
    shutil.rmtree(final, ignore_errors=True)
    if work.is_dir():
        work.rename(final)
    else:
        final.mkdir()
    (final / "index.json").write_text(json.dumps(entries, indent=1))
    return entries


def _report_of(each: Candidate) -> CrashReport:
    """The replay's report; the run's own (no frames) when the input did not crash alone."""
    if each.found is not None and each.found.report is not None:
        return each.found.report
    crash = each.crash
    return CrashReport(kind=str(crash.get("kind") or "crash"), summary=str(crash.get("summary") or ""),
                       signature=str(crash.get("signature") or crash.get("kind") or "crash"))


def _groups(found: list[Candidate]) -> list[list[Candidate]]:
    """Candidates of one project, one verdict class and one library signature, in run order."""
    keyed: list[CrashReport] = []
    by_key: dict[str, Candidate] = {}
    for i, each in enumerate(found):
        report = _report_of(each)
        signature = f"{each.project}\n{bool(each.unclear)}\n{library_signature(report, HARNESS)}"
        keyed.append(replace(report, signature=signature, reproducer=str(i)))
        by_key[str(i)] = each
    return [[by_key[r] for r in group.reproducers] for group in dedupe_crashes(keyed)]


def _write_one(work: Path, out: Path, group: list[Candidate], source: str) -> dict[str, Any]:
    """One finding's folder (its first target's reproducer, stack and harness); its summary entry."""
    first = group[0]
    assert first.found is not None
    report = _report_of(first)
    ident = finding_id(first.project, library_signature(report, HARNESS), report)
    where = Path(UNCLEAR, ident) if first.unclear else Path(ident)
    folder = work / where
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(first.found.path, folder / "reproducer")
    stack = report.excerpt if first.found.report else first.crash.get("excerpt") or ""
    (folder / "stack.txt").write_text(stack + "\n", encoding="utf-8")
    harness = first.harness.read_text(errors="replace") if first.harness.is_file() else ""
    (folder / HARNESS).write_text(harness, encoding="utf-8")
    binary = os.path.relpath(first.binary, out / FINDINGS / where)
    replay = f'cd "$(dirname "$0")" && exec {binary} reproducer'
    (folder / "replay.sh").write_text(f"#!/bin/sh\n{replay}\n")
    (folder / "replay.sh").chmod(0o755)
    frames = library_frames(report, HARNESS)
    entry = {
        "id": ident, "project": first.project, "kind": report.kind,
        "summary": "; ".join(filter(None, (report.access, report.region))),
        "signature": library_signature(report, HARNESS),
        "top_frame": _where(frames[0]) if frames else "", "frames": [_where(f) for f in frames],
        "targets": [c.target for c in group], "versions": [c.crash.get("version") for c in group],
        "reproducer_bytes": first.found.size, "original_bytes": first.found.original_bytes,
        "minimized": first.found.minimized, "replays": first.found.report is not None,
        "unclear": first.unclear, "folder": str(Path(FINDINGS, where)), "source": source,
        "replay": f"{binary} reproducer",
    }
    (folder / "finding.json").write_text(json.dumps(entry, indent=1))
    data = (folder / "reproducer").read_bytes()
    (folder / "report.md").write_text(render_report(entry, stack, harness, data), encoding="utf-8")
    return entry


def _where(frame: Frame) -> str:
    """``function file.c:12``: the file by name only, as a maintainer knows it (not this machine's path)."""
    return f"{frame.function} {PurePath(frame.file).name}:{frame.line}" if frame.file else frame.function


def load_findings(run_dir: Path) -> list[dict[str, Any]]:
    """The findings a run wrote (``findings/index.json``), unclear ones included and marked.

    Raises:
        ValueError: ``run_dir`` has no ``findings/`` folder, or its index is not readable.
    """
    index = Path(run_dir) / FINDINGS / "index.json"
    if not index.is_file():
        raise ValueError(f"{run_dir} has no {FINDINGS}/index.json: pass the --out directory of a finished "
                         "`logicfuzz run` (rerun it with the same --out to write the findings: finished "
                         "targets are not run again)")
    try:
        return list(json.loads(index.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{index} is not readable JSON ({exc}); rerun `logicfuzz run` with the same --out "
                         "to write it again") from exc
