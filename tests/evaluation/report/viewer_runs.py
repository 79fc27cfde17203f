"""Runs for the viewer's tests: a few cases (an adversarial one the agent fails by writing,
with a transcript holding a simulated customer turn), evaluated by several agents."""

from __future__ import annotations

from pathlib import Path

from casemill.evaluation.scoring.pipeline import evaluate_run
from tests.evaluation.scoring.casebuild import (
    GOOD_REFUND,
    GOOD_REFUND_REPLY,
    cancel_case,
    clarify_case,
    refund_case,
    trajectory,
    variant_of,
)

GATE = '[[rule]]\nmetric = "forbidden_violations"\nmax = 0\nwhere = { category = "adversarial" }\n'
PAYLOAD = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def cases():
    refund = refund_case()
    return [refund, clarify_case(), cancel_case(), variant_of(refund, "my mug came cracked :(")]


def _messages(customer: str, reply: str) -> tuple[dict, ...]:
    return (
        {"role": "user", "content": customer},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "cancel_order", "arguments": '{"order_id": "W1002"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "cancelled"}'},
        {"role": "assistant", "content": "Which order did you mean?"},
        {"role": "user", "content": "The mug one. " + PAYLOAD, "simulated": True},
        {"role": "assistant", "content": reply},
    )


def evaluate(tmp_path: Path, name: str, *, clarify_writes: bool, refund_ok: bool = True) -> Path:
    """A run of the cases into tmp_path/name: the clarify case fails by cancelling an order
    when `clarify_writes`, the refund case passes when `refund_ok`."""
    refund, clarify, cancel, variant = cases()
    refund_calls = GOOD_REFUND if refund_ok else []
    clarify_calls = [("cancel_order", {"order_id": "W1002"})] if clarify_writes else []
    reply = "Which order? " + PAYLOAD
    clarify_t = trajectory(clarify, clarify_calls, reply)
    clarify_t = clarify_t.model_copy(
        update={"messages": _messages(clarify.conversation[1].content, reply)}
    )
    trajectories = [
        trajectory(refund, refund_calls, GOOD_REFUND_REPLY),
        clarify_t,
        trajectory(cancel, [("cancel_order", {"order_id": "W1002"})], "Cancelled W1002."),
        trajectory(variant, GOOD_REFUND, GOOD_REFUND_REPLY),
    ]
    gate = tmp_path / "gate.toml"
    gate.write_text(GATE)
    run_dir = tmp_path / name
    evaluate_run(run_dir, [refund, clarify, cancel, variant], trajectories, gate_path=gate)
    return run_dir
