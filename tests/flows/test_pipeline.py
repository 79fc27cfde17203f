"""The full pipeline's plain helpers (the flow itself runs in test_flows_e2e)."""

from __future__ import annotations

from pathlib import Path

from flows.pipeline import review_db_url


def test_review_db_given_wins(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CASEMILL_REVIEW_DB", "postgresql+psycopg://team/casemill")
    assert review_db_url("sqlite:///given.db", tmp_path) == "sqlite:///given.db"


def test_configured_review_db_is_the_shared_queue(tmp_path: Path, monkeypatch):
    # a team's workers and web app share CASEMILL_REVIEW_DB: the pipeline's batch must go there
    monkeypatch.setenv("CASEMILL_REVIEW_DB", "postgresql+psycopg://team/casemill")
    assert review_db_url(None, tmp_path) == "postgresql+psycopg://team/casemill"


def test_unconfigured_review_db_is_a_file_in_the_workdir(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("CASEMILL_REVIEW_DB", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here
    assert (
        review_db_url(None, tmp_path / "work")
        == f"sqlite:///{(tmp_path / 'work').resolve()}/review.db"
    )
