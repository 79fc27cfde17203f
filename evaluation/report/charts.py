"""Inline SVG charts for the HTML report (no scripts, no external assets). Every label is
escaped here: slice values come from cases, and cases can carry markup."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

WIDTH = 640
BAR_H = 18
GAP = 6
LABEL_W = 200
PLOT_W = WIDTH - LABEL_W - 70


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    low: float | None = None
    high: float | None = None
    note: str = ""


def _x(value: float, lo: float, hi: float) -> float:
    span = hi - lo or 1.0
    return LABEL_W + (min(max(value, lo), hi) - lo) / span * PLOT_W


def bar_chart(bars: Sequence[Bar], title: str, lo: float = 0.0, hi: float = 1.0) -> Markup:
    """Horizontal bars (a rate per slice) with 95% interval whiskers."""
    height = len(bars) * (BAR_H + GAP) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" role="img" aria-label="{escape(title)}">'
    ]
    parts.append(f'<text x="0" y="14" font-size="13" font-weight="bold">{escape(title)}</text>')
    for i, bar in enumerate(bars):
        y = 24 + i * (BAR_H + GAP)
        x1 = _x(bar.value, lo, hi)
        colour = "#2e7d32" if bar.value >= 0.9 else "#f9a825" if bar.value >= 0.7 else "#c62828"
        parts.append(
            f'<text x="{LABEL_W - 6}" y="{y + 13}" font-size="11" text-anchor="end">{escape(bar.label[:40])}</text>'
        )
        parts.append(
            f'<rect x="{LABEL_W}" y="{y}" width="{x1 - LABEL_W:.1f}" height="{BAR_H}" fill="{colour}"/>'
        )
        if bar.low is not None and bar.high is not None and bar.high > bar.low:
            a, b = _x(bar.low, lo, hi), _x(bar.high, lo, hi)
            mid = y + BAR_H / 2
            parts.append(
                f'<line x1="{a:.1f}" y1="{mid}" x2="{b:.1f}" y2="{mid}" stroke="#000" stroke-width="1.5"/>'
            )
        parts.append(
            f'<text x="{LABEL_W + PLOT_W + 6}" y="{y + 13}" font-size="11">{bar.value:.2f} {escape(bar.note)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def histogram(values: Sequence[float], title: str, bins: int = 20, unit: str = "s") -> Markup:
    """A histogram of `values` (latency) with min, median and max marked in the caption."""
    if not values:
        return Markup(f"<p>{escape(title)}: no values</p>")
    lo, hi = min(values), max(values)
    width = (hi - lo) / bins or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    top = max(counts)
    plot_h, bar_w = 140, (WIDTH - 40) / bins
    ordered = sorted(values)
    median = ordered[len(ordered) // 2]
    caption = f"{title}: min {lo:.3g}{unit}, median {median:.3g}{unit}, max {hi:.3g}{unit}, n={len(values)}"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{plot_h + 40}" role="img" aria-label="{escape(title)}">'
    ]
    parts.append(f'<text x="0" y="14" font-size="13" font-weight="bold">{escape(caption)}</text>')
    for i, count in enumerate(counts):
        h = count / top * plot_h if top else 0
        x = 20 + i * bar_w
        parts.append(
            f'<rect x="{x:.1f}" y="{20 + plot_h - h:.1f}" width="{bar_w - 1:.1f}" height="{h:.1f}" fill="#1565c0"><title>{lo + i * width:.3g}-{lo + (i + 1) * width:.3g}{unit}: {count}</title></rect>'
        )
    parts.append(f'<text x="20" y="{plot_h + 35}" font-size="11">{lo:.3g}{unit}</text>')
    parts.append(
        f'<text x="{WIDTH - 20}" y="{plot_h + 35}" font-size="11" text-anchor="end">{hi:.3g}{unit}</text>'
    )
    parts.append("</svg>")
    return Markup("".join(parts))


def delta_chart(rows: Sequence[Bar], title: str) -> Markup:
    """Deltas against the baseline around a zero line, with their paired 95% intervals."""
    if not rows:
        return Markup("")
    bound = max([abs(v) for r in rows for v in (r.value, r.low or 0.0, r.high or 0.0)] + [0.05])
    height = len(rows) * (BAR_H + GAP) + 30
    zero = _x(0.0, -bound, bound)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" role="img" aria-label="{escape(title)}">'
    ]
    parts.append(f'<text x="0" y="14" font-size="13" font-weight="bold">{escape(title)}</text>')
    parts.append(f'<line x1="{zero:.1f}" y1="20" x2="{zero:.1f}" y2="{height}" stroke="#555"/>')
    for i, row in enumerate(rows):
        y = 24 + i * (BAR_H + GAP)
        x = _x(row.value, -bound, bound)
        colour = (
            "#c62828"
            if row.note == "regression"
            else "#2e7d32"
            if row.note == "improvement"
            else "#90a4ae"
        )
        parts.append(
            f'<text x="{LABEL_W - 6}" y="{y + 13}" font-size="11" text-anchor="end">{escape(row.label)}</text>'
        )
        parts.append(
            f'<rect x="{min(x, zero):.1f}" y="{y}" width="{abs(x - zero):.1f}" height="{BAR_H}" fill="{colour}"/>'
        )
        if row.low is not None and row.high is not None:
            a, b = _x(row.low, -bound, bound), _x(row.high, -bound, bound)
            mid = y + BAR_H / 2
            parts.append(
                f'<line x1="{a:.1f}" y1="{mid}" x2="{b:.1f}" y2="{mid}" stroke="#000" stroke-width="1.5"/>'
            )
        parts.append(
            f'<text x="{LABEL_W + PLOT_W + 6}" y="{y + 13}" font-size="11">{row.value:+.3f}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
