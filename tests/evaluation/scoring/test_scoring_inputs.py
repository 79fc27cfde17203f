"""The cases an eval reads, with what they came from: a corpus folder at its latest version, or
a plain .jsonl file."""

from __future__ import annotations

from fixtures.casebuild import approved

from casemill.corpus.store import CorpusStore
from casemill.evaluation.scoring.caseset import digest
from casemill.evaluation.scoring.inputs import load_eval_cases
from tests.evaluation.scoring.casebuild import cancel_case, clarify_case, refund_case


def test_a_corpus_folder_records_its_latest_version(tmp_path, monkeypatch):
    refund, cancel, clarify = refund_case(), cancel_case(), clarify_case()
    store = CorpusStore(tmp_path / "corpus")
    store.add_version(approved(refund, cancel), note="first")
    second = store.add_version(approved(clarify), retire=[cancel.id], note="second")
    monkeypatch.chdir(tmp_path)
    loaded = load_eval_cases(tmp_path / "corpus")
    recorded = loaded.case_set()
    assert recorded.sources == ("corpus",)  # relative to the working folder
    assert recorded.corpus_version == 2
    assert recorded.corpus_sha256 == second.active_sha256
    assert recorded.count == 2
    assert recorded.digest == digest([refund.id, clarify.id])


def test_a_jsonl_file_records_its_path_count_and_digest(tmp_path, monkeypatch):
    refund, cancel = refund_case(), cancel_case()
    path = tmp_path / "data" / "subset.jsonl"
    path.parent.mkdir()
    path.write_text(cancel.model_dump_json() + "\n" + refund.model_dump_json() + "\n")
    monkeypatch.chdir(tmp_path)
    recorded = load_eval_cases("data/subset.jsonl").case_set()
    assert recorded.sources == ("data/subset.jsonl",)
    assert (recorded.corpus_version, recorded.corpus_sha256) == (None, None)
    assert recorded.count == 2
    assert recorded.digest == digest([refund.id, cancel.id])
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    assert load_eval_cases(path).case_set().sources == (path.as_posix(),)  # outside: as given
