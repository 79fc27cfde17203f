"""A small hand-made airline log for the recorded agent's tests: two conversations with tool
calls and personal data (a user id, a name, an email), so redaction has something to replace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SYSTEM = {"role": "system", "content": "You are an airline agent. Confirm before any write."}


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def _result(call_id: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(content)}


USER = {
    "user_id": "ana_diaz_4821",
    "name": {"first_name": "Ana", "last_name": "Diaz"},
    "email": "ana.diaz@gmail.com",
    "reservations": ["ZK3P9Q"],
}
RESERVATION = {"reservation_id": "ZK3P9Q", "user_id": "ana_diaz_4821", "status": "booked"}

# a cancellation: read, read, ask, (yes) write, reply, (thanks)
CANCEL = {
    "conversation_id": "air-cancel-1",
    "resolved": True,
    "messages": [
        SYSTEM,
        {"role": "user", "content": "Hi, I'm Ana Diaz (ana_diaz_4821). Please cancel ZK3P9Q."},
        _call("c1", "get_user_details", user_id="ana_diaz_4821"),
        _result("c1", USER),
        _call("c2", "get_reservation_details", reservation_id="ZK3P9Q"),
        _result("c2", RESERVATION),
        {"role": "assistant", "content": "Ana, shall I cancel ZK3P9Q? Please say yes."},
        {"role": "user", "content": "Yes, go ahead."},
        _call("c3", "cancel_reservation", reservation_id="ZK3P9Q"),
        _result("c3", {**RESERVATION, "status": "cancelled"}),
        {"role": "assistant", "content": "Done: ZK3P9Q is cancelled, Ana."},
        {"role": "user", "content": "Thank you! ###STOP###"},
    ],
}

# a second request after the first is done: the agent reads, then writes, without asking
BAGS = {
    "conversation_id": "air-bags-2",
    "resolved": False,
    "messages": [
        SYSTEM,
        {"role": "user", "content": "This is ana_diaz_4821. How many bags on ZK3P9Q?"},
        _call("b1", "get_reservation_details", reservation_id="ZK3P9Q"),
        _result("b1", {**RESERVATION, "total_baggages": 0}),
        {"role": "assistant", "content": "No checked bags on ZK3P9Q."},
        {"role": "user", "content": "Add one bag, paid with my card."},
        _call("b2", "get_user_details", user_id="ana_diaz_4821"),
        _result("b2", USER),
        _call("b3", "update_reservation_baggages", reservation_id="ZK3P9Q", total_baggages=1),
        _result("b3", {**RESERVATION, "total_baggages": 1}),
        {"role": "assistant", "content": "One bag is added to ZK3P9Q."},
    ],
}

CONVERSATIONS = (CANCEL, BAGS)


def write_log(path: Path, *records: dict[str, Any], lines: tuple[str, ...] = ()) -> Path:
    """`records` as openai-jsonl (default: both conversations), then raw `lines` as given."""
    rows = [json.dumps(r) for r in (records or CONVERSATIONS)] + list(lines)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def mined(log: Path, *, seed: int = 0, redact: bool = True) -> list:
    """The cases `casemill mine -f openai-jsonl LOG` gives (in memory)."""
    from casemill.mining.pipeline import mine

    return list(mine([log], "openai-jsonl", redact=redact, seed=seed).cases)
