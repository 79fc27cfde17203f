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
