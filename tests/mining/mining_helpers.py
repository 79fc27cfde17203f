"""Helpers for the mining tests: small logs written on the fly."""

from __future__ import annotations

import json
import random
from pathlib import Path

from casemill.mining import mine, synthetic
from casemill.mining.synthetic import support_log


def write_jsonl(path: Path, records: list) -> Path:
    with path.open("wb") as fh:
        for record in records:
            if isinstance(record, bytes):
                fh.write(record.rstrip(b"\n") + b"\n")
            else:
                fh.write(json.dumps(record).encode() + b"\n")
    return path


def sample_records(count: int = 10, seed: int = 11) -> list[dict]:
    return list(support_log(seed=seed, count=count))


def chat(conv_id: str, messages: list[dict], resolved: bool = True) -> dict:
    return {"conversation_id": conv_id, "resolved": resolved, "messages": messages}


def call_msg(call_id: str, name: str, args: dict | str) -> dict:
    arguments = args if isinstance(args, str) else json.dumps(args)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def result_msg(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def until_last_reply(record: dict) -> dict:
    """The record up to its agent's last message: what the model-call spans of its trace hold
    (a customer's last "Thanks!" reaches no model call)."""
    messages = record["messages"]
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return {**record, "messages": messages[: last + 1]}


def mined_content(result) -> list[str]:
    """The mined cases' conversation, environment and expected state, with their confidence,
    in an order that does not depend on the input's."""
    return sorted(
        json.dumps(
            c.model_dump(mode="json", include={"conversation", "environment", "expected"}),
            sort_keys=True,
        )
        + c.provenance.label_confidence
        for c in result.cases
    )


def interleaved(calls: list[list[dict]], seed: int = 3) -> list[dict]:
    """The conversations' calls as concurrent customers' are logged: in a random order that
    keeps each conversation's own."""
    return list(synthetic.interleaved(iter(calls), random.Random(seed), len(calls)))


def chat_of(tmp_path, records):
    return mine([write_jsonl(tmp_path / "chat.jsonl", records)], "openai-jsonl", redact=False)
