"""The table of ``bench/bugbench.py``: per known bug, who found it, how soon, and LogicFuzz's verdict."""

from __future__ import annotations

import statistics
from typing import Any

SIDES = ("logicfuzz", "upstream", "function")


def side_summary(repeats: list[dict[str, Any]]) -> dict[str, Any]:
    """Found in k of R repeats, and the median CPU-seconds to the first find over the finding repeats."""
    times = [r["first_find_cpu_seconds"] for r in repeats if r.get("first_find_cpu_seconds") is not None]
    return {"found": len(times), "repeats": len(repeats),
            "median_cpu_seconds_to_find": statistics.median(times) if times else None}


def _found(row: dict[str, Any], side: str) -> str:
    got = (row.get("sides") or {}).get(side)
    if not got:
        return "-"
    if not got.get("built"):
        return "no harness"
    return f"{got['found']}/{got['repeats']}"


def _time(row: dict[str, Any], sides: tuple[str, ...]) -> str:
    cells = []
    for side in sides:
        seconds = ((row.get("sides") or {}).get(side) or {}).get("median_cpu_seconds_to_find")
        cells.append("-" if seconds is None else f"{seconds:.0f}")
    return " / ".join(cells)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals: bugs measured, found by each side (in any repeat), failed entries."""
    measured = [r for r in rows if not r.get("error")]
    out: dict[str, Any] = {"bugs": len(rows), "measured": len(measured),
                           "failed": len(rows) - len(measured)}
    for side in SIDES:
        got = [((r.get("sides") or {}).get(side) or {}) for r in measured]
        out[f"found_by_{side}"] = sum(1 for g in got if g.get("found"))
        out[f"found_by_{side}_every_repeat"] = sum(
            1 for g in got if g.get("found") and g.get("found") == g.get("repeats"))
    out["library_bug_verdicts_on_known_bug"] = sum(
        1 for r in measured if "library_bug" in str(r.get("logicfuzz_verdict", "")))
    return out


def _totals(total: dict[str, Any], sides: tuple[str, ...]) -> str:
    """The line under the table."""
    function = (f", by the patched function's harness {total['found_by_function']}"
                if "function" in sides else "")
    return (f"Total: {total['bugs']} bugs, {total['measured']} measured; found by LogicFuzz "
            f"{total['found_by_logicfuzz']} ({total['found_by_logicfuzz_every_repeat']} in every repeat), "
            f"by the library's own harness set {total['found_by_upstream']} "
            f"({total['found_by_upstream_every_repeat']} in every repeat){function}; LogicFuzz's run "
            f"judged the known bug a library bug for {total['library_bug_verdicts_on_known_bug']}.")


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table, a totals line and the footnotes, as Markdown.

    The column of the patched-function harnesses shows only when some row measured them.
    """
    sides = SIDES if any("function" in (r.get("sides") or {}) for r in rows) else SIDES[:2]
    short = {"logicfuzz": "LF", "upstream": "own", "function": "fn"}
    head = ["bug", "source", "patch", "LogicFuzz found", "own set found",
            *(["function harness found"] if len(sides) == 3 else []),
            f"median CPU-s to find ({' / '.join(short[s] for s in sides)})", "LogicFuzz's verdict", "note"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        name = row["id"] + (" *" if row.get("functions") else "")
        note = (f"failed in {row.get('stage')}: {row['error']}" if row.get("error")
                else "" if row.get("patched_built_files") else "the patch changes no built file")
        cells = [name, row.get("source_text", ""), row.get("patch", ""),
                 *(_found(row, side) for side in sides), _time(row, sides),
                 row.get("logicfuzz_verdict") or "-", note.replace("|", "/")[:140]]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", _totals(summarize(rows), sides)]
    notes = ["", "Found: the repeats (k/R) in which some crash input of that side crashed the vulnerable "
             "build (patch reversed) and not the fixed one (as shipped), replayed alone on the same "
             "harness. CPU-s to find: the finding harness's seconds times the side's harness count "
             "(the side's harnesses share its budget evenly). Verdict: what LogicFuzz's own run judged "
             "its crashes with the same kind and innermost library frame (`not met`: it never crashed "
             "there)."]
    if any(r.get("functions") for r in rows):
        notes.append("* LogicFuzz ran on the entry's named functions, not init-benchmark's own choice.")
    return "\n".join(lines + notes + _other_verdicts(rows))


def _other_verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """The library-bug verdicts of LogicFuzz's runs that are not the known bug, with their review."""
    every = [(r["id"], v) for r in rows for v in r.get("library_bug_verdicts") or []]
    other = [(bug, v) for bug, v in every if not v.get("known_bug")]
    out = ["", f"Library-bug verdicts in LogicFuzz's runs: {len(every)}, of which the known bug "
               f"{len(every) - len(other)} and other crashes {len(other)} (hand review in "
               "bench/bugs/reviews.yaml):"]
    out += [f"- {bug}: `{v['signature']}` ({v['target']}; replays on: {v.get('replay', 'not tried')}): "
            f"{v.get('review', 'unreviewed')}" + (f" ({v['why']})" if v.get("why") else "")
            for bug, v in other]
    return out if every else []
