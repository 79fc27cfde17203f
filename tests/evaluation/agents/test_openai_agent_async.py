"""The `openai:` adapter's async transport: one `AsyncOpenAI` per event loop (closed with its
loop), the raw JSON body it posts, a burst of concurrent episodes served without a transport
error, and the runner's time limit cancelling a request in flight."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import openai

from casemill.evaluation.agents import RetryPolicy
from casemill.evaluation.agents.episode import new_episode
from casemill.evaluation.agents.openai_agent import OpenAIAgent
from casemill.evaluation.runner import run
from casemill.llm import LLMEndpoint
from tests.evaluation.agents.support_cases import many_cases, mug_case
from tests.support.aio_openai_server import AioOpenAIServer
from tests.support.openai_server import OpenAIServer, Reply

NO_RETRY = RetryPolicy(attempts=1)


def agent_for(server: OpenAIServer | AioOpenAIServer, **kwargs) -> OpenAIAgent:
    endpoint = LLMEndpoint(base_url=server.base_url, model="test-model", timeout_s=10)
    return OpenAIAgent(endpoint=endpoint, **kwargs)


def one_lookup_then_reply(body: dict):
    if any(m["role"] == "tool" for m in body["messages"]):
        return {"content": "done"}
    return {"tool_calls": [{"id": "c1", "name": "get_order", "arguments": {"order_id": "W1001"}}]}


def test_one_async_client_per_event_loop_closed_when_its_loop_ends():
    endpoint = LLMEndpoint(base_url="http://127.0.0.1:9/v1", model="m", timeout_s=7, max_retries=0)

    async def clients():
        return endpoint.async_client, endpoint.async_client

    first, same = asyncio.run(clients())
    second, _ = asyncio.run(clients())
    assert first is same and first is not second
    assert first.is_closed() and second.is_closed()
    assert str(second.base_url) == "http://127.0.0.1:9/v1/"
    assert (second.timeout, second.max_retries) == (7, 0)
    assert len(endpoint._async_clients) == 1  # the closed loop's client was let go
    # the SDK's aiohttp transport (`openai[aiohttp]`), not its default httpx2 one
    assert isinstance(second._client, openai.DefaultAioHttpClient)


def test_the_posted_body_is_the_chat_request_as_json(tmp_path: Path):
    with OpenAIServer(one_lookup_then_reply) as server:
        [traj] = run(agent_for(server, temperature=0.25), [mug_case()], tmp_path, retry=NO_RETRY)
        first, last = server.requests[0], server.requests[-1]
        headers = {k.lower(): v for k, v in server.headers[0].items()}
    assert traj.error is None and traj.final_reply == "done"
    assert headers["content-type"] == "application/json"
    assert headers["authorization"] == "Bearer not-needed"
    assert set(first) == {"model", "messages", "temperature", "tools"}
    assert (first["model"], first["temperature"]) == ("test-model", 0.25)
    assert [m["role"] for m in last["messages"]] == ["system", "user", "assistant", "tool"]
    assert json.loads(last["messages"][-1]["content"])["id"] == "W1001"


def test_run_sync_runs_an_episode_outside_any_event_loop():
    with OpenAIServer(one_lookup_then_reply) as server:
        agent = agent_for(server)
        replies = [agent.run_sync(new_episode(mug_case())) for _ in range(2)]
    assert [r.text for r in replies] == ["done", "done"]
    assert [m["role"] for m in replies[0].messages][-2:] == ["tool", "assistant"]
    assert (replies[0].prompt_tokens, replies[0].completion_tokens) == (20, 10)


def test_a_burst_of_concurrent_episodes_gets_no_transport_error(tmp_path: Path):
    cases = many_cases(120)
    with OpenAIServer(one_lookup_then_reply, delay_s=0.05) as server:
        agent = agent_for(server, retry=NO_RETRY)
        for attempt in range(2):  # a second run on a fresh loop and a fresh connection pool
            trajectories = run(
                agent, cases, tmp_path / str(attempt), concurrency=120, retry=NO_RETRY
            )
            assert [t.error_kind for t in trajectories] == [None] * len(cases)
            assert {t.final_reply for t in trajectories} == {"done"}
        requests = len(server.requests)
    assert requests == 2 * 2 * len(cases)  # two requests a case, none retried


def test_the_time_limit_cancels_a_request_in_flight(tmp_path: Path):
    with OpenAIServer(lambda body: Reply(body={"late": True}, delay_s=3)) as server:
        [traj] = run(agent_for(server), [mug_case()], tmp_path, timeout_s=0.3, retry=NO_RETRY)
    assert traj.error_kind == "timeout" and "0.3s time limit" in traj.error
    assert traj.final_state is not None and traj.calls == ()


def test_the_benchmark_server_serves_a_burst_on_one_event_loop(tmp_path: Path):
    """`AioOpenAIServer` (what bench/eval_throughput.py runs): the same protocol, every request
    answered after its delay, counted."""
    cases = many_cases(60)
    with AioOpenAIServer(one_lookup_then_reply, delay_s=0.05) as server:
        trajectories = run(agent_for(server), cases, tmp_path, concurrency=60, retry=NO_RETRY)
        count = server.count
    assert [t.error_kind for t in trajectories] == [None] * len(cases)
    assert {t.final_reply for t in trajectories} == {"done"}
    assert [len(t.calls) for t in trajectories] == [1] * len(cases)
    assert count == 2 * len(cases)
