"""The project's own lexicons (JSON files in `generators/lexicons/`), loaded once."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

LEXICON_DIR = Path(__file__).parent / "lexicons"


@functools.cache
def lexicon(name: str) -> Any:
    """The parsed `generators/lexicons/NAME.json`."""
    return json.loads((LEXICON_DIR / f"{name}.json").read_text(encoding="utf-8"))
