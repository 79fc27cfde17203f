"""Debian's Chromium driven by Playwright, for the tests that open a page in a real browser
(browsers cannot be downloaded here: Playwright launches the system's own). tests/conftest.py
loads it as a plugin, so a test asks for `browser`; without Chromium it skips, saying how to
get it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(
            f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()
