"""Bar charts as SVG, pure: stacked bars (each category's series on top of one another) and grouped bars
(side by side). Every number the picture shows is also in `table`, for the page's accessible table.

The markup carries no script and no style attribute (colours are SVG presentation attributes), so the
pages' Content-Security-Policy lets it through; every text in it is escaped.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Literal

Layout = Literal["stacked", "grouped"]
PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5", "#9c6b4e",
           "#9498a0")
WIDTH, HEIGHT = 720, 300
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 16, 64
LEGEND_ROW = 22
MAX_LABEL = 12
FONT = 16  # in the chart's units; the page keeps a chart at least 32rem wide, so a label stays about 11 px


@dataclass(frozen=True)
class Chart:
    ident: str  # unique on the page: the id of the SVG's title
    title: str
    categories: tuple[str, ...]  # along the x axis
    series: tuple[str, ...]  # one colour each
    values: tuple[tuple[int, ...], ...]  # values[s][c]: series s in category c
    layout: Layout = "stacked"
    total: str = "total"  # the heading of the totals' column, in the page's language
    category: str = "category"  # the heading of the categories' column (what the x axis counts by)


def table(chart: Chart) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the numbers: one row per category, one column per series, and a total."""
    header = [chart.category, *chart.series, chart.total]
    rows = [[cat, *(str(chart.values[s][c]) for s in range(len(chart.series))),
             str(sum(v[c] for v in chart.values))] for c, cat in enumerate(chart.categories)]
    return header, rows


def nice_max(peak: int) -> int:
    """The top of the y axis: `peak` rounded up to 1, 2 or 5 times a power of ten."""
    if peak <= 0:
        return 1
    step: int = 10 ** math.floor(math.log10(peak))
    return next(m * step for m in (1, 2, 5, 10) if m * step >= peak)


def peak(chart: Chart) -> int:
    if not chart.categories or not chart.series:
        return 0
    columns = [[v[c] for v in chart.values] for c in range(len(chart.categories))]
    heights: list[int] = [sum(col) if chart.layout == "stacked" else max(col) for col in columns]
    return max(heights)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _label(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def _rect(x: float, y: float, w: float, h: float, colour: str, tip: str) -> str:
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{colour}">'
            f"<title>{_e(tip)}</title></rect>")


def _bars(chart: Chart, top: int, plot_h: float, legend_h: float) -> list[str]:
    n = max(1, len(chart.categories))
    slot = (WIDTH - LEFT - RIGHT) / n
    base = TOP + legend_h + plot_h
    out: list[str] = []
    for c, cat in enumerate(chart.categories):
        x0, used = LEFT + c * slot + slot * 0.15, 0
        inner = slot * 0.7 / (len(chart.series) if chart.layout == "grouped" else 1)
        for s, name in enumerate(chart.series):
            v = chart.values[s][c]
            h = plot_h * v / top
            x = x0 + (inner * s if chart.layout == "grouped" else 0)
            y = base - h - (plot_h * used / top if chart.layout == "stacked" else 0)
            used += v
            if v:
                out.append(_rect(x, y, inner, h, PALETTE[s % len(PALETTE)], f"{cat} · {name}: {v}"))
        lx = LEFT + c * slot + slot / 2
        out.append(f'<text x="{lx:.1f}" y="{base + 14:.1f}" text-anchor="end" font-size="{FONT}" '
                   f'transform="rotate(-35 {lx:.1f} {base + 14:.1f})">{_e(_label(cat))}<title>{_e(cat)}</title></text>')
    return out


def _axis(top: int, plot_h: float, legend_h: float) -> list[str]:
    base = TOP + legend_h + plot_h
    out = [f'<line x1="{LEFT}" y1="{base:.1f}" x2="{WIDTH - RIGHT}" y2="{base:.1f}" stroke="#888"/>']
    steps = next(n for n in (5, 4, 2, 1) if top % n == 0)  # whole numbers on the axis
    for k in range(steps + 1):
        value = top * k // steps
        y = base - plot_h * k / steps
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="{FONT}">{value}</text>')
        if k:
            out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#ddd"/>')
    return out


def text_width(text: str) -> int:
    """About how wide `text` is at FONT: a Chinese (wide) character a full em, another about 0.6 em."""
    import unicodedata

    return round(sum(FONT if unicodedata.east_asian_width(ch) in "WF" else FONT * 0.6 for ch in text)) + 6


def _legend(chart: Chart) -> tuple[list[str], float]:
    out: list[str] = []
    x, row = LEFT, 0
    for s, name in enumerate(chart.series):
        width = 24 + text_width(_label(name))
        if x + width > WIDTH - RIGHT and x > LEFT:
            x, row = LEFT, row + 1
        y = TOP + row * LEGEND_ROW
        out.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{PALETTE[s % len(PALETTE)]}"/>')
        out.append(f'<text x="{x + 14}" y="{y + 9}" font-size="{FONT}">{_e(_label(name))}<title>{_e(name)}</title></text>')
        x += width
    return out, (row + 1) * LEGEND_ROW + 6 if chart.series else 0


def svg(chart: Chart) -> str:
    """The chart as one <svg> element, labelled by its title (role img); an empty chart says so."""
    legend, legend_h = _legend(chart)
    plot_h = HEIGHT - TOP - BOTTOM - legend_h
    top = nice_max(peak(chart))
    body = [*legend, *_axis(top, plot_h, legend_h), *_bars(chart, top, plot_h, legend_h)] if peak(chart) else [
        f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle" font-size="14">no data yet</text>']
    ident = _e(chart.ident)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" '
            f'role="img" aria-labelledby="{ident}-title" font-family="sans-serif" fill="#222">'
            f'<title id="{ident}-title">{_e(chart.title)}</title>{"".join(body)}</svg>')
