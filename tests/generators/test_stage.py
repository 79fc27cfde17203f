"""The expand stage (`casemill.generators.stage`), without Prefect and without the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casemill.errors import UserError
from casemill.generators import ExpandConfig, expand
from casemill.generators.stage import (
    ExpandRequest,
    expand_part,
    finish_expand,
    plan_expand,
    run_expand,
)
from casemill.io.jsonl import atomic_write_jsonl, read_jsonl

CHAINS = ("keyboard_typo", "swap_order_id")


@pytest.fixture
def seed_file(tmp_path: Path, small_seeds) -> Path:
    path = tmp_path / "seeds.jsonl"
    atomic_write_jsonl(path, [c.model_dump(mode="json") for c in small_seeds])
    return path


def _lines(path: Path) -> list[dict]:
    return [line.value for line in read_jsonl(path)]


def test_run_expand_writes_the_candidates_rejects_and_summary(tmp_path, seed_file, small_seeds):
    out = tmp_path / "out" / "cands.jsonl"
    ticks = []
    outcome = run_expand(
        ExpandRequest(seeds=seed_file, out=out, chains=CHAINS, seed=3),
        progress=lambda done, total: ticks.append((done, total)),
    )
    assert outcome.paths == {
        "candidates": out,
        "rejects": out.with_name("cands.rejects.jsonl"),
        "summary": out.with_name("cands.summary.json"),
    }
    candidates = _lines(out)
    assert outcome.seeds == len(small_seeds) == 8
    assert outcome.accepted == len(candidates) > 0
    assert json.loads(outcome.paths["summary"].read_text()) == outcome.summary
    assert outcome.summary["accepted"] == outcome.accepted
    assert ticks[-1] == (8, 8) and len(ticks) == 8
    assert {c["provenance"]["parents"][0] for c in candidates} <= {s.id for s in small_seeds}
    rejected = sum(outcome.summary["rejected_by_reason"].values())
    assert len(_lines(outcome.paths["rejects"])) == rejected


def test_one_batch_writes_what_expand_returns(tmp_path, seed_file, small_seeds):
    """The stage's merge of a single batch is `expand` itself: what `casemill expand` wrote
    before it was built from the flow's pieces."""
    outcome = run_expand(ExpandRequest(seeds=seed_file, out=tmp_path / "o.jsonl", chains=CHAINS))
    direct = expand(small_seeds, ExpandConfig(chains=CHAINS), 0)
    assert [c["id"] for c in _lines(tmp_path / "o.jsonl")] == [c.id for c in direct.candidates]
    assert outcome.summary == direct.summary.as_dict()


def test_batches_are_the_pieces_the_flow_maps_over(tmp_path, seed_file, small_seeds):
    request = ExpandRequest(
        seeds=seed_file, out=tmp_path / "b.jsonl", chains=CHAINS, batch_size=3, caller="flow"
    )
    plan = plan_expand(request)
    assert plan.batches == ((0, 3), (3, 6), (6, 9))
    results = [
        expand_part(str(seed_file), a, b, plan.fingerprint, None, plan.config, 0)
        for a, b in plan.batches
    ]
    parents = [{c.provenance.parents[0] for c in r.candidates} for r in results]
    assert parents[0] <= {s.id for s in small_seeds[:3]} and parents[2]
    outcome = finish_expand(request, plan, results)
    assert outcome.accepted <= sum(len(r.candidates) for r in results)
    assert outcome.summary["seeds"] == 8
    assert outcome.summary["attempts"] == sum(r.summary.attempts for r in results)
    whole = run_expand(request)  # run_expand is the same pieces: the same files
    assert whole.summary == outcome.summary and whole.accepted == outcome.accepted


def test_a_skipped_seed_is_told_and_written_to_the_rejects(tmp_path, seed_file):
    with seed_file.open("a") as handle:
        handle.write('{"id": "broken"}\n')
    told = []
    out = tmp_path / "s.jsonl"
    outcome = run_expand(
        ExpandRequest(seeds=seed_file, out=out, chains=("keyboard_typo",)),
        warn=lambda label, text: told.append((label, text)),
    )
    assert [label for label, _ in told] == ["skipped seed"]
    assert outcome.summary["seeds_skipped"] == 1
    (first, *_) = _lines(outcome.paths["rejects"])
    assert first["chain"] == "(seed)" and first["line"] == 9
    assert first["reason"].startswith("invalid_seed:")


@pytest.mark.parametrize(
    ("caller", "changes", "message"),
    [
        ("cli", {"dedup_threshold": 0}, r"^--dedup-threshold 0: expected a number above 0"),
        ("flow", {"dedup_threshold": 1.5}, r"^dedup_threshold 1.5: expected a number above 0"),
        ("cli", {"quotas": {"nois": 1}}, r"^--quota nois=1: unknown kind"),
        ("flow", {"quotas": {"nois": 1}}, r"^quotas nois=1: unknown kind"),
        ("flow", {"batch_size": 0}, r"^per_seed \(2\) and batch_size \(0\) must be at least 1"),
        ("cli", {"corpus": "nowhere"}, r"^--corpus nowhere: "),
        ("flow", {"corpus": "nowhere"}, r"^corpus_dir nowhere: "),
    ],
)
def test_bad_settings_are_refused_by_the_name_the_caller_gives_them(
    tmp_path, seed_file, monkeypatch, caller, changes, message
):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "x.jsonl"
    request = ExpandRequest(seeds=seed_file, out=out, caller=caller, **changes)
    with pytest.raises(UserError, match=message):
        run_expand(request)
    assert not out.exists()


def test_an_output_that_is_an_input_is_refused_before_any_work(seed_file):
    with pytest.raises(UserError, match=f"-o {seed_file} is also an input"):
        run_expand(ExpandRequest(seeds=seed_file, out=seed_file))
    assert len(seed_file.read_text().splitlines()) == 8  # the seeds are still there
