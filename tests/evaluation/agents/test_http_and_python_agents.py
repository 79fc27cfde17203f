"""The HTTP adapter against a small HTTP agent started here, and the Python-callable adapter."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from casemill.errors import UserError
from casemill.evaluation.agents import AgentReply, RetryPolicy, load_agent
from casemill.evaluation.agents.http_agent import HTTPAgent
from casemill.evaluation.agents.python_agent import PythonAgent
from casemill.evaluation.runner import run
from tests.evaluation.agents.support_cases import mug_case

FAST = RetryPolicy(attempts=3, base_s=0.01, max_s=0.02)
ONCE = RetryPolicy(attempts=1)


class HTTPAgentServer:
    """A tiny agent speaking casemill-agent/1: `handle(body) -> (status, payload, headers)`."""

    def __init__(self, handle: Callable[[dict], tuple[int, Any, dict]]):
        self.bodies: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                status, payload, headers = handle(body)
                data = (
                    payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/agent"

    def __enter__(self) -> HTTPAgentServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def refund_agent(body: dict) -> tuple[int, Any, dict]:
    """Looks the order up, refunds the mug, replies with the amount from the tool result."""
    tools = [m for m in body["messages"] if m["role"] == "tool"]
    if not tools:
        return (
            200,
            {"tool_calls": [{"id": "a", "name": "get_order", "arguments": {"order_id": "W1001"}}]},
            {},
        )
    if len(tools) == 1:
        args = json.dumps({"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"})
        call = {
            "id": "b",
            "type": "function",
            "function": {"name": "refund_items", "arguments": args},
        }
        return (
            200,
            {"tool_calls": [call], "usage": {"prompt_tokens": 7, "completion_tokens": 2}},
            {},
        )
    amount = json.loads(tools[-1]["content"])["amount"]
    return (
        200,
        {"reply": f"Refunded {amount:.2f}.", "usage": {"prompt_tokens": 7, "completion_tokens": 2}},
        {},
    )


def test_http_agent_tool_loop(tmp_path: Path):
    with HTTPAgentServer(refund_agent) as server:
        [traj] = run(HTTPAgent(server.url, retry=FAST), [mug_case()], tmp_path, retry=ONCE)
        bodies = server.bodies
    assert traj.error is None and traj.final_reply == "Refunded 14.50."
    assert [c.tool for c in traj.calls] == ["get_order", "refund_items"] and traj.steps == 3
    assert (traj.prompt_tokens, traj.completion_tokens) == (14, 4)
    assert bodies[0]["protocol"] == "casemill-agent/1" and bodies[0]["case_id"] == mug_case().id
    assert [b["step"] for b in bodies] == [0, 1, 2]
    assert bodies[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "a",
        "content": bodies[1]["messages"][-1]["content"],
    }
    assert traj.final_state["orders"]["W1001"]["refunds"][0]["item_ids"] == ["I1"]


def test_http_agent_credentials_in_the_url_are_not_written(tmp_path: Path):
    with HTTPAgentServer(refund_agent) as server:
        url = server.url.replace("http://", "http://bot:pw-0123456789@") + "?api_key=k-9876543210"
        [traj] = run(HTTPAgent(url, retry=FAST), [mug_case()], tmp_path, retry=ONCE)
    assert traj.error is None and traj.final_reply == "Refunded 14.50."
    assert traj.agent.startswith("http://bot:***@") and traj.agent.endswith("?api_key=***")
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    assert "pw-0123456789" not in written and "k-9876543210" not in written


def test_http_agent_invalid_json_and_bad_shape(tmp_path: Path):
    with HTTPAgentServer(lambda body: (200, "<html>oops", {})) as server:
        [traj] = run(HTTPAgent(server.url, retry=FAST), [mug_case()], tmp_path / "a", retry=ONCE)
    assert traj.error_kind == "invalid_json" and "oops" in traj.error
    with HTTPAgentServer(lambda body: (200, {"answer": 42}, {})) as server:
        [traj] = run(HTTPAgent(server.url, retry=FAST), [mug_case()], tmp_path / "b", retry=ONCE)
    assert traj.error_kind == "invalid_reply"


def test_http_agent_429_then_success_and_500_exhausted(tmp_path: Path):
    seen = []

    def flaky(body):
        seen.append(1)
        if len(seen) == 1:
            return 429, {"error": "slow"}, {"Retry-After": "1"}
        return 200, {"reply": "ok"}, {}

    waits: list[float] = []
    with HTTPAgentServer(flaky) as server:
        [traj] = run(
            HTTPAgent(server.url, retry=FAST, sleep=waits.append),
            [mug_case()],
            tmp_path / "a",
            retry=ONCE,
        )
    assert traj.final_reply == "ok" and waits == [1.0]
    with HTTPAgentServer(lambda body: (502, "bad gateway", {})) as server:
        [traj] = run(
            HTTPAgent(server.url, retry=FAST, sleep=lambda s: None),
            [mug_case()],
            tmp_path / "b",
            retry=ONCE,
        )
        assert len(server.bodies) == FAST.attempts
    assert traj.error_kind == "http_5xx"


def test_http_agent_connection_refused_is_a_recorded_error(tmp_path: Path):
    with HTTPAgentServer(refund_agent) as server:
        url = server.url
    [traj] = run(HTTPAgent(url, retry=ONCE), [mug_case()], tmp_path, retry=ONCE)
    assert traj.error_kind == "connection"


# -- Python callables -------------------------------------------------------------------------
def sync_agent(episode):
    order = episode.call("get_order", {"order_id": "W1001"})
    return f"status {order.content['status']}"


async def async_agent(episode):
    result = episode.call(
        "refund_items", {"order_id": "W1001", "item_ids": ["I1"], "reason": "damaged"}
    )
    return {"reply": f"refunded {result.content['amount']:.2f}", "usage": {"prompt_tokens": 3}}


def own_messages_agent(episode):
    return AgentReply("hi", messages=[*episode.messages, {"role": "assistant", "content": "hi"}])


def raising_agent(episode):
    raise RuntimeError("agent crashed")


def wrong_type_agent(episode):
    return 42


@pytest.mark.parametrize(
    ("fn", "reply", "kind"),
    [
        (sync_agent, "status delivered", None),
        (async_agent, "refunded 14.50", None),
        (own_messages_agent, "hi", None),
        (raising_agent, None, "exception"),
        (wrong_type_agent, None, "invalid_reply"),
    ],
)
def test_python_agents(tmp_path: Path, fn, reply, kind):
    [traj] = run(PythonAgent(fn), [mug_case()], tmp_path, retry=ONCE)
    assert traj.final_reply == reply and traj.error_kind == kind
    if kind == "exception":
        assert "agent crashed" in traj.error
    if fn is async_agent:
        assert (
            traj.prompt_tokens == 3
            and traj.final_state["orders"]["W1001"]["refunds"][0]["amount"] == 14.5
        )


def test_load_agent_specs():
    agent = load_agent("python:tests.evaluation.agents.test_http_and_python_agents:sync_agent")
    assert agent.name == "python:tests.evaluation.agents.test_http_and_python_agents:sync_agent"
    assert load_agent("reference:rounds_money").name == "reference:rounds_money"
    assert load_agent("http://127.0.0.1:1/x").name == "http://127.0.0.1:1/x"
    for bad in (
        "nonsense",
        "python:no_such_module_x:f",
        "python:json:no_such_fn",
        "reference:nope",
    ):
        with pytest.raises(UserError):
            load_agent(bad)


@pytest.mark.parametrize(
    ("source", "spec", "says"),
    [
        (
            "import no_such_dependency_x\n\ndef run(episode):\n    return 'hi'\n",
            "agent_deps_x:run",
            ["module 'agent_deps_x' was found", "No module named 'no_such_dependency_x'"],
        ),
        (
            "def run(episode)\n    return 'hi'\n",
            "agent_syntax_x:run",
            ["does not compile", "agent_syntax_x.py:1"],
        ),
        (
            "raise RuntimeError('set MY_KEY first')\n",
            "agent_raises_x:run",
            ["raised RuntimeError: set MY_KEY first", "agent_raises_x.py:1"],
        ),
        ("", "agent_file_x.py:run", ["is a file path", "python:agent_file_x:run"]),
        ("", "my_agent/agent_file_x:run", ["python:my_agent.agent_file_x:run"]),
    ],
)
def test_load_agent_says_why_a_python_module_did_not_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, spec: str, says: list[str]
):
    """A module that is found but fails to import is not reported as missing from PYTHONPATH."""
    module = spec.partition(":")[0].removesuffix(".py").split("/")[-1]
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UserError) as err:
        load_agent(f"python:{spec}")
    message = str(err.value)
    assert all(s in message for s in says), message
    assert "PYTHONPATH?" not in message


def test_http_agent_at_the_step_limit_keeps_the_calls_made_with_their_answers(tmp_path: Path):
    """Two calls a step, a limit of 3 calls: the last step's one call made is in the transcript
    with its tool message (it was dropped with the step), the call not made is not."""

    def looping(body: dict) -> tuple[int, Any, dict]:
        n = len(body["messages"])
        call = {"name": "get_order", "arguments": {"order_id": "W1001"}}
        return 200, {"tool_calls": [{"id": f"a{n}", **call}, {"id": f"b{n}", **call}]}, {}

    with HTTPAgentServer(looping) as server:
        [traj] = run(HTTPAgent(server.url, retry=FAST), [mug_case()], tmp_path, max_steps=4)
    assert traj.hit_step_limit and len(traj.calls) == 3
    called = [c["id"] for m in traj.messages for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in traj.messages if m["role"] == "tool"]
    assert called == answered == [c.call_id for c in traj.calls]


def test_a_python_agent_beside_the_working_folder_is_found_without_pythonpath(tmp_path: Path):
    """`casemill eval --agent python:my_agent:run` run in the folder that holds `my_agent.py`,
    as the installed `casemill` command (whose own folder, not the working one, starts its path),
    with no PYTHONPATH; a name that is not there says where it was looked for."""
    import os
    import subprocess
    import sys

    (tmp_path / "my_agent_here.py").write_text(
        "def run(episode):\n    return 'Which order do you mean?'\n"
    )
    (tmp_path / "cases.jsonl").write_text(mug_case().model_dump_json() + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    casemill = Path(sys.executable).parent / "casemill"

    def eval_(agent: str) -> subprocess.CompletedProcess:
        argv = [str(casemill), "eval", "--agent", agent, "--cases", "cases.jsonl", "-o", "run"]
        return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)

    found = eval_("python:my_agent_here:run")
    assert found.returncode == 0, found.stderr
    results = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert len(results) == 1 and json.loads(results[0])["error"] is None
    missing = eval_("python:not_here:run")
    assert missing.returncode == 2
    said = " ".join(missing.stderr.split())
    assert "cannot import module 'not_here'" in said
    assert f"is it in the working folder ({tmp_path}) or on PYTHONPATH?" in said
