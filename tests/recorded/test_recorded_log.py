"""The log read as `casemill mine` reads it, redacted as it redacts it."""

import json

import pytest

from casemill.recorded.log import LogProblem, RecordedLog
from casemill.recorded.spec import LogSpec
from tests.recorded.logs import BAGS, CANCEL, mined, write_log


def _turn_view(turns):
    return [(t.role, t.content, [(c.tool, c.params) for c in t.tool_calls]) for t in turns]


def _message_view(messages):
    return [(m.role, m.content, [(c.tool, c.arguments) for c in m.calls]) for m in messages]


@pytest.mark.parametrize("seed", [0, 3])
def test_a_conversation_redacted_alone_is_the_one_a_whole_file_mine_run_gave(tmp_path, seed):
    """Redaction draws from the seed and the conversation's content only: each case's turns
    (texts, tool calls with their arguments) are the start of its conversation redacted alone."""
    log = write_log(tmp_path / "airline.jsonl")
    recorded = RecordedLog(LogSpec(log, seed=seed))
    cases = mined(log, seed=seed)
    assert len(cases) == 4
    for case in cases:
        found = recorded.find(case.provenance.source.conversation_id, None)
        start = found.conversation.messages[: len(case.conversation)]
        assert _turn_view(case.conversation) == _message_view(start)
    said = " ".join(t.content for c in cases for t in c.conversation)
    assert "ana_diaz_4821" not in said and "Ana Diaz" not in said


def test_a_redacted_conversation_id_is_found_whatever_line_the_case_names(tmp_path):
    log = write_log(tmp_path / "a.jsonl", dict(CANCEL, conversation_id="ana.diaz@gmail.com"))
    (case,) = {c.provenance.source.conversation_id: c for c in mined(log)}.values()
    wanted = case.provenance.source.conversation_id
    assert "ana.diaz@gmail.com" not in wanted
    for line in (1, 7, None):  # the right line, a wrong one, none
        found = RecordedLog(LogSpec(log)).find(wanted, line)
        assert found.raw_id == "ana.diaz@gmail.com" and found.conversation.id == wanted
    assert RecordedLog(LogSpec(log)).find("ana.diaz@gmail.com", 1) is None  # the raw id


def test_a_log_is_parsed_once_for_every_look_up(tmp_path, monkeypatch):
    from casemill.recorded import log as module

    log = write_log(tmp_path / "a.jsonl")
    recorded, reads = RecordedLog(LogSpec(log)), []
    real = module.parsed
    monkeypatch.setattr(module, "parsed", lambda *a, **k: reads.append(1) or real(*a, **k))
    assert recorded.find("air-cancel-1", 1) and recorded.find("air-bags-2", 2)
    assert recorded.find("air-nothing-9") is None and len(recorded) == 2
    assert reads == [1]


def test_a_line_that_is_not_json_is_an_error_naming_file_and_line(tmp_path):
    log = write_log(tmp_path / "a.jsonl", CANCEL, lines=('{"conversation_id": "x", "mess',))
    recorded = RecordedLog(LogSpec(log))
    with pytest.raises(LogProblem) as err:
        recorded.find("air-cancel-1", 1)
    said = str(err.value)
    assert said.startswith(f"{log}:2: [")
    assert "`casemill mine --format openai-jsonl` reads without setting a record aside" in said
    with pytest.raises(LogProblem):  # said again, not read again
        recorded.conversations()


def test_a_log_without_any_tool_call_has_nothing_to_replay(tmp_path):
    talk = [m for m in BAGS["messages"] if m["role"] in ("system", "user")]
    talk.insert(2, {"role": "assistant", "content": "Sure."})
    log = tmp_path / "talk.jsonl"
    log.write_text(json.dumps({"conversation_id": "t", "messages": talk}) + "\n")
    with pytest.raises(LogProblem, match="no conversation of this openai-jsonl log holds a tool"):
        RecordedLog(LogSpec(log)).conversations()


def test_a_missing_log_is_said(tmp_path):
    with pytest.raises(LogProblem, match="no such log file"):
        RecordedLog(LogSpec(tmp_path / "nope.jsonl")).conversations()


def test_a_named_entity_model_that_is_not_installed_is_said(tmp_path):
    log = write_log(tmp_path / "a.jsonl")
    recorded = RecordedLog(LogSpec(log, names_model="no_such_spacy_model"))
    with pytest.raises(LogProblem, match=r"^names-model=no_such_spacy_model: "):
        recorded.conversations()
