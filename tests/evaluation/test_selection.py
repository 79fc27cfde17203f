"""Which cases a run takes: filters, the sample stratified by operator, the limit; and
`casemill eval --sample 20` against the local OpenAI-compatible server, which runs 20 cases,
the operators in proportion, the same ones again with the same seed, and says which endpoint
and model it talks to."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.errors import UserError
from casemill.evaluation.selection import operator_of, select_cases, stratified_sample
from tests.evaluation.scoring.casebuild import clarify_case, refund_case, variant_of
from tests.support.openai_server import OpenAIServer

runner = CliRunner()
MIX = {"typos": 30, "casing": 20, "swap_order_id": 10}


def _cases():
    refund = refund_case()
    return [
        variant_of(refund, f"my mug {i} came cracked ({name})", operator=name)
        for name, n in MIX.items()
        for i in range(n)
    ]


def test_the_sample_keeps_each_operators_share_and_repeats_with_its_seed():
    cases = _cases()
    picked = stratified_sample(cases, 20, seed=1)
    assert Counter(operator_of(c) for c in picked) == {"typos": 10, "casing": 7, "swap_order_id": 3}
    assert [c.id for c in stratified_sample(cases, 20, seed=1)] == [c.id for c in picked]
    assert {c.id for c in stratified_sample(cases, 20, seed=2)} != {c.id for c in picked}
    ids = [c.id for c in cases]
    assert [ids.index(c.id) for c in picked] == sorted(ids.index(c.id) for c in picked)


def test_a_small_operator_is_not_left_out_of_a_sample_that_has_room():
    cases = _cases()[:40] + _cases()[-1:]  # one swap_order_id case among 41
    picked = stratified_sample(cases, 5, seed=0)
    assert Counter(operator_of(c) for c in picked)["swap_order_id"] == 1 and len(picked) == 5


def test_filters_narrow_then_the_sample_then_the_limit():
    cases = [*_cases(), clarify_case()]
    kept, note = select_cases(cases, filters=["tag=adversarial"])
    assert kept == [cases[-1]] and note == "cases run: 1 of 61 cases match tag=adversarial"
    kept, _ = select_cases(cases, filters=["operator=casing,typos", "intent=refund"])
    assert len(kept) == 50
    kept, _ = select_cases(cases, filters=[f"id={cases[3].id[:12]}"])
    assert kept == [cases[3]]
    kept, note = select_cases(cases, sample=20, limit=5, seed=0)
    assert len(kept) == 5 and note.endswith("seed 0; the first 5 of 20")
    assert select_cases(cases) == (cases, "")
    with pytest.raises(UserError, match="KEY one of tag, operator"):
        select_cases(cases, filters=["colour=red"])
    with pytest.raises(UserError, match="no case matches intent=cancel"):
        select_cases(cases, filters=["intent=cancel"])


def test_eval_sample_20_runs_20_cases_on_the_local_server(tmp_path: Path, monkeypatch):
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(c.model_dump_json() + "\n" for c in _cases()))
    with OpenAIServer(lambda body: {"content": "Sorry, I cannot help."}) as server:
        monkeypatch.setenv("CASEMILL_LLM_BASE_URL", server.base_url)
        argv = ["eval", "--agent", "openai:m", "--cases", str(path), "--sample", "20"]
        result = runner.invoke(app, [*argv, "--seed", "1", "-o", str(tmp_path / "run")])
        customers = {body["messages"][-1]["content"] for body in server.requests}
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"running on 20 cases; endpoint {server.base_url}, model m" in said
    assert "a sample of 20 of 60, stratified by operator (3 operators), seed 1" in said
    assert len(server.requests) == 20 and len(customers) == 20
    scored = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    by_id = {c.id: c for c in _cases()}
    ops = Counter(operator_of(by_id[r["case_id"]]) for r in scored)
    assert ops == {"typos": 10, "casing": 7, "swap_order_id": 3}
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["cases"] == 20 and summary["case_set"]["count"] == 20
    assert summary["endpoint"] == server.base_url


def test_openai_api_key_alone_means_openais_own_endpoint(monkeypatch, no_llm_endpoint):
    from casemill.evaluation.stage import agent_endpoint, shown_url
    from casemill.llm import LLMEndpoint

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    assert LLMEndpoint.from_settings(model="gpt-4o-mini").base_url == "https://api.openai.com/v1"
    assert agent_endpoint("openai:gpt-4o-mini") == "https://api.openai.com/v1"
    assert shown_url("http://user:secret@host:8000/v1") == "http://host:8000/v1"
