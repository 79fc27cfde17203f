"""Checks that Casemill's task success agrees with tau-bench's own reward on logged airline
trajectories.

Imports the tau-bench airline tasks (`casemill import --from tau-bench`, keeping the tasks whose
expected calls break the policy, as the benchmark judges with them), then replays each logged
trajectory (`air-NNN-T`: task NNN, trial T) as an agent on its task's case: a small Python agent
sends the logged assistant's tool calls, in order, through the episode's sandbox and answers what
the logged assistant said. The runner runs it and Casemill scores it; the script prints, per
trajectory, Casemill's task success beside the log's `resolved` (the benchmark's reward was 1),
then the agreement rate (target: at least 98 of 100).

Compared as the benchmark compares: without `transfer_to_human_agents` (its reward ignores the
transfer: neither the logged call nor an expected one counts), and with the outputs looked for
in every reply of the assistant (a message without tool calls: the benchmark takes the words
beside a tool call for no reply), digit-grouping commas dropped (the benchmark drops commas).

    uv run python bench/airline_agreement.py --tasks ../shared/data/tau-bench-airline/tasks.json
        --logs ../shared/data/tau-bench-airline-logs/support_logs.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _report import description, figure  # noqa: E402

from casemill.case.model import Case, derive  # noqa: E402
from casemill.evaluation.agents.base import AgentReply, Episode  # noqa: E402
from casemill.evaluation.agents.python_agent import PythonAgent  # noqa: E402
from casemill.evaluation.runner import run  # noqa: E402
from casemill.evaluation.scoring import score  # noqa: E402
from casemill.formats.tau_bench import import_tau_bench  # noqa: E402

IGNORED = "transfer_to_human_agents"
ID_RE = re.compile(r"^air-(\d+)-(\d+)$")


@dataclass(frozen=True)
class Logged:
    conversation_id: str
    task_id: str
    resolved: bool
    calls: tuple[tuple[str, dict[str, Any]], ...]
    said: str


@dataclass(frozen=True)
class Row:
    conversation_id: str
    resolved: bool
    success: bool
    failed: tuple[str, ...]  # the assertions that failed

    @property
    def agrees(self) -> bool:
        return self.resolved == self.success


def _calls(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        try:
            params = json.loads(function.get("arguments") or "{}")
        except json.JSONDecodeError:
            params = {"_unparsed": function.get("arguments")}
        if function.get("name") != IGNORED:
            out.append((str(function.get("name")), params if isinstance(params, dict) else {}))
    return out


def load_logs(path: Path) -> list[Logged]:
    logged = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        found = ID_RE.match(row["conversation_id"])
        if found is None:
            continue
        messages = [m for m in row["messages"] if m.get("role") == "assistant"]
        calls = [c for m in messages for c in _calls(m)]
        # the benchmark hears only replies: words beside a tool call are not said
        said = "\n".join(
            m["content"]
            for m in messages
            if isinstance(m.get("content"), str) and not m.get("tool_calls")
        )
        logged.append(
            Logged(
                row["conversation_id"],
                str(int(found.group(1))),
                bool(row["resolved"]),
                tuple(calls),
                re.sub(r"(?<=\d),(?=\d)", "", said),
            )
        )
    return logged


def without_transfer(case: Case) -> Case:
    calls = tuple(c for c in case.expected.tool_calls if c.tool != IGNORED)
    if len(calls) == len(case.expected.tool_calls):
        return case
    outcome = "resolve" if calls or case.expected.reply_contains else "refuse"
    return derive(
        case, expected=case.expected.model_copy(update={"tool_calls": calls, "outcome": outcome})
    )


def task_cases(tasks: Path) -> dict[str, Case]:
    """The imported case of every task, by task id, compared without transfers."""
    result = import_tau_bench(tasks, keep_policy_conflicts=True)
    return {c.provenance.source.conversation_id: without_transfer(c) for c in result.cases}


class Replayer:
    """The logged assistant of one trial as an agent: on a task's case, that trial's tool calls
    through the episode, then what the assistant said."""

    version = "1"

    def __init__(self, logs: list[Logged]):
        self.logs = {log.task_id: log for log in logs}

    def __call__(self, episode: Episode) -> AgentReply:
        log = self.logs[episode.case.provenance.source.conversation_id]
        for tool, params in log.calls:
            episode.call(tool, params)
        return AgentReply(text=log.said)


def _run_trial(cases: dict[str, Case], logs: list[Logged], run_dir: Path) -> list[Row]:
    """One trial's trajectories, each on its task's case (a case id once a run)."""
    runnable = [log for log in logs if log.task_id in cases]
    agent = PythonAgent(Replayer(runnable), spec="python:bench.airline_agreement:Replayer")
    trajectories = run(
        agent,
        [cases[log.task_id] for log in runnable],
        run_dir,
        concurrency=2,
        max_steps=200,
        max_customer_turns=0,
    )
    by_id = {t.case_id: t for t in trajectories}
    rows = []
    for log in logs:
        case = cases.get(log.task_id)
        if case is None:
            rows.append(Row(log.conversation_id, log.resolved, False, ("no case for the task",)))
            continue
        scored = score(case, by_id[case.id])
        failed = tuple(k for k, v in scored.assertions.items() if not v)
        rows.append(Row(log.conversation_id, log.resolved, scored.task_success, failed))
    return rows


def agreement(tasks: Path, logs_path: Path) -> list[Row]:
    """Casemill's verdict beside the benchmark's on every logged trajectory."""
    logs = load_logs(logs_path)
    cases = task_cases(tasks)
    trials: dict[str, list[Logged]] = {}
    for log in logs:
        trials.setdefault(log.conversation_id.rsplit("-", 1)[1], []).append(log)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for trial, group in sorted(trials.items()):
            rows += _run_trial(cases, group, Path(tmp) / f"trial-{trial}")
    order = {log.conversation_id: n for n, log in enumerate(logs)}
    return sorted(rows, key=lambda r: order[r.conversation_id])


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--tasks", type=Path, required=True, help="tau-bench airline tasks.json")
    parser.add_argument("--logs", type=Path, required=True, help="the logged trajectories (JSONL)")
    args = parser.parse_args()
    rows = agreement(args.tasks, args.logs)
    print(f"{'trajectory':<12} {'resolved':>8} {'casemill':>8}  agree  failed checks")
    for row in rows:
        mark = "yes" if row.agrees else "NO"
        print(
            f"{row.conversation_id:<12} {int(row.resolved):>8} {int(row.success):>8}  "
            f"{mark:<5}  {', '.join(row.failed)}"
        )
    agreed = sum(r.agrees for r in rows)
    print(f"agreement: {agreed}/{len(rows)}")
    figure("airline agreement", agreed, ">= 98 of 100", "trajectories", agreed >= 98)


if __name__ == "__main__":
    main()
