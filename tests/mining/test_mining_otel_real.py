"""The OTel parser on exports written by real GenAI instrumentations (`otel_exports/`, made by
`otel_exports/generate.py`: the `openai` client 3.57 in an agent loop against a scripted local
server, two support conversations, encoded by opentelemetry-sdk 1.45.2 as the collector's file
exporter writes them):

- `openllmetry-0.62.jsonl`: opentelemetry-instrumentation-openai 0.62.4 (OpenLLMetry), messages
  in `gen_ai.input.messages` / `gen_ai.output.messages`;
- `openllmetry-0.52.jsonl`: the same at 0.52.6, in `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`;
- `openinference.jsonl`: openinference-instrumentation-openai 0.1.66, `llm.input_messages.N.*`;
- `openai-v2-spans.jsonl`: opentelemetry-instrumentation-openai-v2 2.4b0 (util-genai 1.1b0,
  latest conventions, span_only);
- `openai-v2-logs.jsonl`: the same with event_only: the messages only in log records
  (`gen_ai.client.inference.operation.details`), written before each conversation's spans;
- `openai-v2-legacy-logs.jsonl`: opentelemetry-instrumentation-openai-v2 2.3b0 (util-genai 0.4b0,
  content capture on): the messages only in log records of events (`gen_ai.user.message`,
  `gen_ai.choice`, ...);
- `openinference-turns.jsonl`, `openai-v2-spans-turns.jsonl` (`generate.py --turns`): each
  conversation in two turns, a trace a turn, the two conversations' turns taking turns; the
  conversation named by `gen_ai.conversation.id` on the application's span of the turn (and
  OpenInference's `using_session`: `session.id` on its spans);
- `openai-v2-spans-agent-tool.jsonl` (`--agent-tool`): a triage agent hands each refund to a
  refund agent called as its tool, which runs its own loop inside the tool's `execute_tool` span.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casemill.mining import mine
from casemill.mining.parsers import otel

EXPORTS = Path(__file__).parent / "otel_exports"
FILES = sorted(
    p.name for p in EXPORTS.glob("*.jsonl") if not p.stem.endswith(("-turns", "-agent-tool"))
)
TURNS = sorted(p.name for p in EXPORTS.glob("*-turns.jsonl"))


def spoken(order: str, said: str) -> list[tuple]:
    """The conversation every export holds, as (role, content, calls)."""
    item = "I" + order[-1]
    looked = json.dumps({"id": order, "status": "delivered", "items": [{"item_id": item}]})
    refunded = json.dumps({"refund_id": "R" + order[-1], "amount": 64.75})
    return [
        ("system", "You are a support agent.", []),
        ("customer", said, []),
        ("assistant", "", [("get_order", {"order_id": order}, looked)]),
        ("tool", looked, []),
        ("assistant", "", [("refund_items", {"order_id": order, "item_ids": [item]}, refunded)]),
        ("tool", refunded, []),
        ("assistant", "Done, refunded.", []),
    ]


CONVERSATIONS = [
    spoken("W1001", "Hi, the blanket in order W1001 arrived broken, refund it please."),
    spoken("W1002", "Hello, the lamp from order W1002 does not work. Please refund it."),
]
# in two turns: the agent asks before it refunds
ASKED = [
    [
        *c[:4],
        ("assistant", "I can refund it. Shall I?", []),
        ("customer", "Yes please.", []),
        *c[4:],
    ]
    for c in CONVERSATIONS
]


def heard(conv) -> list[tuple]:
    return [
        (m.role, m.content, [(c.tool, c.arguments, c.result) for c in m.calls])
        for m in conv.messages
    ]


def test_there_is_an_export_of_each_instrumentation():
    assert TURNS == ["openai-v2-spans-turns.jsonl", "openinference-turns.jsonl"]
    assert FILES == [
        "openai-v2-legacy-logs.jsonl",
        "openai-v2-logs.jsonl",
        "openai-v2-spans.jsonl",
        "openinference.jsonl",
        "openllmetry-0.52.jsonl",
        "openllmetry-0.62.jsonl",
    ]


@pytest.mark.parametrize("name", FILES)
def test_each_instrumentations_export_gives_the_conversations(name):
    items = list(otel.parse(EXPORTS / name, max_turns=50))
    assert [type(i).__name__ for i in items] == ["Conversation", "Conversation"]
    assert [heard(i) for i in items] == CONVERSATIONS
    assert [i.resolved for i in items] == [True, True]
    assert [i.partial for i in items] == [None, None]


@pytest.mark.parametrize("name", FILES)
def test_each_instrumentations_export_gives_the_refund_as_the_expected_call(name):
    result = mine([EXPORTS / name], "otel", redact=False)
    assert result.quarantined == ()
    expected = sorted(
        (
            case.provenance.source.conversation_id
            == result.cases[0].provenance.source.conversation_id,
            case.provenance.operators[0].name,
            [
                (e.tool, e.params["order_id"], e.params["item_ids"])
                for e in case.expected.tool_calls
            ],
        )
        for case in result.cases
    )
    # (the reads are not expected; the write is, from the decision point and the conversation)
    assert expected == [
        (False, "conversation", [("refund_items", "W1002", ["I2"])]),
        (False, "decision_point", [("refund_items", "W1002", ["I2"])]),
        (True, "conversation", [("refund_items", "W1001", ["I1"])]),
        (True, "decision_point", [("refund_items", "W1001", ["I1"])]),
    ]


def test_log_records_after_all_the_spans_are_read_as_well(tmp_path):
    """Logs and spans exported apart, then put in one file: all the spans' lines first."""
    lines = (EXPORTS / "openai-v2-legacy-logs.jsonl").read_text().splitlines(keepends=True)
    spans = [line for line in lines if line.startswith('{"resourceSpans"')]
    logs = [line for line in lines if line.startswith('{"resourceLogs"')]
    assert spans and logs
    (tmp_path / "after.jsonl").write_text("".join(spans + logs))
    items = list(otel.parse(tmp_path / "after.jsonl", max_turns=50))
    assert [heard(i) for i in items] == CONVERSATIONS


@pytest.mark.parametrize("name", ["openai-v2-logs.jsonl", "openai-v2-legacy-logs.jsonl"])
def test_spans_whose_messages_went_to_log_records_not_exported_say_so(tmp_path, name):
    lines = (EXPORTS / name).read_text().splitlines(keepends=True)
    (tmp_path / "spans.jsonl").write_text("".join(ln for ln in lines if "resourceLogs" not in ln))
    result = mine([tmp_path / "spans.jsonl"], "otel", redact=False)
    assert not result.cases
    assert [q.reason for q in result.quarantined] == ["missing_messages"] * 2
    assert "export the logs to the same file as the spans" in result.quarantined[0].message


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("openllmetry-0.52.jsonl", ("gen_ai.prompt.", "gen_ai.completion.")),
        ("openinference.jsonl", ("llm.input_messages.", "llm.output_messages.")),
    ],
)
def test_model_calls_whose_content_was_not_captured_are_named_as_such(tmp_path, name, kept):
    docs = [json.loads(line) for line in (EXPORTS / name).read_text().splitlines()]
    for doc in docs:
        for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["attributes"] = [a for a in span["attributes"] if not a["key"].startswith(kept)]
    (tmp_path / "off.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    result = mine([tmp_path / "off.jsonl"], "otel", redact=False)
    # before: "no customer turn", which did not say why
    assert [q.reason for q in result.quarantined] == ["missing_messages"] * 2


@pytest.mark.parametrize("name", TURNS)
def test_the_traces_of_each_turn_are_mined_as_one_conversation(name):
    lines = (EXPORTS / name).read_text().splitlines()
    assert len(lines) == 4  # a trace a turn
    items = list(otel.parse(EXPORTS / name, max_turns=50))
    assert [heard(i) for i in items] == ASKED
    assert [(i.id, i.resolved, i.line) for i in items] == [
        ("conversation-1", True, 1),
        ("conversation-2", True, 2),
    ]


def test_an_agent_called_as_a_tool_is_mined_inside_the_conversation_of_the_one_that_called_it():
    items = list(otel.parse(EXPORTS / "openai-v2-spans-agent-tool.jsonl", max_turns=50))
    # before: the refund agent's history (the longest) was taken for the conversation, the
    # triage agent's call appended after it and its answer to the customer lost
    for conv, spoken_ in zip(items, CONVERSATIONS, strict=True):  # (its parts, reused)
        looked, refunded = spoken_[3][1], spoken_[5][1]
        order, item = spoken_[2][2][0][1], spoken_[4][2][0][1]["item_ids"]
        assert heard(conv) == [
            ("system", "You triage support requests; a refund agent does refunds.", []),
            ("customer", spoken_[1][1], []),
            ("assistant", "", [("refund_agent", {"request": spoken_[1][1]}, "Done, refunded.")]),
            ("assistant", "", [("get_order", order, looked)]),
            ("tool", looked, []),
            ("assistant", "", [("refund_items", {**order, "item_ids": item}, refunded)]),
            ("tool", refunded, []),
            ("tool", "Done, refunded.", []),
            ("assistant", "Your refund is on its way.", []),
        ]
    assert [i.resolved for i in items] == [True, True]
