"""The Markdown table and the summary of ``bench/generality.py`` rows (pure functions)."""

from __future__ import annotations

from typing import Any

COLUMNS = [
    "library", "functions running/total", "fix rounds", "harness-misuse crash rounds", "upstream harnesses",
    "s per harness LF/up", "LF lines %", "up lines %", "ratio lines", "LF branches %", "up branches %",
    "ratio branches", "LF-only lines (% of LF lines)",
]  # fmt: skip


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def upstream_cell(up: dict[str, Any]) -> str:
    """What the library's own harness set was: how many built, or why it gives no number."""
    status = up.get("status", "-")
    listed, built = len(up.get("listed") or []), len(up.get("built") or [])
    if status == "ok":
        return f"{built} built"
    if status == "partly builds":
        return f"{built}/{listed} built"
    if status == "does not build":
        return f"none of {listed} builds"
    return status


def row_cells(row: dict[str, Any]) -> list[str]:
    """One library's cells, in :data:`COLUMNS` order."""
    if row.get("error"):
        stage = row.get("stage", "?")
        return [row["library"], f"error in {stage}: {row['error'][:120]}", *["-"] * (len(COLUMNS) - 2)]
    lf, up = row.get("logicfuzz") or {}, row.get("upstream") or {}
    secs = "/".join(str((side.get("budget") or {}).get("per_harness_seconds", "-")) for side in (lf, up))
    diff = row.get("line_diff") or {}
    only = f"{diff['only_logicfuzz']} ({diff['share_of_logicfuzz']:.1f}%)" if diff else "-"
    return [
        row["library"], f"{row.get('functions_running', 0)}/{row.get('functions_total', 0)}",
        str(row.get("fix_rounds", 0)), str(row.get("misuse_crash_rounds", 0)), upstream_cell(up), secs,
        _pct(lf.get("lines")), _pct(up.get("lines")), _ratio(row.get("ratio_lines")),
        _pct(lf.get("branches")), _pct(up.get("branches")), _ratio(row.get("ratio_branches")), only,
    ]  # fmt: skip


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over libraries: functions, fix rounds, and how many reach a line ratio of 1.0."""
    ok = [r for r in rows if not r.get("error")]
    compared = [r for r in ok if r.get("ratio_lines") is not None]
    return {
        "libraries": len(rows),
        "failed": [r["library"] for r in rows if r.get("error")],
        "no_upstream_number": [r["library"] for r in ok if r.get("ratio_lines") is None],
        "functions_running": sum(r.get("functions_running", 0) for r in ok),
        "functions_total": sum(r.get("functions_total", 0) for r in ok),
        "fix_rounds": sum(r.get("fix_rounds", 0) for r in ok),
        "misuse_crash_rounds": sum(r.get("misuse_crash_rounds", 0) for r in ok),
        "compared": len(compared),
        "ratio_lines_at_least_1": sum(r["ratio_lines"] >= 1.0 for r in compared),
        "ratio_branches_at_least_1": sum((r.get("ratio_branches") or 0) >= 1.0 for r in compared),
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table, a summary row per arm, and one note per library whose upstream set gave no number."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row_cells(r)) + " |" for r in rows]
    arms = list(dict.fromkeys(r.get("arm", "usage") for r in rows))
    for arm in arms:
        s = summarize([r for r in rows if r.get("arm", "usage") == arm])
        name = f"total ({s['libraries']} libraries)" + (f", {arm}" if len(arms) > 1 else "")
        total = [
            f"**{name}**", f"{s['functions_running']}/{s['functions_total']}",
            str(s["fix_rounds"]), str(s["misuse_crash_rounds"]), f"{s['compared']} compared", "-", "-", "-",
            f"**{s['ratio_lines_at_least_1']}/{s['compared']} with ratio >= 1.0**", "-", "-",
            f"{s['ratio_branches_at_least_1']}/{s['compared']} >= 1.0", "-",
        ]  # fmt: skip
        lines.append("| " + " | ".join(total) + " |")
    notes = []
    for r in rows:
        up = r.get("upstream") or {}
        if r.get("error"):
            notes.append(f"- {r['library']}: failed in {r.get('stage', '?')}: {r['error']}")
        elif up.get("status") == "none shipped":
            notes.append(f"- {r['library']}: the Debian source ships no fuzz harness "
                         "(no file defining LLVMFuzzerTestOneInput); no ratio")
        elif up.get("failures"):
            why = "; ".join(f"{k}: {v[:160]}" for k, v in up["failures"].items())
            notes.append(f"- {r['library']}: upstream harnesses that do not build: {why}")
        lf_failures = (r.get("logicfuzz") or {}).get("failures")
        if lf_failures:
            notes.append(f"- {r['library']}: LogicFuzz harnesses that do not build again: "
                         + ", ".join(lf_failures))
        if not r.get("error") and not (r.get("logicfuzz") or {}).get("harnesses"):
            notes.append(f"- {r['library']}: LogicFuzz reached no running harness; no ratio")
    commits: dict[str, list[str]] = {}
    for r in rows:  # merged sittings may have run at other commits than the one writing the table
        commits.setdefault(r.get("commit") or "not recorded", []).append(r["library"])
    notes += [f"- measured at commit {c}: {', '.join(libs)}" for c, libs in commits.items()]
    return "\n".join(lines + ([""] + notes if notes else []))
