"""The pipeline: deterministic output, domain labels from file names, streaming to files."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from mining_helpers import sample_records, write_jsonl

from casemill.errors import UserError
from casemill.mining import MineOptions, mine
from casemill.mining.output import mine_to_files
from casemill.mining.pipeline import label_from_path


def test_same_seed_same_bytes_other_seed_other_surrogates(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", sample_records(5, seed=2))
    runs = [
        mine_to_files([log], "openai-jsonl", tmp_path / f"o{i}.jsonl", options=MineOptions(seed=s))
        for i, s in enumerate((1, 1, 2))
    ]
    a, b, c = (
        (tmp_path / "o0.jsonl").read_bytes(),
        (tmp_path / "o1.jsonl").read_bytes(),
        (tmp_path / "o2.jsonl").read_bytes(),
    )
    assert a == b and a != c
    assert runs[0] == runs[1]
    ids = [json.loads(x)["id"] for x in a.splitlines()]
    assert len(ids) == len(set(ids)) == sum(runs[0].cases.values())


def test_streamed_candidates_are_the_cases_json_dumps(tmp_path):
    """The candidates file holds each case as `orjson.dumps(case.model_dump(mode="json"))`,
    the same cases, in the same order, as mining in memory."""
    log = write_jsonl(tmp_path / "a.jsonl", sample_records(8, seed=3))
    mine_to_files([log], "openai-jsonl", tmp_path / "out.jsonl")
    lines = (tmp_path / "out.jsonl").read_bytes().splitlines()
    cases = mine([log], "openai-jsonl").cases
    assert lines == [orjson.dumps(c.model_dump(mode="json")) for c in cases]


def test_generic_domain_label_comes_from_the_path():
    assert label_from_path(Path("/d/tau-bench-airline-logs/support_logs.jsonl")) == "airline"
    assert label_from_path(Path("/d/tau-bench-retail-logs/retail_conversations.jsonl")) == "retail"
    assert label_from_path(Path("/d/x/logs.jsonl")) == "mined"


def test_keep_raw_only_in_its_own_result_field(tmp_path):
    log = write_jsonl(tmp_path / "a.jsonl", sample_records(2, seed=4))
    plain = mine([log], "openai-jsonl")
    kept = mine([log], "openai-jsonl", options=MineOptions(keep_raw=True))
    assert plain.raw_values == ()
    kinds = {r["kind"] for r in kept.raw_values}
    assert {"name", "email", "user_id", "address"} <= kinds
    assert [c.id for c in plain.cases] == [c.id for c in kept.cases]
    raws = {r["raw"] for r in kept.raw_values if r["kind"] == "email"}
    blob = json.dumps([c.model_dump(mode="json") for c in kept.cases])
    assert raws and not any(r in blob for r in raws)


def test_the_raw_values_file_is_readable_by_its_owner_alone(tmp_path):
    import os
    import stat

    log = write_jsonl(tmp_path / "a.jsonl", sample_records(2, seed=4))
    raw = tmp_path / "raw.jsonl"
    raw.write_text("")
    raw.chmod(0o644)  # last run's, or made by hand: replaced by one of the owner's alone
    old = os.umask(0o022)
    try:
        mine_to_files([log], "openai-jsonl", tmp_path / "o.jsonl", keep_raw=raw)
    finally:
        os.umask(old)
    # before, it was 0644 like the candidates: raw personal data readable by every user
    assert stat.S_IMODE(raw.stat().st_mode) == 0o600 and raw.stat().st_size > 0
    assert stat.S_IMODE((tmp_path / "o.jsonl").stat().st_mode) == 0o644


def test_files_written_must_differ_from_the_logs_and_from_each_other(tmp_path):
    log = write_jsonl(tmp_path / "log.jsonl", sample_records(1))
    before = log.read_bytes()
    out = tmp_path / "out.jsonl"
    for kwargs, said in (
        ({"out": log}, f"--out {log} is also a log"),
        ({"out": out, "quarantine": tmp_path / "." / "out.jsonl"}, "--quarantine"),
        ({"out": out, "keep_raw": out}, f"--keep-raw {out} is also --out"),
        ({"out": out, "keep_raw": log}, "is also a log"),
    ):
        with pytest.raises(UserError, match="give it a path of its own") as caught:
            mine_to_files([log], "openai-jsonl", **kwargs)
        assert said in str(caught.value)
    assert log.read_bytes() == before and not out.exists()


def test_targets_that_cannot_be_written_are_named_before_mining(tmp_path):
    log = write_jsonl(tmp_path / "log.jsonl", sample_records(1))
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("")
    for kwargs, said in (
        ({"out": tmp_path / "folder"}, "--out"),
        ({"out": tmp_path / "o.jsonl", "quarantine": tmp_path / "folder"}, "--quarantine"),
    ):
        with pytest.raises(UserError, match=f"{said} .* is a folder"):
            mine_to_files([log], "openai-jsonl", **kwargs)
    out = tmp_path / "o.jsonl"
    with pytest.raises(UserError, match=r"--keep-raw .*cannot write there \(.*file is a file"):
        mine_to_files([log], "openai-jsonl", out, keep_raw=tmp_path / "file" / "raw.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder", "log.jsonl"]


def test_a_conversation_whose_mining_fails_is_set_aside_and_the_run_goes_on(
    tmp_path, monkeypatch, caplog
):
    """A record of a shape nobody foresaw raises inside redaction or derivation: it is
    quarantined as `mining_error`, naming where, and the other conversations are mined."""
    from casemill.mining import pipeline

    records = sample_records(4, seed=3)
    derive = pipeline.derive_cases
    unlucky = records[1]["conversation_id"]

    def failing(conv, options):
        if conv.line == 2:
            raise TypeError(f"unhashable type, from {unlucky}'s record: 555-201-3344")
        return derive(conv, options)

    monkeypatch.setattr(pipeline, "derive_cases", failing)
    log = write_jsonl(tmp_path / "a.jsonl", records)
    result = mine([log], "openai-jsonl")
    [q] = result.quarantined
    assert (q.line, q.reason) == (2, "mining_error")
    assert q.message.startswith("mining this conversation failed (TypeError at test_mining_")
    assert "555-201-3344" not in q.message and "555-201-3344" not in caplog.text
    assert result.summary.conversations_read == 4
    assert {c.provenance.source.line for c in result.cases} == {1, 3, 4}
