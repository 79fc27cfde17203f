"""One line a figure, for `bench/run_all.py`: every bench script calls `figure(...)` for each
number it is judged on, beside its own human-readable output."""

from __future__ import annotations

import json

PREFIX = "FIGURE "


def figure(
    name: str, measured: float | None, target: str, unit: str = "", ok: bool | None = None
) -> None:
    """Print a machine-readable figure: its name, the measured value, the target in words
    (e.g. '>= 5,000'), the unit, and whether the target is met (None when it has no target)."""
    print(
        PREFIX
        + json.dumps(
            {"name": name, "measured": measured, "target": target, "unit": unit, "ok": ok}
        ),
        flush=True,
    )


def description(doc: str | None) -> str:
    """The first paragraph of a script's docstring on one line, for its `--help` (the first
    line alone would cut a sentence that runs on)."""
    first = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(first.split())
