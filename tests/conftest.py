"""Shared fixtures: paths to the project and to ../shared/data (skipping when it is absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# the `browser` fixture (Debian's Chromium under Playwright) for the tests that use one
pytest_plugins = ["tests.support.browser"]

ROOT = Path(__file__).resolve().parents[1]
# (CASEMILL_SHARED_DATA: where the data is when the checkout is not beside it, a git worktree)
SHARED_DATA = Path(os.environ.get("CASEMILL_SHARED_DATA") or ROOT.parent / "shared" / "data")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"needs the benchmark data at {SHARED_DATA} (../shared/data beside the checkout)"
        )
    return SHARED_DATA


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


LLM_ENDPOINT_VARIABLES = (
    "CASEMILL_LLM_BASE_URL",
    "CASEMILL_LLM_MODEL",
    "CASEMILL_MODEL",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
)


@pytest.fixture
def no_llm_endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No LLM endpoint configured: the endpoint variables unset and the working folder a fresh
    one (no .env file); returns that folder."""
    for name in LLM_ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="session")
def prefect_harness():
    """One Prefect test server for the whole session (about 20-25 s to start): use it only for
    tests that run real flows; test flow logic through plain functions elsewhere."""
    import os

    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield
