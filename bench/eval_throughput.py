"""Throughput of the runner with the `openai:` adapter against a local OpenAI-compatible server
that answers every request after a fixed delay (100 ms by default).

The model behind the server makes one tool call (`get_customer` for the signed-in customer) and
then replies, so each case costs two requests. With `--turns 2` (the default) it first asks
"Shall I look up your account?", the runner's scripted customer answers yes, and the model goes
on in a second agent turn: three requests and one simulated customer turn a case. Cases are built from the seeds (each seed copied
with a numbered suffix on its last customer turn, so every copy has its own id) or, without
seeds, generated. Prints the measured time at the chosen concurrency, the ideal
(requests x delay / concurrency), their ratio (target: >= 0.85) and the speed-up over running
a subset of the same cases one at a time. The server runs in its own process, as a real
endpoint would (in-process, it would compete with the runner for the interpreter lock), on
aiohttp's event loop (`tests.support.aio_openai_server`): the delay is an `asyncio.sleep`, so the
server adds next to nothing to the 100 ms, where a thread per connection would add its own
interpreter-lock queue at 500 requests a second. It counts the requests it answers.

    uv run python bench/eval_throughput.py [--cases 1000] [--concurrency 50] [--delay 0.1]
        [--serial-subset 50] [--turns 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _report import description, figure  # noqa: E402

from casemill.case.model import Case, Turn, derive  # noqa: E402
from casemill.evaluation.agents import RetryPolicy  # noqa: E402
from casemill.evaluation.agents.openai_agent import OpenAIAgent  # noqa: E402
from casemill.evaluation.runner import run  # noqa: E402
from casemill.llm import LLMEndpoint  # noqa: E402
from tests.support.aio_openai_server import AioOpenAIServer  # noqa: E402

SEEDS = ROOT / "seeds" / "support.jsonl"


def build_cases(n: int) -> tuple[list[Case], str]:
    if SEEDS.exists():
        seeds = [
            Case.model_validate_json(line)
            for line in SEEDS.read_text().splitlines()
            if line.strip()
        ]
        seeds = [s for s in seeds if any(t.role == "customer" for t in s.conversation)]
        source = f"{len(seeds)} seeds from {SEEDS.relative_to(ROOT)}, copied with a numbered suffix"
    else:
        sys.path.insert(0, str(ROOT / "tests"))
        from tests.evaluation.agents.support_cases import mug_case

        seeds = [mug_case()]
        source = "generated mug cases (no seeds file)"
    out = []
    for index in range(n):
        seed = seeds[index % len(seeds)]
        turns = list(seed.conversation)
        last = max(i for i, t in enumerate(turns) if t.role == "customer")
        turns[last] = Turn(role="customer", content=f"{turns[last].content} (ref {index})")
        out.append(derive(seed, conversation=[t.model_dump(mode="json") for t in turns]))
    return out, source


ASK = "Shall I look up your account?"
TURNS = [2]  # agent turns a case (set before the server process forks)


def responder(body: dict) -> dict:
    """With two turns: a question first; then one tool call, then a reply."""
    if TURNS[0] == 2 and not any(m.get("content") == ASK for m in body["messages"]):
        return {"content": ASK}
    last_user = max(i for i, m in enumerate(body["messages"]) if m["role"] in ("user", "system"))
    if any(m.get("role") == "tool" for m in body["messages"][last_user:]):
        return {"content": "Thanks, I have looked at your account and this is sorted."}
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    found = re.search(r"C\d+", system or "")
    args = {"customer_id": found.group(0) if found else "C1001"}
    return {"tool_calls": [{"id": "c1", "name": "get_customer", "arguments": args}]}


class ServerProcess:
    """`AioOpenAIServer` in a child process; `count()` asks it how many requests it answered."""

    def __init__(self, delay_s: float):
        self._conn, child = multiprocessing.get_context("fork").Pipe()
        self._proc = multiprocessing.get_context("fork").Process(
            target=_serve, args=(delay_s, child), daemon=True
        )

    def __enter__(self) -> ServerProcess:
        self._proc.start()
        self.base_url = self._conn.recv()
        return self

    def count(self) -> int:
        self._conn.send("count")
        return self._conn.recv()

    def __exit__(self, *exc: object) -> None:
        self._conn.send("stop")
        self._proc.join(timeout=10)


def _serve(delay_s: float, conn) -> None:
    with AioOpenAIServer(responder, delay_s=delay_s) as server:
        conn.send(server.base_url)
        while (message := conn.recv()) != "stop":
            conn.send(server.count if message == "count" else None)


def timed_run(
    server: ServerProcess, cases: list[Case], concurrency: int
) -> tuple[float, int, int, float]:
    endpoint = LLMEndpoint(base_url=server.base_url, model="bench-model", timeout_s=30)
    agent = OpenAIAgent(endpoint=endpoint, retry=RetryPolicy(attempts=3, base_s=0.05))
    before = server.count()
    with tempfile.TemporaryDirectory() as tmp:
        cpu, started = time.process_time(), time.perf_counter()
        trajectories = run(agent, cases, Path(tmp), concurrency=concurrency, timeout_s=60)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    errors = sum(1 for t in trajectories if t.error or t.customer_turns != TURNS[0] - 1)
    return elapsed, server.count() - before, errors, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument(
        "--delay", type=float, default=0.1, help="server delay per request, seconds"
    )
    parser.add_argument("--serial-subset", type=int, default=50, help="cases run one at a time")
    parser.add_argument(
        "--turns", type=int, choices=(1, 2), default=2, help="agent turns a case (2: it asks)"
    )
    args = parser.parse_args()
    TURNS[0] = args.turns

    cases, source = build_cases(args.cases)
    print(f"cases: {len(cases)} ({source}); {args.turns} agent turn(s) a case")
    print(f"load average before: {_load()}")
    with ServerProcess(args.delay) as server:
        timed_run(server, cases[:20], args.concurrency)  # warm-up: imports, first connections
        elapsed, requests, errors, cpu = timed_run(server, cases, args.concurrency)
        ideal = requests * args.delay / args.concurrency
        print(
            f"concurrency {args.concurrency}: {requests} requests, {errors} errors, measured {elapsed:.2f} s"
        )
        print(f"ideal (requests x {args.delay * 1000:.0f} ms / {args.concurrency}): {ideal:.2f} s")
        print(f"ratio ideal/measured: {ideal / elapsed:.1%} (target >= 85%)")
        print(
            f"runner process CPU: {cpu:.2f} s ({cpu / max(1, requests) * 1000:.2f} ms a request); "
            f"load average after: {_load()} on {os.cpu_count()} CPUs"
        )
        subset = cases[: args.serial_subset]
        serial, serial_requests, _, _ = timed_run(server, subset, 1)
        per_case_serial = serial / len(subset)
        per_case_parallel = elapsed / len(cases)
        print(
            f"concurrency 1 on the first {len(subset)} cases: {serial_requests} requests, "
            f"{serial:.2f} s ({per_case_serial * 1000:.0f} ms a case)"
        )
        speedup = per_case_serial / per_case_parallel
        print(f"speed-up of concurrency {args.concurrency} over 1 (per case): {speedup:.1f}x")
    ratio = ideal / elapsed
    figure(
        f"eval throughput, {len(cases)} cases, {args.turns} agent turns each, at concurrency "
        f"{args.concurrency} (ideal / measured)",
        round(100 * ratio, 1),
        ">= 85%",
        "%",
        ratio >= 0.85,
    )
    figure(f"eval speed-up of concurrency {args.concurrency} over 1", round(speedup, 1), "—", "x")


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
