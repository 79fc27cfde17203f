"""The full pipeline's plain helpers (the flow itself runs in test_flows_e2e)."""

from __future__ import annotations

from pathlib import Path

import pytest

from casemill.flows.pipeline import review_db_url


def test_review_db_given_wins(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CASEMILL_REVIEW_DB", "postgresql+psycopg://team/casemill")
    assert review_db_url("sqlite:///given.db", tmp_path) == "sqlite:///given.db"


def test_configured_review_db_is_the_shared_queue_read_by_the_subflow(tmp_path: Path, monkeypatch):
    """A team's workers and web app share CASEMILL_REVIEW_DB: the pipeline's batch goes there,
    read from the settings by the review subflow itself (None), so the URL and its password are
    not a subflow parameter, which the Prefect server stores and shows."""
    monkeypatch.setenv("CASEMILL_REVIEW_DB", "postgresql+psycopg://team:S3cret@db/casemill")
    assert review_db_url(None, tmp_path) is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"review": "autoo"}, "review must be one of human, auto, not 'autoo'"),
        ({"agents": ["nosuchagent"]}, "unknown agent spec 'nosuchagent'"),
        ({"corpus_dir": "NOWHERE"}, "corpus_dir NOWHERE: no such corpus folder"),
    ],
)
def test_the_pipelines_inputs_are_checked_before_any_stage(tmp_path, kwargs, message):
    """A typo in review or agents was found after mining and expanding, an agent's after the
    corpus got a new version; a missing corpus was made anew."""
    from casemill.errors import UserError
    from casemill.flows.pipeline import check_inputs

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    given = {"review": "auto", "agents": ["reference"], "corpus_dir": str(corpus), **kwargs}
    given["corpus_dir"] = given["corpus_dir"].replace("NOWHERE", str(tmp_path / "nowhere"))
    with pytest.raises(UserError, match=message.replace("NOWHERE", str(tmp_path / "nowhere"))):
        check_inputs(temperature=None, **given)
    check_inputs("auto", ["reference"], str(corpus), None)  # all fine: no error


def test_unconfigured_review_db_is_a_file_in_the_workdir(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("CASEMILL_REVIEW_DB", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here
    assert (
        review_db_url(None, tmp_path / "work")
        == f"sqlite:///{(tmp_path / 'work').resolve()}/review.db"
    )


def test_each_agent_runs_in_a_path_safe_folder():
    from casemill.flows.pipeline import run_name

    assert run_name("reference:refund_whole_order") == "reference-refund_whole_order"
    assert run_name("python:pkg.mod:agent") == "python-pkg.mod-agent"
    assert run_name("http://host/agent") == "http-__host_agent"
