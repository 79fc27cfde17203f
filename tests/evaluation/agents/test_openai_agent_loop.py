"""The `openai:` adapter end to end against the local OpenAI-compatible server: tool calls,
multi-step loops, malformed and unknown tool calls, 429 with Retry-After, 5xx exhausted, a reply
that is not JSON. Runs go through the real runner and the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from casemill.evaluation.agents import RetryPolicy, load_agent
from casemill.evaluation.agents.openai_agent import OpenAIAgent
from casemill.evaluation.runner import run
from casemill.llm import LLMEndpoint
from tests.evaluation.agents.support_cases import mug_case
from tests.support.openai_server import OpenAIServer, Reply, completion

FAST = RetryPolicy(attempts=3, base_s=0.01, max_s=0.02)
NO_CASE_RETRY = RetryPolicy(attempts=1)


def agent_for(
    server: OpenAIServer, waits: list[float] | None = None, retry: RetryPolicy = FAST
) -> OpenAIAgent:
    endpoint = LLMEndpoint(base_url=server.base_url, model="test-model", timeout_s=10)
    sleep = waits.append if waits is not None else (lambda s: None)
    return OpenAIAgent(endpoint=endpoint, retry=retry, sleep=sleep)


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def scripted(steps):
    """A responder that answers by how many tool results the conversation already holds."""

    def respond(body: dict):
        return steps[min(len(tool_messages(body)), len(steps) - 1)](body)

    return respond


def lookup_refund_reply(body: dict):
    done = len(tool_messages(body))
    if done == 0:
        return {
            "tool_calls": [{"id": "c1", "name": "get_order", "arguments": {"order_id": "W1001"}}]
        }
    if done == 1:
        args = {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}
        return {"tool_calls": [{"id": "c2", "name": "refund_items", "arguments": args}]}
    return {"content": "I've refunded 14.50 for the mug."}


def test_multi_step_tool_loop_records_calls_messages_tokens_and_state(tmp_path: Path):
    with OpenAIServer(lookup_refund_reply) as server:
        [traj] = run(agent_for(server), [mug_case()], tmp_path, retry=NO_CASE_RETRY)
        first, last = server.requests[0], server.requests[-1]
    assert traj.error is None and traj.final_reply == "I've refunded 14.50 for the mug."
    assert [c.tool for c in traj.calls] == ["get_order", "refund_items"]
    assert traj.calls[0].result["id"] == "W1001" and traj.calls[1].result["amount"] == 14.5
    assert traj.steps == 3 and len(server.requests) == 3
    assert (traj.prompt_tokens, traj.completion_tokens) == (30, 15)  # 3 requests x (10, 5)
    assert traj.final_state["orders"]["W1001"]["refunds"][0]["amount"] == 14.5
    # what the model received: the conversation with customer -> user, and the tools
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert {t["function"]["name"] for t in first["tools"]} >= {"get_order", "refund_items"}
    # the tool result was sent back with the id of the call it answers
    assert last["messages"][-1]["role"] == "tool" and last["messages"][-1]["tool_call_id"] == "c2"
    assert [m["role"] for m in traj.messages][-2:] == ["tool", "assistant"]


def test_malformed_arguments_are_recorded_and_answered_and_the_loop_goes_on(tmp_path: Path):
    def respond(body):
        if not tool_messages(body):
            return {
                "tool_calls": [{"id": "bad", "name": "get_order", "arguments": "{order_id: W1001"}]
            }
        return {"content": "Sorry, which order?"}

    with OpenAIServer(respond) as server:
        [traj] = run(agent_for(server), [mug_case()], tmp_path, retry=NO_CASE_RETRY)
        fed_back = json.loads(tool_messages(server.requests[-1])[0]["content"])
    assert traj.error_kind == "malformed_tool_call" and "not a JSON object" in traj.error
    assert traj.calls[0].ok is False and traj.calls[0].error == "malformed_tool_call"
    assert fed_back["error"] == "malformed_tool_call"
    assert traj.final_reply == "Sorry, which order?"


def test_unknown_tool_is_an_error_kind_and_changes_nothing(tmp_path: Path):
    def respond(body):
        if not tool_messages(body):
            return {"tool_calls": [{"id": "u", "name": "delete_everything", "arguments": {}}]}
        return {"content": "done"}

    case = mug_case()
    with OpenAIServer(respond) as server:
        [traj] = run(agent_for(server), [case], tmp_path, retry=NO_CASE_RETRY)
    assert traj.error_kind == "unknown_tool" and "delete_everything" in traj.error
    assert traj.calls[0].error == "unknown_tool"
    assert traj.final_state["orders"]["W1001"]["refunds"] == []


def test_a_trial_that_recovers_from_an_unknown_tool_succeeds_and_loses_efficiency(tmp_path: Path):
    """design.md: task success is judged on calls, final state and reply. A call to a tool the
    domain does not have changed nothing; the model read the error and did the right thing, so
    the trial succeeds. The fault stays noted on the trial, and the wasted step costs efficiency."""
    from casemill.evaluation.scoring.scorer import score

    def respond(body):
        if not tool_messages(body):
            return {"tool_calls": [{"id": "u", "name": "issue_refund", "arguments": {}}]}
        return lookup_refund_reply({"messages": tool_messages(body)[1:]})

    case = mug_case()
    with OpenAIServer(respond) as server:
        [traj] = run(agent_for(server), [case], tmp_path, retry=NO_CASE_RETRY)
    result = score(case, traj)
    assert traj.error_kind == "unknown_tool" and not traj.ended_in_error and traj.completed
    assert result.task_success is True and result.labels == {
        "failure": "none",
        "state_check": "replay",
    }
    assert result.assertions["no_error"] is True and result.error_kind == "unknown_tool"
    assert result.metrics["state_success"] == 1.0 and result.metrics["tool_precision"] == 1.0
    # get_order, refund_items and the reply are the 3 optimal steps; the unknown call is a 4th
    assert traj.steps == 4 and result.metrics["efficiency"] == pytest.approx(3 / 4)


def test_an_unknown_tool_call_without_recovery_fails_on_what_was_not_done(tmp_path: Path):
    from casemill.evaluation.scoring.scorer import score

    def respond(body):
        if not tool_messages(body):
            return {"tool_calls": [{"id": "u", "name": "issue_refund", "arguments": {}}]}
        return {"content": "Your refund of 14.50 is on its way."}  # and nothing was refunded

    case = mug_case()
    with OpenAIServer(respond) as server:
        [traj] = run(agent_for(server), [case], tmp_path, retry=NO_CASE_RETRY)
    result = score(case, traj)
    assert result.task_success is False and result.labels == {
        "failure": "missing_tool",
        "state_check": "replay",
    }
    assert result.metrics["state_success"] == 0.0


def test_429_with_retry_after_is_honoured_then_succeeds(tmp_path: Path):
    attempts = []

    def respond(body):
        attempts.append(1)
        if len(attempts) == 1:
            return Reply(
                status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "2"}
            )
        return {"content": "All good."}

    waits: list[float] = []
    with OpenAIServer(respond) as server:
        [traj] = run(agent_for(server, waits), [mug_case()], tmp_path, retry=NO_CASE_RETRY)
    assert traj.error is None and traj.final_reply == "All good."
    assert len(attempts) == 2 and waits == [2.0]


def test_500s_exhausted_give_http_5xx_after_bounded_attempts(tmp_path: Path):
    def respond(body):
        return Reply(status=500, body={"error": {"message": "boom"}})

    waits: list[float] = []
    with OpenAIServer(respond) as server:
        [traj] = run(agent_for(server, waits), [mug_case()], tmp_path, retry=NO_CASE_RETRY)
        requests = len(server.requests)
    assert traj.error_kind == "http_5xx" and "500" in traj.error
    assert requests == FAST.attempts and len(waits) == FAST.attempts - 1
    # backoff grows and stays bounded; jitter is seeded, so a second run waits the same
    assert waits[0] <= waits[1] <= FAST.max_s * (1 + FAST.jitter)
    again: list[float] = []
    with OpenAIServer(respond) as server:
        run(agent_for(server, again), [mug_case()], tmp_path / "again", retry=NO_CASE_RETRY)
    assert again == waits


def test_case_level_retry_reruns_a_transient_failure_from_a_fresh_sandbox(tmp_path: Path):
    calls = []

    def respond(body):
        calls.append(1)
        if len(calls) <= FAST.attempts:  # the first case attempt exhausts its request retries
            return Reply(status=503, body={"error": {"message": "busy"}})
        return {"content": "fine now"}

    with OpenAIServer(respond) as server:
        [traj] = run(
            agent_for(server), [mug_case()], tmp_path, retry=RetryPolicy(attempts=2, base_s=0.01)
        )
    assert traj.error is None and traj.final_reply == "fine now" and len(calls) == FAST.attempts + 1


def test_invalid_json_reply_is_recorded_not_retried(tmp_path: Path):
    with OpenAIServer(lambda body: Reply(body="{not json")) as server:
        [traj] = run(agent_for(server), [mug_case()], tmp_path, retry=NO_CASE_RETRY)
        requests = len(server.requests)
    assert traj.error_kind == "invalid_json" and requests == 1
    assert traj.final_state is not None  # the sandbox state is still recorded


def test_step_limit_stops_a_looping_model(tmp_path: Path):
    def respond(body):
        return {
            "tool_calls": [
                {
                    "id": f"c{len(body['messages'])}",
                    "name": "get_order",
                    "arguments": {"order_id": "W1001"},
                }
            ]
        }

    with OpenAIServer(respond) as server:
        [traj] = run(agent_for(server), [mug_case()], tmp_path, max_steps=4, retry=NO_CASE_RETRY)
    assert traj.hit_step_limit and traj.final_reply is None and len(traj.calls) == 3
    assert not traj.completed


def test_load_agent_openai_reads_the_endpoint_from_settings(monkeypatch):
    from casemill.errors import EndpointNotConfigured
    from casemill.settings import Settings

    for var in ("CASEMILL_LLM_BASE_URL", "OPENAI_BASE_URL", "CASEMILL_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(EndpointNotConfigured) as missing:
        load_agent("openai:m", Settings(_env_file=None))
    said = str(missing.value)  # the model is named: only the address (and a key) are asked for
    assert said.startswith("no OpenAI-compatible endpoint is configured for model 'm': set ")
    assert "CASEMILL_LLM_MODEL" not in said
    agent = load_agent(
        "openai:my-model",
        Settings(_env_file=None, llm_base_url="http://127.0.0.1:9/v1", llm_model="x"),
    )
    assert agent.name == "openai:my-model" and agent.endpoint.max_retries == 0
    other = load_agent(
        "openai:other",
        Settings(_env_file=None, llm_base_url="http://127.0.0.1:9/v1", llm_model="x"),
    )
    assert agent.fingerprint != other.fingerprint


def test_openai_spec_names_the_model_so_no_model_setting_is_needed(monkeypatch):
    from casemill.settings import Settings

    for var in ("CASEMILL_LLM_MODEL", "CASEMILL_MODEL"):
        monkeypatch.delenv(var, raising=False)
    agent = load_agent(
        "openai:qwen", Settings(_env_file=None, llm_base_url="http://127.0.0.1:9/v1")
    )
    assert agent.name == "openai:qwen" and agent.endpoint.model == "qwen"


def test_a_server_quoting_the_api_key_in_an_error_does_not_get_it_recorded(tmp_path: Path):
    from pydantic import SecretStr

    key = "sk-test-0123456789abcdef"

    def respond(body):
        message = f"Incorrect API key provided: Bearer {key}"
        return Reply(status=401, body={"error": {"message": message}})

    with OpenAIServer(respond) as server:
        endpoint = LLMEndpoint(
            base_url=server.base_url, model="m", api_key=SecretStr(key), timeout_s=10
        )
        agent = OpenAIAgent(endpoint=endpoint, retry=FAST, sleep=lambda s: None)
        [traj] = run(agent, [mug_case()], tmp_path, retry=NO_CASE_RETRY)
    assert traj.error_kind == "http_4xx" and "Bearer ***" in traj.error
    assert key not in traj.model_dump_json()
    assert key not in "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())


def test_a_closed_port_is_a_connection_error_naming_the_host(tmp_path: Path):
    """The SDK's aiohttp transport reports a refused connection as a timeout ('Request timed
    out.'); the trajectory says what happened instead."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # released: nothing listens there
    endpoint = LLMEndpoint(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout_s=10)
    agent = OpenAIAgent(endpoint=endpoint, retry=FAST, sleep=lambda s: None)
    [traj] = run(agent, [mug_case()], tmp_path, retry=NO_CASE_RETRY)
    assert traj.error_kind == "connection"
    assert traj.error.startswith("connection failed: ") and f"127.0.0.1:{port}" in traj.error


def test_tool_call_without_a_name_is_malformed_and_the_loop_goes_on(tmp_path: Path):
    """A model that answers `function: null` (or a non-object call) made a malformed call: it is
    recorded and answered like bad arguments, not a crash that ends the trial unscored."""

    def respond(body):
        if not tool_messages(body):
            return Reply(
                body={
                    "choices": [
                        {
                            "index": 0,
                            "message": {
                                "role": "assistant",
                                "content": None,
                                "tool_calls": [{"id": "n", "function": None}, "garbage"],
                            },
                        }
                    ]
                }
            )
        return {"content": "Sorry, which order?"}

    with OpenAIServer(respond) as server:
        [traj] = run(agent_for(server), [mug_case()], tmp_path, retry=NO_CASE_RETRY)
        fed_back = [json.loads(m["content"]) for m in tool_messages(server.requests[-1])]
    assert traj.error_kind == "malformed_tool_call" and "without a tool name" in traj.error
    assert [(c.tool, c.ok, c.error) for c in traj.calls] == [("", False, "malformed_tool_call")] * 2
    assert [f["error"] for f in fed_back] == ["malformed_tool_call"] * 2
    assert traj.final_reply == "Sorry, which order?"


def test_a_reply_in_plain_text_is_invalid_json_and_a_json_object_as_text_is_read(tmp_path: Path):
    """The SDK returns a body not labelled JSON as text: prose is a reply that is not JSON
    (`invalid_json`, the text quoted), a JSON object sent as text/plain is still the answer."""
    plain = {"Content-Type": "text/plain"}
    with OpenAIServer(lambda body: Reply(body="upstream said hello", headers=plain)) as server:
        [traj] = run(agent_for(server), [mug_case()], tmp_path / "prose", retry=NO_CASE_RETRY)
    assert traj.error_kind == "invalid_json" and "upstream said hello" in traj.error

    as_text = json.dumps(completion({"content": "All good."}))
    with OpenAIServer(lambda body: Reply(body=as_text, headers=plain)) as server:
        [traj] = run(agent_for(server), [mug_case()], tmp_path / "object", retry=NO_CASE_RETRY)
    assert traj.error is None and traj.final_reply == "All good."


def test_a_client_side_value_error_is_not_called_invalid_json(tmp_path: Path):
    """A base URL with credentials in it makes the HTTP client refuse to send (a ValueError
    before any reply): that is not the endpoint answering badly, so not `invalid_json`."""
    with OpenAIServer(lambda body: {"content": "hi"}) as server:
        url = server.base_url.replace("http://", "http://user:pw@")
        endpoint = LLMEndpoint(base_url=url, model="m", timeout_s=10, api_key=SecretStr("sk-k"))
        agent = OpenAIAgent(endpoint=endpoint, retry=FAST, sleep=lambda s: None)
        [traj] = run(agent, [mug_case()], tmp_path, retry=NO_CASE_RETRY)
    assert traj.error_kind == "exception" and "ValueError" in traj.error


def _answered(messages) -> bool:
    """Every tool call in the transcript has its tool message (a valid chat conversation)."""
    ids = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    return ids == [m["tool_call_id"] for m in messages if m["role"] == "tool"]


def test_at_the_step_limit_the_transcript_keeps_only_the_calls_made(tmp_path: Path):
    """Two calls a step, a limit of 3 calls: the second step's second call is not made, so the
    transcript does not carry it without an answer."""

    def respond(body):
        n = len(body["messages"])
        calls = [
            {"id": f"a{n}", "name": "get_order", "arguments": {"order_id": "W1001"}},
            {"id": f"b{n}", "name": "get_order", "arguments": {"order_id": "W1001"}},
        ]
        return {"tool_calls": calls}

    with OpenAIServer(respond) as server:
        [traj] = run(agent_for(server), [mug_case()], tmp_path, max_steps=4, retry=NO_CASE_RETRY)
    assert traj.hit_step_limit and len(traj.calls) == 3
    assert _answered(traj.messages)
    assert [len(m["tool_calls"]) for m in traj.messages if m.get("tool_calls")] == [2, 1]
