"""Small inline-SVG charts for the run report: no JavaScript, no fonts or files to fetch.

Each function returns one ``<svg>`` element as text, with a title, labelled axes, tick marks on
round numbers, grid lines and a legend, sized by its ``viewBox`` so it scales with the page.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

# Okabe-Ito: distinguishable with the common kinds of colour blindness.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
Point = tuple[float, float]
Series = tuple[str, Sequence[Point]]
Reference = tuple[str, float, str | None]

_W, _H = 560, 320
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 34, 52


def color(index: int) -> str:
    """The palette colour of the ``index``-th series."""
    return PALETTE[index % len(PALETTE)]


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering ``[lo, hi]`` (steps of 1, 2, 2.5 or 5 × 10ⁿ)."""
    if not math.isfinite(lo) or not math.isfinite(hi):
        return [0.0, 1.0]
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    value = start
    while value < hi + step * 0.5:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < hi:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def fmt_number(value: float) -> str:
    """A tick label: ``12``, ``2.5``, ``12k``, ``1.2M``."""
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:.3g}M"
    if abs(value) >= 10_000:
        return f"{value / 1000:.3g}k"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3g}"


class _Frame:
    """Maps data coordinates to the plot area and draws the axes."""

    def __init__(self, xs: Sequence[float], ys: Sequence[float], y_min: float | None,
                 y_max: float | None, integer_x: bool = False) -> None:
        self.xt = nice_ticks(min(xs), max(xs))
        if integer_x and (len(self.xt) < 2 or self.xt[1] - self.xt[0] < 1):
            self.xt = [float(v) for v in range(int(min(xs)), int(math.ceil(max(xs))) + 1)]
            if len(self.xt) < 2:
                self.xt.append(self.xt[0] + 1)
        lo = min(ys) if y_min is None else y_min
        hi = max(ys) if y_max is None else y_max
        self.yt = nice_ticks(lo, hi)
        if y_max is not None:
            self.yt = [t for t in self.yt if t <= y_max] or self.yt
        self.x0, self.x1 = self.xt[0], self.xt[-1]
        self.y0, self.y1 = self.yt[0], max(self.yt[-1], hi)

    def x(self, value: float) -> float:
        span = (self.x1 - self.x0) or 1.0
        return _LEFT + (value - self.x0) / span * (_W - _LEFT - _RIGHT)

    def y(self, value: float) -> float:
        span = (self.y1 - self.y0) or 1.0
        return _H - _BOTTOM - (value - self.y0) / span * (_H - _TOP - _BOTTOM)

    def axes(self, x_label: str, y_label: str) -> list[str]:
        out = []
        for t in self.yt:
            y = self.y(t)
            out.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{_W - _RIGHT}" y2="{y:.1f}" class="grid"/>')
            out.append(f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt_number(t)}</text>')
        for t in self.xt:
            x = self.x(t)
            out.append(f'<line x1="{x:.1f}" y1="{_H - _BOTTOM}" x2="{x:.1f}" y2="{_H - _BOTTOM + 5}" '
                       'class="axis"/>')
            out.append(f'<text x="{x:.1f}" y="{_H - _BOTTOM + 18}" text-anchor="middle">'
                       f"{fmt_number(t)}</text>")
        out.append(f'<line x1="{_LEFT}" y1="{_H - _BOTTOM}" x2="{_W - _RIGHT}" y2="{_H - _BOTTOM}" '
                   'class="axis"/>')
        out.append(f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_H - _BOTTOM}" class="axis"/>')
        mid_x = (_LEFT + _W - _RIGHT) / 2
        mid_y = (_TOP + _H - _BOTTOM) / 2
        out.append(f'<text x="{mid_x:.0f}" y="{_H - 12}" text-anchor="middle" class="label">'
                   f"{escape(x_label)}</text>")
        out.append(f'<text x="16" y="{mid_y:.0f}" text-anchor="middle" class="label" '
                   f'transform="rotate(-90 16 {mid_y:.0f})">{escape(y_label)}</text>')
        return out


def _svg(title: str, body: list[str], height: int = _H) -> str:
    head = (f'<svg class="chart" viewBox="0 0 {_W} {height}" role="img" aria-label="{escape(title)}">'
            f'<text x="{_LEFT}" y="20" class="title">{escape(title)}</text>')
    return head + "".join(body) + "</svg>"


def _legend(entries: Sequence[tuple[str, str, bool]]) -> tuple[list[str], int]:
    """Legend rows under the x-axis label: ``(label, colour, dashed)`` each; returns the height used."""
    out, x, row = [], float(_LEFT), 0
    for label, stroke, dashed in entries:
        text = label if len(label) <= 64 else label[:63] + "…"
        width = 30 + 6.2 * len(text)
        if x + width > _W - _RIGHT and x > _LEFT:
            x, row = float(_LEFT), row + 1
        y = _H + 2 + row * 16
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        out.append(f'<line x1="{x:.0f}" y1="{y}" x2="{x + 18:.0f}" y2="{y}" stroke="{stroke}" '
                   f'stroke-width="2.5"{dash}/>')
        out.append(f'<text x="{x + 23:.0f}" y="{y + 4}" class="legend">{escape(text)}</text>')
        x += width
    return out, (row + 1) * 16 + 4 if entries else 0


def empty_chart(title: str, why: str) -> str:
    """A placeholder of the same size that says why there is nothing to draw."""
    return _svg(title, [f'<text x="{_W / 2:.0f}" y="{_H / 2:.0f}" text-anchor="middle" '
                        f'class="label">{escape(why)}</text>'])


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    y_min: float | None = None,
    y_max: float | None = None,
    markers: bool = False,
    step: bool = False,
    integer_x: bool = False,
    references: Sequence[Reference] = (),
) -> str:
    """Lines (``step`` draws a staircase, for counters that jump) and dashed reference levels.

    A reference is ``(label, value, colour)``; ``colour`` None draws it in grey.
    """
    drawn = [(label, sorted(points)) for label, points in series if points]
    if not drawn:
        return empty_chart(title, "no samples recorded")
    xs = [p[0] for _, pts in drawn for p in pts]
    ys = [p[1] for _, pts in drawn for p in pts] + [v for _, v, _ in references]
    frame = _Frame(xs, ys, y_min, y_max, integer_x)
    body = frame.axes(x_label, y_label)
    entries: list[tuple[str, str, bool]] = []
    for i, (label, pts) in enumerate(drawn):
        coords: list[Point] = []
        for j, (x, y) in enumerate(pts):
            if step and j:
                coords.append((frame.x(x), frame.y(pts[j - 1][1])))
            coords.append((frame.x(x), frame.y(y)))
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        body.append(f'<polyline points="{path}" fill="none" stroke="{color(i)}" stroke-width="2.2" '
                    'stroke-linejoin="round"/>')
        if markers or len(pts) == 1:
            for x, y in pts:
                body.append(f'<circle cx="{frame.x(x):.1f}" cy="{frame.y(y):.1f}" r="3.6" '
                            f'fill="{color(i)}"><title>{escape(label)}: {fmt_number(x)}, '
                            f"{fmt_number(y)}</title></circle>")
        entries.append((label, color(i), False))
    for label, value, stroke in references:
        y = frame.y(value)
        stroke = stroke or "#7a828c"
        body.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{_W - _RIGHT}" y2="{y:.1f}" '
                    f'stroke="{stroke}" stroke-width="1.6" stroke-dasharray="5 3" class="ref">'
                    f"<title>{escape(label)}: {fmt_number(value)}</title></line>")
        entries.append((label, stroke, True))
    legend, extra = _legend(entries)
    return _svg(title, body + legend, _H + extra)


def bar_chart(
    bars: Sequence[tuple[str, float]], *, title: str, x_label: str, y_label: str
) -> str:
    """Vertical bars, one per category, labelled under the axis and with the value on top."""
    if not bars or not any(v for _, v in bars):
        return empty_chart(title, "nothing to count yet")
    ticks = nice_ticks(0.0, max(v for _, v in bars))
    top = ticks[-1] or 1.0
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    body: list[str] = []
    for t in ticks:
        y = _H - _BOTTOM - t / top * plot_h
        body.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{_W - _RIGHT}" y2="{y:.1f}" class="grid"/>')
        body.append(f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt_number(t)}</text>')
    slot = plot_w / len(bars)
    for i, (label, value) in enumerate(bars):
        h = value / top * plot_h
        x = _LEFT + i * slot + slot * 0.15
        body.append(f'<rect x="{x:.1f}" y="{_H - _BOTTOM - h:.1f}" width="{slot * 0.7:.1f}" '
                    f'height="{h:.1f}" fill="{color(0)}"><title>{escape(label)}: {fmt_number(value)}'
                    "</title></rect>")
        if value:
            body.append(f'<text x="{x + slot * 0.35:.1f}" y="{_H - _BOTTOM - h - 4:.1f}" '
                        f'text-anchor="middle" class="legend">{fmt_number(value)}</text>')
        body.append(f'<text x="{x + slot * 0.35:.1f}" y="{_H - _BOTTOM + 16}" text-anchor="middle" '
                    f'class="tick">{escape(label)}</text>')
    body.append(f'<line x1="{_LEFT}" y1="{_H - _BOTTOM}" x2="{_W - _RIGHT}" y2="{_H - _BOTTOM}" '
                'class="axis"/>')
    mid_y = (_TOP + _H - _BOTTOM) / 2
    body.append(f'<text x="{(_LEFT + _W - _RIGHT) / 2:.0f}" y="{_H - 12}" text-anchor="middle" '
                f'class="label">{escape(x_label)}</text>')
    body.append(f'<text x="16" y="{mid_y:.0f}" text-anchor="middle" class="label" '
                f'transform="rotate(-90 16 {mid_y:.0f})">{escape(y_label)}</text>')
    return _svg(title, body)


CHART_CSS = """
svg.chart { width: 100%; height: auto; background: #fff; border: 1px solid #e3e6ea; border-radius: 6px; }
svg.chart text { font: 11px system-ui, sans-serif; fill: #333; }
svg.chart text.title { font-size: 14px; font-weight: 600; fill: #111; }
svg.chart text.label { font-size: 12px; fill: #444; }
svg.chart text.legend { font-size: 11px; fill: #222; }
svg.chart text.tick { font-size: 10px; }
svg.chart .grid { stroke: #eceff3; stroke-width: 1; }
svg.chart .axis { stroke: #555; stroke-width: 1; }
"""
