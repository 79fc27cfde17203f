"""The recorded agent on an episode of a fake sandbox: what it calls and says, turn by turn."""

import asyncio

import pytest

from casemill.errors import UserError
from casemill.evaluation.agents import AgentError, load_agent
from casemill.recorded import NOT_COVERED, RecordedAgent
from tests.recorded.fakes import calls, episode
from tests.recorded.logs import CANCEL, mined, write_log


@pytest.fixture
def log(tmp_path):
    return write_log(tmp_path / "airline.jsonl")


def _by(cases, conversation_id, kind):
    return next(
        c
        for c in cases
        if c.provenance.source.conversation_id == conversation_id and kind in c.tags.labels
    )


def _run(agent, ep):
    return asyncio.run(agent.run(ep))


def test_it_replays_the_logged_calls_with_the_cases_surrogates(log):
    agent = load_agent(f"recorded:{log}")
    case = _by(mined(log), "air-bags-2", "conversation")
    user = case.environment.state["records"]["user_details"]
    (surrogate,) = user  # the redacted user id, as the mined case holds it
    assert surrogate != "ana_diaz_4821"
    first, second = episode(case, 0), episode(case, 1)
    assert _run(agent, first).text == "No checked bags on ZK3P9Q."
    assert calls(first) == [("get_reservation_details", {"reservation_id": "ZK3P9Q"})]
    assert _run(agent, second).text == "One bag is added to ZK3P9Q."
    assert calls(second) == [
        ("get_user_details", {"user_id": surrogate}),
        ("update_reservation_baggages", {"reservation_id": "ZK3P9Q", "total_baggages": 1}),
    ]


def test_a_case_of_another_log_is_not_covered(log, tmp_path):
    other = write_log(tmp_path / "other.jsonl", dict(CANCEL, conversation_id="air-other-7"))
    case = _by(mined(other), "air-other-7", "conversation")
    with pytest.raises(AgentError) as err:
        _run(load_agent(f"recorded:{log}"), episode(case))
    assert err.value.kind == NOT_COVERED == "not_covered"
    assert str(err.value) == (
        f"{log} holds no conversation 'air-other-7' (case {case.id}): not covered by the "
        "recorded agent"
    )


def test_a_case_that_names_no_conversation_is_not_covered(log):
    case = _by(mined(log), "air-cancel-1", "conversation")
    source = case.provenance.source.model_copy(update={"conversation_id": None})
    unlinked = case.model_copy(
        update={"provenance": case.provenance.model_copy(update={"source": source})}
    )
    with pytest.raises(AgentError, match="names no logged conversation") as err:
        _run(load_agent(f"recorded:{log}"), episode(unlinked))
    assert err.value.kind == "not_covered"


def test_cases_mined_with_another_seed_are_told_to_say_so(log):
    case = _by(mined(log, seed=5), "air-cancel-1", "conversation")
    with pytest.raises(AgentError) as err:
        _run(load_agent(f"recorded:{log}"), episode(case))
    assert err.value.kind == "recorded_log"
    assert "redacted with seed 0" in str(err.value)
    assert "recorded:LOG?seed=N, recorded:LOG?redact=off" in str(err.value)
    assert _run(load_agent(f"recorded:{log}?seed=5"), episode(case)).text


def test_cases_mined_without_redaction_replay_with_redact_off(log):
    case = _by(mined(log, redact=False), "air-cancel-1", "conversation")
    ep = episode(case)
    _run(load_agent(f"recorded:{log}?redact=off"), ep)
    assert calls(ep)[0] == ("get_user_details", {"user_id": "ana_diaz_4821"})


def test_a_bad_log_line_ends_each_case_with_the_line_it_is_on(tmp_path):
    log = write_log(tmp_path / "a.jsonl", CANCEL, lines=("not json",))
    case = _by(mined(write_log(tmp_path / "b.jsonl", CANCEL)), "air-cancel-1", "conversation")
    with pytest.raises(AgentError, match=rf"^{tmp_path / 'a.jsonl'}:2: \[invalid_json\]") as err:
        _run(load_agent(f"recorded:{log}"), episode(case))
    assert err.value.kind == "recorded_log"


def test_name_settings_and_fingerprint(log):
    agent = load_agent(f"recorded:{log}?seed=2")
    assert isinstance(agent, RecordedAgent)
    assert agent.name == f"recorded:{log}?seed=2"
    assert agent.settings == {"log": str(log), "format": "openai-jsonl", "seed": 2, "redact": True}
    assert agent.fingerprint == load_agent(f"recorded:{log}?seed=2").fingerprint
    assert agent.fingerprint != load_agent(f"recorded:{log}").fingerprint
    before = agent.fingerprint
    write_log(log, CANCEL)  # another log under the same name: another agent
    assert load_agent(f"recorded:{log}?seed=2").fingerprint != before


def test_a_missing_log_or_a_temperature_is_refused_at_once(tmp_path):
    with pytest.raises(UserError, match="recorded agent: no such log file"):
        load_agent(f"recorded:{tmp_path / 'nope.jsonl'}")
    with pytest.raises(UserError, match="a temperature"):
        load_agent(f"recorded:{tmp_path / 'nope.jsonl'}", temperature=0.5)


def test_agents_of_one_log_share_its_reading_until_it_changes(log):
    first, again = load_agent(f"recorded:{log}"), load_agent(f"recorded:{log}")
    assert first.log is again.log  # the evaluate flow loads the agent once a batch
    assert load_agent(f"recorded:{log}?seed=1").log is not first.log
    write_log(log, CANCEL)
    assert load_agent(f"recorded:{log}").log is not first.log
