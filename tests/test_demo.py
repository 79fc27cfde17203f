"""The demo's plan (`casemill.demo`): its checks, its work folder and the pipeline's parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from casemill.bundled import data_path
from casemill.demo import DEMO_AGENTS, pipeline_parameters, plan_demo, prepare_workdir
from casemill.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


def test_the_plan_reads_the_checkout_and_writes_the_workdir(tmp_path):
    work = tmp_path / "demo"
    plan = plan_demo(ROOT, work, "auto", " reference, reference:obeys_injection ,")
    assert plan.agents == ("reference", "reference:obeys_injection")
    (work / "stale").mkdir(parents=True)
    prepare_workdir(plan)
    assert not (work / "stale").exists()
    manifests = sorted(p.name for p in (work / "corpus" / "manifests").iterdir())
    assert manifests == sorted(p.name for p in (ROOT / "corpus" / "manifests").iterdir())
    params = pipeline_parameters(plan, per_seed=1, seed=4)
    assert params["corpus_dir"] == str(work / "corpus") and params["seeds"] == str(ROOT / "seeds")
    assert params["review_db"] == f"sqlite:///{work.resolve()}/review.db"
    assert params["gate"] == str(ROOT / "gates" / "default.toml")
    assert (params["review"], params["per_seed"], params["seed"]) == ("auto", 1, 4)
    assert params["logs"] == [str(ROOT / "samples" / "support_logs.jsonl")]


def test_the_default_agents_are_the_reference_and_two_faulty_variants():
    assert DEMO_AGENTS[0] == "reference" and len(DEMO_AGENTS) == 3
    assert all(a.startswith("reference:") for a in DEMO_AGENTS[1:])


def test_a_review_policy_other_than_auto_or_human_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"^--review 'autoo': use 'auto' or 'human'"):
        plan_demo(ROOT, tmp_path, "autoo", "reference")


def test_a_folder_without_the_bundled_inputs_says_so(tmp_path):
    (tmp_path / "seeds").mkdir()
    with pytest.raises(UserError, match=r"support_logs\.jsonl is missing: the demo's data is"):
        plan_demo(tmp_path, tmp_path / "work", "human", "reference")
    assert not (tmp_path / "work").exists()


def test_by_default_the_demo_reads_the_data_bundled_with_casemill(tmp_path):
    plan = plan_demo(None, tmp_path / "work", "auto", "reference")
    assert plan.seeds == data_path("seeds")
    assert plan.sample_log == data_path("samples", "support_logs.jsonl")
    assert pipeline_parameters(plan, per_seed=1, seed=0)["gate"] == str(
        data_path("gates", "default.toml")
    )
