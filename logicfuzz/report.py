"""``logicfuzz report RUN_DIR``: what a run achieved, as a self-contained HTML page and Markdown.

Everything comes from files the run wrote; nothing is recomputed or guessed:

- ``summary.json`` and each ``<project>/<function>/result.json`` (or ``error.json``);
- ``run.json`` for the run's settings (model, budgets, memory mode);
- optional ``baseline.json`` (or a ``baseline`` key of ``summary.json``) with coverage to compare
  against, e.g. the library's upstream harness or a naive one::

      {"label": "upstream harness, 60 s",
       "libraries": {"acme": {"lines": 37.3, "branches": 30.1, "label": "acme_read_fuzzer"}},
       "targets": {"acme/acme_parse": {"lines": {"covered": 301, "count": 1200, "percent": 25.1}}}}

  a value is a percentage or a ``{covered, count, percent}`` dict; a target's entry beats its
  library's; a result may also carry its own ``baseline`` object of the same shape;
- optional ``experience.json`` describing the experience bank::

      {"bank": "fuzz-c", "growth": [{"label": "acme/acme_parse", "items": 3}, ...],
       "items": [{"id": "m1", "title": "...", "trust": 0.55, "validation_level": 1,
                  "status": "active"}, ...]}

Coverage over time comes from ``coverage_history[*].progress`` (one curve per harness
version) or ``coverage_over_time`` (the best version), each ``[[seconds, cov, ft], ...]``; when a
result has neither, each version's ``v<N>/run/fuzz.log`` (or the copied ``fuzz.log``) gives cov
against executions instead of seconds, since libFuzzer's status lines carry no time.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logicfuzz.results import LIBRARY_BUG, crash_outcome

METRICS = ("lines", "branches", "functions")
_STATUS_LINE = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)", re.M)


class ReportError(ValueError):
    """The directory is not a run directory (or its files cannot be read)."""


@dataclass
class Timeline:
    """libFuzzer's ``cov`` per harness version, against seconds or executions."""

    x_unit: str  # "seconds" or "executions"
    series: list[tuple[str, list[tuple[float, float]]]]


@dataclass
class Target:
    """One target's record plus what the report adds from files beside it."""

    project: str
    function: str
    record: dict[str, Any]
    baseline: dict[str, float] = field(default_factory=dict)
    baseline_label: str = ""
    timeline: Timeline | None = None
    harness: str = ""

    @property
    def key(self) -> str:
        """``project/function``."""
        return f"{self.project}/{self.function}"

    @property
    def error(self) -> str:
        """The error that ended the target, or ``""``."""
        return str(self.record.get("error") or "")

    @property
    def status(self) -> str:
        """One word: error, crash (a library bug only), runs, builds or no-build."""
        if self.error:
            return "error"
        if crash_outcome(self.record) == LIBRARY_BUG:
            return "crash"
        if self.record.get("runs"):
            return "runs"
        return "builds" if self.record.get("compiles") else "no-build"

    def percent(self, metric: str) -> float | None:
        """Measured coverage of ``metric`` in percent, or None when not measured."""
        return percent_of((self.record.get("coverage") or {}).get(metric))


@dataclass
class RunData:
    """Everything one report shows."""

    run_dir: Path
    settings: dict[str, Any]
    targets: list[Target]
    experience: dict[str, Any] | None
    baseline_label: str
    generated: str
    union: dict[str, float] = field(default_factory=dict)
    """Line/branch percent of all the run's harnesses together (``summary.json``)."""
    union_baseline: dict[str, float] = field(default_factory=dict)
    """The library-level baseline the union compares with."""

    def union_line(self) -> str:
        """``All harnesses together: 65.8% lines, 67.2% branches; baseline 40.7% / 43.4% (1.62x)``."""
        if not self.union:
            return ""
        text = "All harnesses together: " + ", ".join(
            f"{fmt_pct(self.union.get(m))} {m}" for m in ("lines", "branches") if m in self.union)
        base = self.union_baseline
        if base.get("lines"):
            text += (f"; baseline {fmt_pct(base.get('lines'))} lines, {fmt_pct(base.get('branches'))} "
                     f"branches ({self.union.get('lines', 0) / base['lines']:.2f}x lines)")
        return text

    def libraries(self) -> dict[str, list[Target]]:
        """Targets grouped by project, in run order."""
        out: dict[str, list[Target]] = {}
        for t in self.targets:
            out.setdefault(t.project, []).append(t)
        return out

    def totals(self) -> dict[str, int]:
        """Counts and sums over all targets."""
        recs = [t.record for t in self.targets]
        return {
            "targets": len(recs),
            "building": sum(bool(r.get("compiles")) for r in recs),
            "running": sum(bool(r.get("runs")) for r in recs),
            "crashing": sum(crash_outcome(r) == LIBRARY_BUG for r in recs),
            "repaired": sum(crash_outcome(r) == "repaired" for r in recs),
            "errors": sum(bool(r.get("error")) for r in recs),
            "model_calls": sum(int(r.get("model_calls") or 0) for r in recs),
            "tokens": sum(int(r.get("prompt_tokens") or 0) + int(r.get("completion_tokens") or 0)
                          for r in recs),
        }


def percent_of(value: Any) -> float | None:
    """A percentage from a number or a ``{covered, count, percent}`` dict."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dict):
        if value.get("percent") is not None:
            return float(value["percent"])
        if value.get("count"):
            return 100.0 * float(value.get("covered") or 0) / float(value["count"])
    return None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path} is not readable JSON ({exc}); rerun the step that wrote it") from exc


def _records(run_dir: Path) -> list[dict[str, Any]]:
    """Target records: per-target files win over the summary (they are newer after a resume)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    summary = run_dir / "summary.json"
    if summary.is_file():
        for rec in _read_json(summary).get("results") or []:
            found[(str(rec.get("project", "")), str(rec.get("function", "")))] = rec
    for name in ("error.json", "result.json"):  # result.json last: it beats an old error
        for path in sorted(run_dir.glob(f"*/*/{name}")):
            rec = _read_json(path)
            rec.setdefault("project", path.parent.parent.name)
            rec.setdefault("function", path.parent.name)
            found[(str(rec["project"]), str(rec["function"]))] = rec
    order = {f: i for i, f in enumerate(_read_run_json(run_dir).get("functions") or [])}
    return sorted(found.values(), key=lambda r: (order.get(r["function"], len(order)),
                                                 str(r["project"]), str(r["function"])))


def _read_run_json(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "run.json"
    return _read_json(path) if path.is_file() else {}


def _baselines(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "baseline.json"
    if path.is_file():
        return dict(_read_json(path))
    summary = run_dir / "summary.json"
    if summary.is_file():
        return dict(_read_json(summary).get("baseline") or {})
    return {}


def _baseline_for(rec: dict[str, Any], base: dict[str, Any]) -> tuple[dict[str, float], str]:
    key = f"{rec['project']}/{rec['function']}"
    for entry in (rec.get("baseline"), (base.get("targets") or {}).get(key),
                  (base.get("libraries") or {}).get(rec["project"])):
        if isinstance(entry, dict):
            values = {m: v for m in METRICS if (v := percent_of(entry.get(m))) is not None}
            if values:
                return values, str(entry.get("label") or base.get("label") or "baseline")
    return {}, ""


def _points(rows: Any) -> list[tuple[float, float]]:
    return [(float(r[0]), float(r[1])) for r in rows or [] if isinstance(r, list | tuple) and len(r) >= 2]


def timeline_of(rec: dict[str, Any], target_dir: Path) -> Timeline | None:
    """Coverage-over-time curves of a target (see the module doc for the sources)."""
    series: dict[str, list[tuple[float, float]]] = {}
    for row in rec.get("coverage_history") or []:
        pts = _points(row.get("progress"))
        if pts:
            series[f"v{row.get('version')}"] = pts
    if not series and _points(rec.get("coverage_over_time")):
        series[f"v{rec.get('best_version')} (best)"] = _points(rec["coverage_over_time"])
    if series:
        return Timeline("seconds", list(series.items()))
    logs = sorted(target_dir.glob("v*/run/fuzz.log"), key=lambda p: _version_number(p.parent.parent.name))
    labelled = [(p.parent.parent.name, p) for p in logs] or [
        (f"v{rec.get('best_version')} (fuzz.log)", target_dir / "fuzz.log")]
    from_logs = [(label, _log_points(path)) for label, path in labelled if path.is_file()]
    from_logs = [(label, pts) for label, pts in from_logs if pts]
    return Timeline("executions", from_logs) if from_logs else None


def _version_number(name: str) -> int:
    return int(name[1:]) if name[1:].isdigit() else 0


def _log_points(path: Path) -> list[tuple[float, float]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    return [(float(m[1]), float(m[2])) for m in _STATUS_LINE.finditer(text)]


def load_run(run_dir: Path) -> RunData:
    """Read a run directory; :class:`ReportError` says what is missing."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir} is not a directory: pass the --out directory of `logicfuzz run`")
    records = _records(run_dir)
    if not records:
        raise ReportError(f"{run_dir} holds no results (no summary.json, no <project>/<function>/"
                          "result.json): run `logicfuzz run BENCHMARK --out RUN_DIR` first")
    base = _baselines(run_dir)
    targets = []
    for rec in records:
        tdir = run_dir / str(rec["project"]) / str(rec["function"])
        values, label = _baseline_for(rec, base)
        harness = tdir / "harness.c"
        targets.append(Target(str(rec["project"]), str(rec["function"]), rec, values, label,
                              timeline_of(rec, tdir),
                              harness.read_text(errors="replace") if harness.is_file() else ""))
    exp_path = run_dir / "experience.json"
    summary = _read_json(run_dir / "summary.json") if (run_dir / "summary.json").is_file() else {}
    union = {m: v for m in ("lines", "branches")
             if (v := percent_of((summary.get("union_coverage") or {}).get(m))) is not None}
    projects = {t.project for t in targets}
    lib_base = (base.get("libraries") or {}).get(next(iter(projects))) if len(projects) == 1 else None
    union_base = {m: v for m in ("lines", "branches")
                  if isinstance(lib_base, dict) and (v := percent_of(lib_base.get(m))) is not None}
    return RunData(
        run_dir=run_dir, settings=_read_run_json(run_dir), targets=targets,
        experience=_read_json(exp_path) if exp_path.is_file() else None,
        baseline_label=str(base.get("label") or ""),
        generated=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        union=union, union_baseline=union_base,
    )


def fmt_pct(value: float | None) -> str:
    """``37.3%`` or ``-``."""
    return "-" if value is None else f"{value:.1f}%"


def fmt_delta(value: float | None, base: float | None) -> str:
    """``+4.2`` points against the baseline, or ``""``."""
    return "" if value is None or base is None else f"{value - base:+.1f}"


def crash_line(rec: dict[str, Any]) -> str:
    """``kind: summary (library bug)``, ``repaired: v3 kind: summary (harness misuse)`` or ``""``."""
    crash = rec.get("crash") or {}
    outcome = crash_outcome(rec)
    if not outcome:
        return ""
    text = f"{crash.get('kind') or 'crash'}: {crash.get('summary') or crash.get('signature') or ''}"
    text = text.strip().rstrip(":")
    if outcome == "repaired":
        version = f"v{crash['version']} " if crash.get("version") is not None else ""
        return f"repaired: {version}{text} (harness misuse)"
    return text + {LIBRARY_BUG: " (library bug)", "misuse": " (harness misuse, not repaired)",
                   "unclear": " (unclear)"}[outcome]
