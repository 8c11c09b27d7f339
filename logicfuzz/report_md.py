"""The run report as Markdown: the same tables as the HTML page, without the charts."""

from __future__ import annotations

from typing import Any

from logicfuzz.report import METRICS, RunData, Target, crash_line, fmt_delta, fmt_pct
from logicfuzz.results import crash_outcome

CRASH_KEYS = ("kind", "signature", "summary", "verdict", "feasible", "version", "reproducer")
CRASH_TITLES = {"library_bug": "Crash: library bug",
                "repaired": "Crash repaired (harness misuse of a version the run dropped)",
                "misuse": "Crash: harness misuse, not repaired", "unclear": "Crash: unclear"}


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def coverage_cell(t: Target, metric: str) -> str:
    """``41.2% (base 37.3%, +3.9)``."""
    value, base = t.percent(metric), t.baseline.get(metric)
    if base is None:
        return fmt_pct(value)
    return f"{fmt_pct(value)} (base {fmt_pct(base)}, {fmt_delta(value, base)})"


def calls_cell(record: dict[str, Any]) -> str:
    """Model calls, and how many steps the fallback model did (``3 (1 fallback)``)."""
    calls = str(record.get("model_calls", "-"))
    fallbacks = sum((record.get("fallbacks") or {}).values())
    return f"{calls} ({fallbacks} fallback)" if fallbacks else calls


def summary_rows(data: RunData) -> list[list[Any]]:
    """One row per target, shared by both formats' summary tables."""
    rows = []
    for t in data.targets:
        r = t.record
        tokens = int(r.get("prompt_tokens") or 0) + int(r.get("completion_tokens") or 0)
        rows.append([
            t.project, t.function, t.status, r.get("fix_rounds", "-"), r.get("iterations", "-"),
            *(coverage_cell(t, m) for m in METRICS), crash_line(r) or "-",
            calls_cell(r), tokens, t.error or r.get("termination_reason") or "",
        ])
    return rows


SUMMARY_HEAD = ["library", "function", "status", "fix rounds", "iterations", "lines", "branches",
                "functions", "crash", "model calls", "tokens", "stop reason"]


def _settings_line(data: RunData) -> str:
    ctx = data.settings.get("context") or {}
    parts = [f"benchmark `{data.settings.get('benchmark', '?')}`"] if data.settings else []
    for key in ("model", "fuzz_seconds", "fuzz_seed", "fuzz_runs", "max_iterations", "memory_mode"):
        if key in ctx:
            parts.append(f"{key} `{ctx[key]}`")
    return ", ".join(parts)


def _target_section(t: Target) -> list[str]:
    r = t.record
    out = [f"### {t.key}", ""]
    if t.error:
        return out + [f"**Error:** {t.error}", ""]
    out.append(f"Status **{t.status}**; best harness v{r.get('best_version')}; "
               f"{r.get('harness_versions', 0)} versions, {r.get('fix_rounds', 0)} fix rounds, "
               f"{r.get('iterations', 0)} iterations; stop reason: {r.get('termination_reason') or '-'}.")
    if t.baseline:
        out.append(f"Baseline: {t.baseline_label}.")
    out.append("")
    parts = []
    for m in METRICS:
        c = (r.get("coverage") or {}).get(m) or {}
        if c:
            parts.append(f"{m} {c.get('covered')}/{c.get('count')} ({coverage_cell(t, m)})")
    if parts:
        out += ["Coverage: " + ", ".join(parts) + ".", ""]
    history = r.get("coverage_history") or []
    if history:
        steps = ", ".join(f"{h.get('iteration')}: {fmt_pct(h.get('lines'))}" for h in history)
        out += [f"Line coverage per iteration: {steps}.", ""]
    if r.get("crash"):
        c = r["crash"]
        out += [f"**{CRASH_TITLES[crash_outcome(r)]}**", ""] + _table(
            list(CRASH_KEYS), [[c.get(k) if c.get(k) is not None else "-" for k in CRASH_KEYS]]) + [""]
    usage = r.get("usage") or {}
    if usage:
        out += ["**Model calls**", ""] + _table(
            ["agent", "calls", "prompt tokens", "completion tokens"],
            [[a, u.get("calls", 0), u.get("prompt_tokens", 0), u.get("completion_tokens", 0)]
             for a, u in sorted(usage.items())]) + [""]
    memory = r.get("memory_used") or {}
    session = {k: v for k, v in (memory.get("session") or {}).items() if v}
    out += ["**Session memory used:** " + (", ".join(f"{k} {v}" for k, v in session.items()) or "none"), ""]
    used = memory.get("experience") or []
    out.append("**Experience used:** " + (", ".join(
        f"{m.get('id')} {m.get('title', '')} ({float(m.get('similarity') or 0):.2f})".strip()
        for m in used) or "none"))
    return out + [""]


def render_markdown(data: RunData) -> str:
    """The whole report as Markdown."""
    totals = data.totals()
    out = [f"# LogicFuzz report: {data.run_dir.name}", "", f"Generated {data.generated}. "
           + _settings_line(data), "",
           f"{totals['targets']} targets: {totals['building']} build, {totals['running']} run, "
           f"{totals['crashing']} crash on a library bug, {totals['repaired']} repaired a harness-misuse "
           f"crash, {totals['errors']} failed with an error; "
           f"{totals['model_calls']} model calls, {totals['tokens']} tokens.", ""]
    if data.union_line():
        out += [f"**{data.union_line()}**", ""]
    if data.baseline_label:
        out += [f"Coverage baseline: {data.baseline_label}.", ""]
    out += ["## Summary", ""] + _table(SUMMARY_HEAD, summary_rows(data)) + [""]
    for project, targets in data.libraries().items():
        out += [f"## {project}", ""]
        for t in targets:
            out += _target_section(t)
    if data.experience:
        items = data.experience.get("items") or []
        growth = data.experience.get("growth") or []
        out += ["## Experience bank", "",
                f"Bank `{data.experience.get('bank', '?')}`: {len(items)} items"
                + (f", grew over {len(growth)} steps to {growth[-1].get('items')}" if growth else "")
                + ".", ""]
    out.append("Charts: see report.html beside this file.")
    return "\n".join(out) + "\n"
