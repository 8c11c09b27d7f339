"""The run report as one self-contained HTML page: inline CSS and SVG, no scripts, no fetches."""

from __future__ import annotations

from html import escape
from typing import Any

from logicfuzz.report import METRICS, RunData, Target, crash_line, fmt_delta, fmt_pct
from logicfuzz.report_md import CRASH_KEYS, CRASH_TITLES, SUMMARY_HEAD, calls_cell
from logicfuzz.report_plots import CHART_CSS, Reference, bar_chart, color, line_chart
from logicfuzz.results import crash_outcome

CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2329;
       background: #f6f7f9; margin: 0; }
main { max-width: 1220px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 12px; border-bottom: 1px solid #dde1e6; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 0 0 8px; }
.meta { color: #58626d; margin: 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: 12px;
         margin: 18px 0 8px; }
.card { background: #fff; border: 1px solid #e3e6ea; border-radius: 8px; padding: 10px 14px; }
.card .n { font-size: 24px; font-weight: 650; }
.card .k { color: #58626d; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid #e3e6ea; }
th, td { text-align: left; padding: 6px 9px; border-bottom: 1px solid #eef0f3; vertical-align: top; }
th { background: #f0f2f5; font-weight: 600; font-size: 12px; color: #3a434c; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.sub { display: block; color: #6a737d; font-size: 11px; }
.up { color: #137333; } .down { color: #b3261e; }
.pill { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
.s-runs { background: #d7f2df; color: #10632c; } .s-crash { background: #ffe2cc; color: #8a3b00; }
.s-builds { background: #fff2c2; color: #705300; }
.s-no-build, .s-error { background: #fbd8d6; color: #8c1d18; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 16px;
          align-items: start; }
.target { background: #fff; border: 1px solid #e3e6ea; border-radius: 8px; padding: 14px 16px;
          margin-bottom: 14px; }
.target .facts { color: #3a434c; margin: 0 0 10px; }
.target table { margin: 6px 0 10px; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 16px;
        align-items: start; }
.pair > *, .charts > * { min-width: 0; }
.note { color: #6a737d; font-size: 12px; margin: -4px 0 8px; }
h4 { font-size: 13px; margin: 8px 0 2px; color: #3a434c; }
.error { color: #8c1d18; white-space: pre-wrap; }
details pre { background: #f6f8fa; border: 1px solid #e3e6ea; padding: 10px; overflow: auto;
              font: 12px/1.4 ui-monospace, monospace; max-height: 420px; }
code { font: 12px ui-monospace, monospace; }
footer { color: #6a737d; margin-top: 32px; font-size: 12px; }
"""


def _e(value: Any) -> str:
    return escape(str(value))


def _table(head: list[str], rows: list[list[str]], numeric: frozenset[int] = frozenset()) -> str:
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                         for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _coverage_td(t: Target, metric: str) -> str:
    value, base = t.percent(metric), t.baseline.get(metric)
    if base is None or value is None:
        return _e(fmt_pct(value))
    return f'{_e(fmt_pct(value))} {_delta_span(value, base)}<span class="sub">base {_e(fmt_pct(base))}</span>'


def _delta_span(value: float | None, base: float) -> str:
    """The difference in points, green when above the baseline and red when below."""
    delta = fmt_delta(value, base)
    cls = "up" if delta.startswith("+") and delta != "+0.0" else "down" if delta.startswith("-") else ""
    return f'<span class="{cls}">{_e(delta)}</span>'


def _crash_td(rec: dict[str, Any]) -> str:
    crash = rec.get("crash") or {}
    outcome = crash_outcome(rec)
    if not outcome:
        return "-"
    shown = "repaired" if outcome == "repaired" else crash.get("kind") or "crash"
    return (f'<span title="{_e(crash_line(rec))}">{_e(shown)}</span>'
            f'<span class="sub">{_e(outcome.replace("_", " "))}</span>')


def _yes_no(value: Any) -> str:
    return "yes" if value is True else "no" if value is False else _e(value if value is not None else "-")


def _summary_table(data: RunData) -> str:
    rows = []
    for t in data.targets:
        r = t.record
        tokens = int(r.get("prompt_tokens") or 0) + int(r.get("completion_tokens") or 0)
        stop = t.error or r.get("termination_reason") or ""
        rows.append([
            _e(t.project), f'<a href="#{_e(t.key)}">{_e(t.function)}</a>',
            f'<span class="pill s-{t.status}">{t.status}</span>',
            _e(r.get("fix_rounds", "-")), _e(r.get("iterations", "-")),
            *(_coverage_td(t, m) for m in METRICS), _crash_td(r),
            _e(calls_cell(r)), f"{tokens:,}",
            f'<span class="{"error" if t.error else ""}">{_e(stop[:160])}</span>',
        ])
    return _table(SUMMARY_HEAD, rows, numeric=frozenset({3, 4, 5, 6, 7, 9, 10}))


def _cards(data: RunData) -> str:
    t = data.totals()
    items = [("targets", t["targets"]), ("build", t["building"]), ("run", t["running"]),
             ("crash (library bug)", t["crashing"]), ("misuse repaired", t["repaired"]),
             ("errors", t["errors"]), ("model calls", t["model_calls"]),
             ("tokens", f"{t['tokens']:,}")]
    return '<div class="cards">' + "".join(
        f'<div class="card"><div class="n">{_e(v)}</div><div class="k">{_e(k)}</div></div>'
        for k, v in items) + "</div>"


def _iteration_chart(data: RunData) -> str:
    drawn = [t for t in data.targets if t.record.get("coverage_history")]
    series = [(t.function, [(float(h.get("iteration") or 0), float(h.get("lines") or 0.0))
                            for h in t.record["coverage_history"]]) for t in drawn]
    shared: dict[tuple[str, float], list[int]] = {}
    for i, t in enumerate(drawn):
        if "lines" in t.baseline:
            shared.setdefault((t.baseline_label, t.baseline["lines"]), []).append(i)
    refs: list[Reference] = [
        (f"{drawn[idx[0]].function}: {label}", value, color(idx[0])) if len(idx) == 1
        else (f"baseline: {label}", value, None) for (label, value), idx in shared.items()]
    return line_chart(series, title="Line coverage per iteration (phase 2)", x_label="iteration",
                      y_label="line coverage (%)", y_min=0.0, markers=True, integer_x=True,
                      references=refs)


def _timeline_charts(data: RunData) -> list[str]:
    charts = []
    for t in data.targets:
        if t.timeline is None:
            continue
        unit = t.timeline.x_unit
        charts.append(line_chart(t.timeline.series, title=f"Coverage over time: {t.function}",
                                 x_label=unit, y_label="libFuzzer cov (edges)", y_min=0.0, step=True))
    return charts


def _experience_charts(exp: dict[str, Any]) -> list[str]:
    growth = exp.get("growth") or []
    points = [(float(i + 1), float(g.get("items") or 0)) for i, g in enumerate(growth)]
    trusts = [float(i.get("trust") or 0.0) for i in exp.get("items") or []]
    bins = [0] * 10
    for value in trusts:
        bins[min(9, max(0, int(value * 10)))] += 1
    bank = str(exp.get("bank") or "bank")
    return [
        line_chart([(bank, points)], title="Experience bank growth", x_label="finished target",
                   y_label="items in the bank", y_min=0.0, markers=True, integer_x=True),
        bar_chart([(f"{i / 10:.1f}", float(n)) for i, n in enumerate(bins)],
                  title="Trust of the bank's items", x_label="trust (bin start)", y_label="items"),
    ]


def _coverage_table(t: Target) -> str:
    rows = []
    for m in METRICS:
        c = (t.record.get("coverage") or {}).get(m) or {}
        row = [_e(m), _e(c.get("covered", "-")), _e(c.get("count", "-")), _e(fmt_pct(t.percent(m)))]
        if t.baseline:
            base = t.baseline.get(m)
            row.append("-" if base is None else f"{_e(fmt_pct(base))} {_delta_span(t.percent(m), base)}")
        rows.append(row)
    head = ["coverage", "covered", "of", "percent"] + (["baseline"] if t.baseline else [])
    table = _table(head, rows, numeric=frozenset({1, 2, 3, 4}))
    note = f'<p class="note">baseline: {_e(t.baseline_label)}</p>' if t.baseline else ""
    return f"<div>{table}{note}</div>"


def _usage_table(r: dict[str, Any]) -> str:
    usage = r.get("usage") or {}
    rows = [[_e(a), _e(u.get("calls", 0)), f"{int(u.get('prompt_tokens', 0)):,}",
             f"{int(u.get('completion_tokens', 0)):,}"] for a, u in sorted(usage.items())]
    rows.append(["<b>total</b>", _e(r.get("model_calls", 0)), f"{int(r.get('prompt_tokens') or 0):,}",
                 f"{int(r.get('completion_tokens') or 0):,}"])
    return _table(["agent", "model calls", "prompt tokens", "completion tokens"], rows,
                  numeric=frozenset({1, 2, 3}))


def _memory_lines(r: dict[str, Any]) -> str:
    memory = r.get("memory_used") or {}
    session = ", ".join(f"{_e(k.replace('_', ' '))} {_e(v)}"
                        for k, v in (memory.get("session") or {}).items() if v)
    used = ", ".join(f"<code>{_e(m.get('id'))}</code> {_e(m.get('title', ''))} "
                     f"({float(m.get('similarity') or 0):.2f})" for m in memory.get("experience") or [])
    return (f"<p><b>Session memory used:</b> {session or 'none'}<br>"
            f"<b>Experience used:</b> {used or 'none'}</p>")


def _target_block(t: Target) -> str:
    r = t.record
    head = (f'<div class="target" id="{_e(t.key)}"><h3>{_e(t.function)} '
            f'<span class="pill s-{t.status}">{t.status}</span></h3>')
    if t.error:
        return head + f'<p class="error">{_e(t.error)}</p></div>'
    facts = (f"archetype <code>{_e(r.get('archetype') or '-')}</code> · best harness "
             f"v{_e(r.get('best_version'))} of {_e(r.get('harness_versions', 0))} · "
             f"{_e(r.get('fix_rounds', 0))} fix rounds · {_e(r.get('iterations', 0))} iterations · "
             f"target executed {_e(r.get('target_hits', 0))}× · {_e(r.get('seconds', '-'))} s · "
             f"stop: {_e(r.get('termination_reason') or '-')}")
    parts = [head, f'<p class="facts">{facts}</p>',
             f'<div class="pair">{_coverage_table(t)}{_usage_table(r)}</div>']
    crash = r.get("crash") or {}
    if crash:
        parts.append(f"<h4>{_e(CRASH_TITLES[crash_outcome(r)])}</h4>"
                     + _table(list(CRASH_KEYS), [[_yes_no(crash.get(k)) for k in CRASH_KEYS]]))
    parts.append(_memory_lines(r))
    if t.harness:
        parts.append(f"<details><summary>harness.c ({len(t.harness.splitlines())} lines)</summary>"
                     f"<pre>{_e(t.harness)}</pre></details>")
    return "".join(parts) + "</div>"


def render_html(data: RunData) -> str:
    """The whole report page."""
    ctx = data.settings.get("context") or {}
    keys = ("model", "fuzz_seconds", "fuzz_seed", "fuzz_runs", "max_iterations", "memory_mode")
    meta = " · ".join(f"{k.replace('_', ' ')} {_e(ctx[k])}" for k in keys if k in ctx)
    bench = data.settings.get("benchmark")
    bench_html = f"benchmark <code>{_e(bench)}</code> · " if bench else ""
    body = [f"<h1>LogicFuzz report: {_e(data.run_dir.name)}</h1>",
            f'<p class="meta">{bench_html}{meta}</p>', _cards(data), "<h2>Summary</h2>", _summary_table(data)]
    if data.union_line():
        body.append(f'<p class="union"><strong>{_e(data.union_line())}</strong></p>')
    if data.baseline_label:
        body.append(f'<p class="meta">Baseline: {_e(data.baseline_label)}.</p>')
    charts = [_iteration_chart(data), *_timeline_charts(data)]
    body += ["<h2>Coverage</h2>", '<div class="charts">' + "".join(charts) + "</div>"]
    if data.experience:
        body += ["<h2>Experience bank</h2>",
                 '<div class="charts">' + "".join(_experience_charts(data.experience)) + "</div>"]
    for project, targets in data.libraries().items():
        body.append(f"<h2>{_e(project)}</h2>")
        body += [_target_block(t) for t in targets]
    body.append(f"<footer>Generated {_e(data.generated)} from {_e(data.run_dir.name)}/summary.json and "
                "each target's result.json by <code>logicfuzz report</code>.</footer>")
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>LogicFuzz report: {_e(data.run_dir.name)}</title>"
            f"<style>{CSS}{CHART_CSS}</style></head><body><main>{''.join(body)}</main></body></html>\n")
