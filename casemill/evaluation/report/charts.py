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
GOOD, FAIR, BAD, NEUTRAL = "#2e7d32", "#f9a825", "#c62828", "#90a4ae"


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    low: float | None = None
    high: float | None = None
    note: str = ""


def _attrs(attrs: dict[str, object]) -> str:
    def fmt(v: object) -> str:
        return f"{v:.1f}" if isinstance(v, float) else escape(str(v))

    return " ".join(f'{k.replace("_", "-")}="{fmt(v)}"' for k, v in attrs.items())


def _el(tag: str, content: str = "", **attrs: object) -> str:
    return f"<{tag} {_attrs(attrs)}>{content}</{tag}>"


def _text(x: float, y: float, content: str, **attrs: object) -> str:
    return _el("text", escape(content), x=x, y=y, font_size=11, **attrs)


def _svg(height: float, title: str, parts: list[str]) -> Markup:
    head = f'<svg xmlns="http://www.w3.org/2000/svg" {_attrs({"width": WIDTH, "height": height})}'
    head += f' role="img" aria-label="{escape(title)}">'
    heading = _el("text", escape(title), x=0, y=14, font_size=13, font_weight="bold")
    return Markup(head + heading + "".join(parts) + "</svg>")


def _x(value: float, lo: float, hi: float) -> float:
    span = hi - lo or 1.0
    return LABEL_W + (min(max(value, lo), hi) - lo) / span * PLOT_W


def _whisker(bar: Bar, y: float, lo: float, hi: float) -> str:
    if bar.low is None or bar.high is None or bar.high <= bar.low:
        return ""
    mid = y + BAR_H / 2
    a, b = _x(bar.low, lo, hi), _x(bar.high, lo, hi)
    return _el("line", x1=a, y1=mid, x2=b, y2=mid, stroke="#000", stroke_width=1.5)


def bar_chart(bars: Sequence[Bar], title: str, lo: float = 0.0, hi: float = 1.0) -> Markup:
    """Horizontal bars (a rate per slice) with 95% interval whiskers."""
    parts = []
    for i, bar in enumerate(bars):
        y = 24 + i * (BAR_H + GAP)
        end = _x(bar.value, lo, hi)
        colour = GOOD if bar.value >= 0.9 else FAIR if bar.value >= 0.7 else BAD
        parts.append(_text(LABEL_W - 6, y + 13, bar.label[:40], text_anchor="end"))
        parts.append(_el("rect", x=LABEL_W, y=y, width=end - LABEL_W, height=BAR_H, fill=colour))
        parts.append(_whisker(bar, y, lo, hi))
        parts.append(_text(LABEL_W + PLOT_W + 6, y + 13, f"{bar.value:.2f} {bar.note}"))
    return _svg(len(bars) * (BAR_H + GAP) + 30, title, parts)


def histogram(values: Sequence[float], title: str, bins: int = 20, unit: str = "s") -> Markup:
    """A histogram of `values` (latency) with min, median and max in the caption."""
    if not values:
        return Markup(f"<p>{escape(title)}: no values</p>")
    lo, hi = min(values), max(values)
    width = (hi - lo) / bins or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    top, plot_h, bar_w = max(counts), 140, (WIDTH - 40) / bins
    median = sorted(values)[len(values) // 2]
    caption = (
        f"{title}: min {lo:.3g}{unit}, median {median:.3g}{unit}, max {hi:.3g}{unit}, "
        f"n={len(values)}"
    )
    parts = []
    for i, count in enumerate(counts):
        h = count / top * plot_h if top else 0.0
        tip = _el(
            "title", escape(f"{lo + i * width:.3g}-{lo + (i + 1) * width:.3g}{unit}: {count}")
        )
        x, y = 20 + i * bar_w, 20 + plot_h - h
        parts.append(_el("rect", tip, x=x, y=y, width=bar_w - 1, height=float(h), fill="#1565c0"))
    parts.append(_text(20, plot_h + 35, f"{lo:.3g}{unit}"))
    parts.append(_text(WIDTH - 20, plot_h + 35, f"{hi:.3g}{unit}", text_anchor="end"))
    return _svg(plot_h + 40, caption, parts)


def delta_chart(rows: Sequence[Bar], title: str) -> Markup:
    """Deltas against the baseline around a zero line, with their paired 95% intervals."""
    if not rows:
        return Markup("")
    bound = max([abs(v) for r in rows for v in (r.value, r.low or 0.0, r.high or 0.0)] + [0.05])
    height = len(rows) * (BAR_H + GAP) + 30
    zero = _x(0.0, -bound, bound)
    parts = [_el("line", x1=zero, y1=20, x2=zero, y2=height, stroke="#555")]
    for i, row in enumerate(rows):
        y = 24 + i * (BAR_H + GAP)
        x = _x(row.value, -bound, bound)
        colour = {"regression": BAD, "improvement": GOOD}.get(row.note, NEUTRAL)
        parts.append(_text(LABEL_W - 6, y + 13, row.label, text_anchor="end"))
        rect = {"x": min(x, zero), "y": y, "width": abs(x - zero), "height": BAR_H}
        parts.append(_el("rect", **rect, fill=colour))
        parts.append(_whisker(row, y, -bound, bound))
        parts.append(_text(LABEL_W + PLOT_W + 6, y + 13, f"{row.value:+.3f}"))
    return _svg(height, title, parts)
