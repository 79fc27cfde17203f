"""The files of a stream (logs whose traces or conversations go on from one file into the
next) mined one at a time, each going on from the state the one before left, give what mining
them at once gives; the `mine-logs` flow mines them so, a cached task a file."""

from __future__ import annotations

import copy
import gzip
import os
import pickle
import random
from itertools import pairwise
from types import SimpleNamespace

import pytest
from mining_helpers import (
    chat_of,
    interleaved,
    mined_content,
    sample_records,
    until_last_reply,
    write_jsonl,
)

from casemill.case.model import Case
from casemill.dedup import shingles
from casemill.mining import MineOptions, merge_results, mine, mine_end, mine_part, spans_files
from casemill.mining.synthetic import model_calls
from casemill.mining.synthetic_otel import otel_export

RECORDS = sample_records(8, seed=5)


def test_otel_exports_and_logs_of_model_calls_span_files_other_logs_do_not(tmp_path):
    records = [until_last_reply(r) for r in RECORDS[:2]]
    lines = interleaved([model_calls(r) for r in records])
    chat = write_jsonl(tmp_path / "chat.jsonl", records)
    calls = write_jsonl(tmp_path / "calls.jsonl", lines)
    packed = tmp_path / "calls-2.jsonl.gz"
    packed.write_bytes(gzip.compress(calls.read_bytes()))
    # a call log whose first lines are broken or a conversation's is known by a later line
    mixed = write_jsonl(tmp_path / "mixed.jsonl", [b"{not json", records[0], *lines[:2]])
    checked = write_jsonl(tmp_path / "checked.jsonl", [{"event": "health"}] * 50 + lines[:1])
    late = write_jsonl(tmp_path / "late.jsonl", [*records[:1] * 20, *lines[:1]])
    # (a file not there holds no calls; mining says so)
    assert not spans_files([chat, tmp_path / "chat2.jsonl"], "openai-jsonl")
    for log in (calls, packed, mixed, checked):
        assert spans_files([chat, log, chat], "openai-jsonl")
    # told by the first 20 records that hold messages: a conversation log's own
    assert not spans_files([late], "openai-jsonl")
    assert spans_files([calls, chat], "otel")
    assert not spans_files([calls, chat], "transcript")


def _in_parts(files, fmt, **options):
    """The files mined a part each, each going on from the state the part before left, kept
    in between as a flow's task results are (pickled), and deduplicated together after."""
    results, state, options = [], None, MineOptions(dedup=False, **options)
    for path in files:
        result, state = mine_part(path, fmt, state, options=options)
        results.append(result)
        state = pickle.loads(pickle.dumps(state))
    return merge_results([*results, mine_end(state, options=options)])


def jaccard(x: str, y: str) -> float:
    a, b = shingles(x.lower()), shingles(y.lower())
    return len(a & b) / len(a | b)


def _written(result) -> list[str]:
    return [c.model_dump_json() for c in result.cases]


def test_a_stream_mined_file_by_file_gives_what_its_files_give_at_once(tmp_path):
    records = [until_last_reply(r) for r in sample_records(12, seed=9)]
    lines = interleaved([model_calls(r) for r in records])
    cuts = (0, len(lines) // 3, 2 * len(lines) // 3, len(lines))
    files = [
        write_jsonl(tmp_path / f"calls-{n}.jsonl", lines[a:b])
        for n, (a, b) in enumerate(pairwise(cuts), 1)
    ]
    at_once = mine(files, "openai-jsonl")
    parts = _in_parts(files, "openai-jsonl")
    assert at_once.summary.conversations_read == len(records)
    assert _written(parts) == _written(at_once)  # the same cases, in the same order
    assert parts.quarantined == at_once.quarantined
    for field in ("conversations_read", "model_calls_joined", "redactions", "duplicates"):
        assert getattr(parts.summary, field) == getattr(at_once.summary, field), field
    # a state is not changed by going on from it: the part can be mined again (a retry)
    first, state = mine_part(files[0], "openai-jsonl")
    again, _ = mine_part(files[1], "openai-jsonl", state)
    once_more, _ = mine_part(files[1], "openai-jsonl", state)
    assert _written(again) == _written(once_more)
    with pytest.raises(ValueError, match="cannot go on"):
        mine_part(files[1], "otel", state)


def test_an_otel_trace_split_between_two_files_mined_file_by_file_is_mined_whole(tmp_path):
    doc = otel_export(RECORDS[0], "0af7651916cd43dd8448eb211c80319c", with_responses=False)
    spans = [s for scope in doc["resourceSpans"][0]["scopeSpans"] for s in scope["spans"]]

    def with_spans(chosen):
        scope = {**doc["resourceSpans"][0]["scopeSpans"][0], "spans": chosen}
        return {"resourceSpans": [{**doc["resourceSpans"][0], "scopeSpans": [scope]}]}

    first = write_jsonl(tmp_path / "rotated-1.jsonl", [with_spans(spans[-1:])])
    second = write_jsonl(tmp_path / "rotated-2.jsonl", [with_spans(spans[:-1])])
    at_once = mine([first, second], "otel")
    assert at_once.summary.conversations_read == 1 and not at_once.quarantined
    assert _written(_in_parts([first, second], "otel")) == _written(at_once)


@pytest.mark.slow
def test_the_mine_logs_flow_mines_a_conversation_a_rotated_log_split_whole(
    prefect_harness, tmp_path
):
    from casemill.flows.mine import mine_logs

    records = [until_last_reply(r) for r in RECORDS[:4]]
    lines = interleaved([model_calls(r) for r in records])
    half = len(lines) // 2
    first = write_jsonl(tmp_path / "calls-1.jsonl", lines[:half])
    write_jsonl(tmp_path / "calls-2.jsonl", lines[half:])
    out = tmp_path / "mined.jsonl"
    logs = [str(tmp_path / "calls-*.jsonl")]
    summary = mine_logs(logs, out=str(out), corpus_dir=None, redact=False)
    # before: a task a file, the conversations open at the end of the first came out in parts
    assert summary["summary"]["conversations_read"] == len(records)
    assert summary["summary"]["model_calls_joined"] == len(lines)
    got = [Case.model_validate_json(line) for line in out.read_text().splitlines()]
    assert mined_content(SimpleNamespace(cases=got)) == mined_content(chat_of(tmp_path, records))
    # the next file of the log: the files before are not mined again (their tasks' results
    # are cached: the first file's bytes, garbled with its size and time kept, are not read),
    # and the output is what mining the three files at once gives
    more = [until_last_reply(r) for r in RECORDS[4:6]]
    third = write_jsonl(tmp_path / "calls-3.jsonl", interleaved([model_calls(r) for r in more]))
    expected = mine([first, tmp_path / "calls-2.jsonl", third], "openai-jsonl", redact=False)
    stat = first.stat()
    first.write_bytes(b"x" * stat.st_size)
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    summary = mine_logs(logs, out=str(out), corpus_dir=None, redact=False)
    assert summary["quarantined"] == 0
    got = [Case.model_validate_json(line) for line in out.read_text().splitlines()]
    assert [c.id for c in got] == [c.id for c in expected.cases]
    assert summary["summary"]["conversations_read"] == len(records) + len(more)


def test_near_duplicates_in_parts_are_dropped_as_in_one_run(tmp_path):
    """Near duplicates are not transitive: A ~ B and B ~ C, but not A ~ C. One run drops B (a
    duplicate of A) and keeps C (no duplicate of A); parts deduplicated apart would drop C (of
    B, in its part) and then B (of A, at the merge)."""
    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefghij") for _ in range(5)) for _ in range(600)]

    def changed(ws: list[str], start: int) -> list[str]:
        return [f"q{i * 7 + start:04d}" if start <= i < start + 25 else w for i, w in enumerate(ws)]

    a, b = words, changed(words, 0)
    texts = [" ".join(ws) for ws in (a, b, changed(b, 300))]
    similar = [jaccard(texts[x], texts[y]) for x, y in ((0, 1), (1, 2), (0, 2))]
    assert similar[0] >= 0.9 and similar[1] >= 0.9 and similar[2] < 0.9
    base = until_last_reply(sample_records(1, seed=4)[0])

    def record(name: str, text: str) -> dict:
        out = copy.deepcopy(base)
        out["conversation_id"] = name
        said = next(m for m in out["messages"] if m["role"] == "user")
        said["content"] += " " + text
        return out

    first = write_jsonl(tmp_path / "log-1.jsonl", [record("a", texts[0])])
    second = write_jsonl(
        tmp_path / "log-2.jsonl", [record(n, t) for n, t in zip("bc", texts[1:], strict=True)]
    )
    at_once = mine([first, second], "openai-jsonl", redact=False)
    parts = _in_parts([first, second], "openai-jsonl", redact=False)
    kept = {c.provenance.source.conversation_id for c in at_once.cases}
    assert kept == {"a", "c"}  # b is a duplicate of a; c is none
    assert _written(parts) == _written(at_once)
    assert parts.summary.duplicates == at_once.summary.duplicates
    # the flow's tasks of other logs, a file each, keep every case for the merge too
    from casemill.flows.mine import mine_file_task

    files = [mine_file_task.fn(str(f), "", "openai-jsonl", False, 0, "") for f in (first, second)]
    assert _written(merge_results(files)) == _written(at_once)
