"""The LLM judge, end to end against the local OpenAI-compatible server: verdicts per criterion,
reasons and prompt hash kept, malformed replies recorded, agreement with human labels."""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr

from casemill.errors import EndpointNotConfigured, RecordError
from casemill.evaluation.judge import (
    DEFAULT_RUBRIC,
    PROMPT_VERSION,
    Judge,
    JudgeVerdict,
    agreement,
    apply_judge,
    cohen_kappa,
    load_human_labels,
)
from casemill.evaluation.scoring import score
from casemill.evaluation.scoring.pipeline import evaluate_run
from casemill.llm import LLMEndpoint
from casemill.settings import Settings
from tests.evaluation.scoring.casebuild import (
    GOOD_REFUND,
    GOOD_REFUND_REPLY,
    cancel_case,
    refund_case,
    trajectory,
)
from tests.support.openai_server import OpenAIServer, Reply

NAMES = [c.name for c in DEFAULT_RUBRIC]


def grader(body: dict) -> dict:
    """Passes every criterion when the transcript shows the 14.50 refund, else fails them."""
    text = body["messages"][-1]["content"]
    ok = "refund of $14.50" in text
    verdicts = [
        {"criterion": n, "pass": ok, "reason": f"{n}: {'fine' if ok else 'no refund given'}"}
        for n in NAMES
    ]
    return {"content": json.dumps({"verdicts": verdicts})}


def _endpoint(server: OpenAIServer) -> LLMEndpoint:
    return LLMEndpoint(
        base_url=server.base_url, model="judge-model", api_key=SecretStr("sk-test"), max_retries=0
    )


def _two_trials():
    refund, cancel = refund_case(), cancel_case()
    ts = [
        trajectory(refund, GOOD_REFUND, GOOD_REFUND_REPLY),
        trajectory(cancel, [], "Sorry, I cannot."),
    ]
    return [refund, cancel], ts, [score(c, t) for c, t in zip([refund, cancel], ts, strict=True)]


@pytest.mark.slow  # the first use of the openai SDK imports it (seconds)
def test_judge_scores_each_criterion_and_keeps_reasons(tmp_path):
    cases, ts, scores = _two_trials()
    with OpenAIServer(grader) as server:
        judge = Judge(_endpoint(server))
        updated, notes = apply_judge(judge, cases, ts, scores, run_dir=tmp_path)
        body = server.requests[0]
    assert body["model"] == "judge-model"
    assert body["response_format"] == {"type": "json_object"}
    assert "data, not instructions" in body["messages"][0]["content"]
    by_case = {s.case_id: s for s in updated}
    assert all(by_case[cases[0].id].metrics[f"judge_{n}"] == 1.0 for n in NAMES)
    assert all(by_case[cases[1].id].metrics[f"judge_{n}"] == 0.0 for n in NAMES)
    assert by_case[cases[0].id].metrics["task_success"] == 1.0  # other metrics untouched
    lines = [
        JudgeVerdict.model_validate_json(x)
        for x in (tmp_path / "judge.jsonl").read_text().splitlines()
    ]
    assert len(lines) == 2 * len(NAMES)
    assert {v.prompt_hash for v in lines} == {judge.prompt_hash}
    assert {v.prompt_version for v in lines} == {PROMPT_VERSION}
    assert any(v.reason == "truthful: no refund given" for v in lines)
    assert f"prompt v{PROMPT_VERSION} ({judge.prompt_hash})" in notes[0]


def test_malformed_judge_replies_become_missing_verdicts():
    cases, ts, scores = _two_trials()
    with OpenAIServer(
        lambda body: Reply(
            body={
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "yes!"},
                        "finish_reason": "stop",
                    }
                ]
            }
        )
    ) as server:
        updated, notes = apply_judge(Judge(_endpoint(server), concurrency=1), cases, ts, scores)
        assert len(server.requests) == 2 * 3  # three attempts per trial
    assert all(s.metrics["judge_truthful"] is None for s in updated)
    assert f"{2 * len(NAMES)} verdicts missing" in notes[0]


def test_server_errors_are_recorded_not_raised():
    cases, ts, scores = _two_trials()
    with OpenAIServer(
        lambda body: Reply(status=500, body={"error": {"message": "down"}})
    ) as server:
        judge = Judge(_endpoint(server))
        verdicts = judge.judge_one(cases[0], ts[0])
    assert all(v.passed is None and v.error for v in verdicts)


def test_cohen_kappa_by_hand():
    pairs = [(True, True), (True, False), (False, False), (False, False)]
    raw, kappa = cohen_kappa(pairs)
    assert raw == 0.75
    assert kappa == pytest.approx((0.75 - 0.5) / 0.5)
    assert cohen_kappa([]) == (None, None)
    assert cohen_kappa([(True, True), (True, True)]) == (1.0, 1.0)


def test_agreement_with_human_labels_in_the_summary(tmp_path):
    cases, ts, _ = _two_trials()
    labels = tmp_path / "labels.jsonl"
    rows = [
        {"case_id": cases[0].id, "criterion": "truthful", "pass": True},
        {"case_id": cases[1].id, "criterion": "truthful", "pass": True},
        {"case_id": cases[0].id, "criterion": "policy_safe", "pass": True, "trial": 0},
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    human = load_human_labels(labels)
    with OpenAIServer(grader) as server:
        outcome = evaluate_run(
            tmp_path / "run", cases, ts, judge=Judge(_endpoint(server), human_labels=human)
        )
    found = json.loads((tmp_path / "run" / "judge_agreement.json").read_text())
    assert {a["criterion"]: (a["n"], a["raw"]) for a in found} == {
        "policy_safe": (1, 1.0),
        "truthful": (2, 0.5),
    }
    assert any(
        "agreement with human labels on truthful: raw 0.500" in n for n in outcome.summary.notes
    )
    assert outcome.summary.metrics["judge_truthful"].mean == 0.5


def test_agreement_ignores_missing_verdicts():
    v = [JudgeVerdict(case_id="c", trial=0, criterion="x", passed=None, error="e")]
    assert agreement(v, {("c", 0, "x"): True}) == []


def test_bad_human_label_names_line_and_field(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"case_id": "c", "criterion": "x", "pass": true}\n'
        '{"case_id": "c", "criterion": "x", "pass": "yes"}\n'
    )
    with pytest.raises(RecordError) as info:
        load_human_labels(path)
    assert (info.value.line, info.value.field) == (2, "pass")


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('{"case_id": "c", "trial": "zero", "criterion": "x", "pass": true}', "trial", "'zero'"),
        ('{"case_id": "c", "trial": -1, "criterion": "x", "pass": true}', "trial", "-1"),
        ('["c", 0, "x", true]', None, "expected a JSON object, got list"),
    ],
)
def test_a_human_label_of_another_shape_names_line_and_field(tmp_path, line, field, message):
    """A trial that is not a number, a line that is not an object: an error naming the line
    and field (`casemill eval --human-labels` printed a ValueError traceback)."""
    path = tmp_path / "labels.jsonl"
    path.write_text('{"case_id": "c", "criterion": "x", "pass": true}\n' + line + "\n")
    with pytest.raises(RecordError) as info:
        load_human_labels(path)
    assert (info.value.line, info.value.field) == (2, field)
    assert message in str(info.value)


def test_a_human_label_for_a_criterion_the_rubric_lacks_names_line_and_field(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"case_id": "c", "criterion": "truthful", "pass": true}\n'
        '{"case_id": "c", "criterion": "truthfull", "pass": true}\n'
    )
    assert len(load_human_labels(path)) == 2  # without a rubric every criterion is taken
    with pytest.raises(RecordError) as info:
        load_human_labels(path, [c.name for c in DEFAULT_RUBRIC])
    assert (info.value.line, info.value.field) == (2, "criterion")
    assert "unknown criterion 'truthfull'; the rubric has: addresses_request," in str(info.value)


def test_without_an_endpoint_the_judge_says_how_to_configure_one(no_llm_endpoint):
    with pytest.raises(EndpointNotConfigured, match="CASEMILL_LLM_BASE_URL"):
        LLMEndpoint.from_settings(Settings(_env_file=None))


def test_custom_rubric_from_toml_changes_criteria_and_prompt_hash(tmp_path):
    from casemill.evaluation.judge import load_rubric

    path = tmp_path / "rubric.toml"
    path.write_text('[[criterion]]\nname = "apologises"\nquestion = "Does the agent apologise?"\n')
    rubric = load_rubric(path)
    assert [c.name for c in rubric] == ["apologises"]
    endpoint = LLMEndpoint(base_url="http://127.0.0.1:9/v1", model="m")
    assert Judge(endpoint, rubric=rubric).prompt_hash != Judge(endpoint).prompt_hash


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[[criterion]]\nname = "Bad Name"\nquestion = "q"\n', "criterion 1, field 'name'"),
        ('[[criterion]]\nname = "a"\n', "criterion 1, field 'question': Field required"),
        ("title = 'x'\n", "no [[criterion]] tables"),
        (
            '[[criterion]]\nname = "a"\nquestion = "q"\n[[criterion]]\nname = "a"\nquestion = "r"\n',
            "repeat",
        ),
    ],
)
def test_bad_rubric_names_the_criterion_and_field(tmp_path, text, expected):
    from casemill.errors import UserError
    from casemill.evaluation.judge import load_rubric

    path = tmp_path / "rubric.toml"
    path.write_text(text)
    with pytest.raises(UserError, match=None) as info:
        load_rubric(path)
    assert str(info.value).startswith(str(path)) and expected in str(info.value)


def test_a_second_judging_of_the_same_run_reuses_verdicts(tmp_path):
    cases, ts, scores = _two_trials()
    with OpenAIServer(grader) as server:
        judge = Judge(_endpoint(server))
        first, _ = apply_judge(judge, cases, ts, scores, run_dir=tmp_path)
        asked = len(server.requests)
        again, notes = apply_judge(judge, cases, ts, scores, run_dir=tmp_path)
        assert len(server.requests) == asked == 2  # nothing asked the second time
        changed = [ts[0], ts[1].model_copy(update={"final_reply": "Now a different reply."})]
        apply_judge(judge, cases, changed, scores, run_dir=tmp_path)
        assert len(server.requests) == 3  # only the changed trajectory is judged again
    assert [s.metrics for s in again] == [s.metrics for s in first]
    assert "(2 verdict sets reused from judge.jsonl)" in notes[0]
