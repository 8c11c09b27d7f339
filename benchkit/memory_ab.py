"""What the experience-memory A/B measures in an arm's run directory (``bench/memory_ab.py`` prints it).

Per arm: targets reaching a running harness, fix rounds, harness-caused crash rounds, repeated
failures (a failure signature already seen on an earlier target of the same library), model
calls, prompt tokens, coverage, experience items shown, used and applied, and the applied items
learned on another library (cross-library transfer).
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

_QUOTED = re.compile(r"'[^']*'")


def _events(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def failure_trace(work: Path) -> tuple[list[str], int, set[str]]:
    """A target's failure signatures in order, its harness-caused crash rounds, and the resolved ones.

    A signature is resolved when the target got past it: a later version ran and reached the
    target (a repair), or the improvement that caused it was dropped and the best version kept.
    """
    sigs: list[str] = []
    misuse = 0
    resolved: set[str] = set()
    pending: list[str] = []
    crash = "crash:unknown"
    for event in _events(work / "events.jsonl"):
        kind, data = event.get("type"), event.get("data") or {}
        found: list[str] = []
        if kind == "build.done" and not data.get("ok"):
            log = work / f"v{data.get('version')}" / "build.log"
            text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
            errors = dict.fromkeys(re.findall(r"error: (.*)", text))
            found = ["compile:" + _QUOTED.sub("'_'", e) for e in errors]
        elif kind == "crash.triaged":
            frame = str(data.get("signature") or "").split("@")[-1].split("<")[0]
            crash = f"crash:{data.get('kind')}@{frame}"
        elif kind == "crash.verdict" and not data.get("feasible"):
            misuse += 1
            found = [crash]  # a library bug found is no failure of the harness, here or later
        elif kind == "execution.done" and not data.get("crashed") and not data.get("target_hits"):
            found = ["target-not-reached"]
        elif kind == "harness.written" and any("fuzz input" in f for f in data.get("fixes") or []):
            found = ["input-not-reaching-target"]
        elif (kind == "execution.done" and not data.get("crashed")) or kind == "iteration.reverted":
            resolved.update(pending)
            pending = []
        sigs += found
        pending += found
    return sigs, misuse, resolved


def failure_signatures(work: Path) -> tuple[list[str], int]:
    """A target's failure signatures in order, and its harness-caused crash rounds."""
    sigs, misuse, _ = failure_trace(work)
    return sigs, misuse


def _lesson_sources(bank: Path) -> dict[str, dict[str, str]]:
    """``{item id: {task, action}}`` of every item in the bank files under ``bank``."""
    out: dict[str, dict[str, str]] = {}
    for path in bank.rglob("*.jsonl") if bank.is_dir() else []:
        for record in _events(path):
            for item in record.get("memory_items") or []:
                if isinstance(item, dict) and item.get("item_id"):
                    out[item["item_id"]] = {"task": str(record.get("task_id", "")),
                                            "action": str(item.get("action") or "")}
    return out


def measure(benchmarks: list[Path], mode: str, root: Path, learned: Path | None = None) -> dict[str, Any]:
    """The row of one arm, read from its run directories (so an arm can be re-measured).

    ``learned`` is the bank its shown items were learned in (retrieve-extract's by default).
    """
    records: list[dict[str, Any]] = []
    union: list[float] = []
    per_library: list[dict[str, Any]] = []
    for bench in benchmarks:
        out = root / "runs" / bench.stem
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        records += summary["results"]
        union.append(((summary.get("union_coverage") or {}).get("lines") or {}).get("percent", 0.0) or 0.0)
        lib = {"library": bench.stem, "targets": len(summary["results"]), "union_lines": union[-1],
               "running": sum(bool(r.get("runs")) for r in summary["results"] if not r.get("error")),
               "fix_rounds": sum(r.get("fix_rounds", 0) for r in summary["results"] if not r.get("error")),
               "crash_rounds": 0, "repeated": 0, "repeated_known": 0}
        seen: set[str] = set()
        known: set[str] = set()  # failures an earlier target of the library got past
        for record in summary["results"]:
            work = out / str(record.get("project")) / str(record.get("function"))
            sigs, misuse, resolved = failure_trace(work)
            lib["crash_rounds"] += misuse
            lib["repeated"] += sum(1 for sig in dict.fromkeys(sigs) if sig in seen)
            lib["repeated_known"] += sum(1 for sig in dict.fromkeys(sigs) if sig in known)
            seen.update(sigs)
            known.update(resolved)
        per_library.append(lib)
    crash_rounds = sum(lib["crash_rounds"] for lib in per_library)
    repeated = sum(lib["repeated"] for lib in per_library)
    repeated_known = sum(lib["repeated_known"] for lib in per_library)
    ok = [r for r in records if not r.get("error")]
    used = [(r, m) for r in ok for m in (r.get("memory_used") or {}).get("experience", [])]
    check = root / "bank_check.json"
    learned = learned or root.parent / "retrieve-extract" / "bank"
    sources = _lesson_sources(learned)
    return {
        "crash_rounds": crash_rounds,
        "repeated": repeated,
        "repeated_known": repeated_known,
        "union_lines": statistics.mean(union or [0.0]),
        "targets": len(records),
        "running": sum(bool(r.get("runs")) for r in ok),
        "fix_rounds": sum(r.get("fix_rounds", 0) for r in ok),
        "model_calls": sum(r.get("model_calls", 0) for r in ok),
        "prompt_tokens": sum(r.get("prompt_tokens", 0) for r in ok),
        "mean_lines": statistics.mean(
            [r["coverage"]["lines"]["percent"] for r in ok if r.get("runs")] or [0]),
        "shown": len(used),
        "used": sum(bool(m.get("used")) for _, m in used),
        # used items with an action: their change is in the measured harness (the others were cited)
        "applied": sum(bool(m.get("used")) and bool(sources.get(m.get("id", ""), {}).get("action"))
                       for _, m in used),
        "used_by": [(r, m) for r, m in used if m.get("used")],
        "bank": json.loads(check.read_text(encoding="utf-8")) if check.is_file() else None,
        "per_library": per_library,
        "learned": str(learned),
    }


def print_per_library(rows: dict[str, dict[str, Any]]) -> None:
    """Each library's rows, mode by mode (the totals above are their sums)."""
    print("\n| library | mode | running | fix rounds | harness crash rounds | fix + crash | "
          "repeated failures (got past before) | union line cov |")
    print("|---|---|---|---|---|---|---|---|")
    names = [lib["library"] for lib in next(iter(rows.values()))["per_library"]]
    for i, name in enumerate(names):
        for mode, r in rows.items():
            lib = r["per_library"][i]
            print(f"| {name} | {mode} | {lib['running']}/{lib['targets']} | {lib['fix_rounds']} | "
                  f"{lib['crash_rounds']} | {lib['fix_rounds'] + lib['crash_rounds']} | "
                  f"{lib['repeated']} ({lib['repeated_known']}) | {lib['union_lines']:.1f}% |")


def transfers(rows: dict[str, dict[str, Any]], root: Path) -> list[str]:
    """Lines naming each applied item learned on another library than the one it was used on.

    Only items with an action count: their change is in the measured harness. An item without
    one counts as used when a reply cites it, which shows nothing across libraries.
    """
    default = _lesson_sources(root / "retrieve-extract" / "bank")
    lines = []
    for mode, row in rows.items():
        sources = _lesson_sources(Path(row["learned"])) if row.get("learned") else default
        for record, item in row.get("used_by", []):
            src = sources.get(item.get("id", ""), {})
            if src.get("action") and src["task"].split("/")[0] != str(record.get("project")):
                lines.append(f"- {mode}: [{item['id']}] learned on {src['task']} ({src['action']}) "
                             f"used on {record.get('project')}/{record.get('function')}: "
                             f"{record.get('fix_rounds', 0)} fix rounds, runs={bool(record.get('runs'))}")
    return lines
