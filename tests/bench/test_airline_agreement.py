"""`bench/airline_agreement.py`: the logged trajectories' verdicts, Casemill's beside tau-bench's."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location(
        "bench_airline_agreement", ROOT / "bench" / "airline_agreement.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_airline_agreement"] = module
    spec.loader.exec_module(module)
    return module


bench = _load()


def test_logs_keep_replies_drop_transfers_and_digit_commas(tmp_path: Path) -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "transfer_to_human_agents", "arguments": '{"summary": "x"}'},
    }
    other = {
        "id": "c2",
        "type": "function",
        "function": {"name": "cancel_reservation", "arguments": '{"reservation_id": "AB12CD"}'},
    }
    row = {
        "conversation_id": "air-007-2",
        "resolved": True,
        "messages": [
            {"role": "assistant", "content": "You save $1,234, Sir.", "tool_calls": [other]},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "assistant", "content": "In all, $23,553, thanks."},
        ],
    }
    path = tmp_path / "logs.jsonl"
    path.write_text(json.dumps(row) + "\n")
    [log] = bench.load_logs(path)
    assert (log.task_id, log.resolved) == ("7", True)
    assert log.calls == (("cancel_reservation", {"reservation_id": "AB12CD"}),)
    assert log.said == "In all, $23553, thanks."  # words beside a tool call are no reply


@pytest.mark.slow
@pytest.mark.shared_data
def test_at_least_98_of_the_100_logged_trajectories_agree(shared_data: Path) -> None:
    rows = bench.agreement(
        shared_data / "tau-bench-airline" / "tasks.json",
        shared_data / "tau-bench-airline-logs" / "support_logs.jsonl",
    )
    assert len(rows) == 100
    disagreeing = [r for r in rows if not r.agrees]
    assert len(rows) - len(disagreeing) >= 98, disagreeing
    assert sum(r.resolved for r in rows) == 31
