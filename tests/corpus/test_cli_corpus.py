"""`casemill corpus ...`: stats, list, show, add, retire, verify against a folder."""

from __future__ import annotations

import json
from pathlib import Path

from fixtures.casebuild import cancel_case, clarify_case, line, refund_case
from typer.testing import CliRunner

from casemill.case.model import Review
from casemill.cli import app
from casemill.corpus import CorpusStore
from casemill.errors import UserError

runner = CliRunner()
APPROVED = Review(status="approved", reviewer="casemill-tests")
A, B, C = (c.model_copy(update={"review": APPROVED}) for c in (refund_case(), cancel_case(), clarify_case()))  # fmt: skip


def invoke(*args: str):
    return runner.invoke(app, list(args))


def test_corpus_lifecycle(tmp_path: Path):
    corpus = str(tmp_path / "corpus")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(line(A) + line(B) + line(C))

    added = invoke("corpus", "add", str(cases), "--note", "seeds", "--corpus", corpus)
    assert added.exit_code == 0, added.output
    assert "v0001: +3 cases, 3 active" in added.output
    again = invoke("corpus", "add", str(cases), "--corpus", corpus)
    assert again.exit_code == 0 and "nothing new" in again.output

    stats = json.loads(invoke("corpus", "stats", "--json", "--corpus", corpus).output)
    assert stats["active"] == 3 and stats["counts"]["outcome"] == {"clarify": 1, "resolve": 2}

    listed = json.loads(
        invoke("corpus", "list", "--json", "--corpus", corpus, "--category", "robustness").output
    )
    assert [r["id"] for r in listed] == [C.id]
    human = invoke("corpus", "list", "--corpus", corpus)
    assert "3 cases" in human.output

    shown = invoke("corpus", "show", A.id[:8], "--corpus", corpus)
    assert shown.exit_code == 0 and json.loads(shown.output)["id"] == A.id
    assert invoke("corpus", "show", "c_nothing", "--corpus", corpus).exit_code == 1

    retired = invoke("corpus", "retire", A.id, "--corpus", corpus)
    assert retired.exit_code == 0 and "v0002: -1 cases, 2 active" in retired.output

    verified = json.loads(invoke("corpus", "verify", "--json", "--corpus", corpus).output)
    assert verified["ok"] and verified["versions"] == 2 and verified["active"] == 2


def test_add_refuses_a_file_with_bad_records(tmp_path: Path):
    corpus = tmp_path / "corpus"
    cases = tmp_path / "cases.jsonl"
    cases.write_text(line(A) + "{oops\n")
    result = invoke("corpus", "add", str(cases), "--corpus", str(corpus))
    assert result.exit_code == 1
    assert f"{cases}:2:" in result.output and "nothing added" in result.output
    assert not (corpus / "manifests").exists()


def test_verify_exit_code_on_damage(tmp_path: Path):
    corpus = tmp_path / "corpus"
    cases = tmp_path / "cases.jsonl"
    cases.write_text(line(A))
    invoke("corpus", "add", str(cases), "--corpus", str(corpus))
    (corpus / "cases.jsonl").write_text("")
    result = invoke("corpus", "verify", "--corpus", str(corpus))
    assert result.exit_code == 1 and "DAMAGED" in result.output
    said = " ".join(result.output.split())
    assert "1 active case missing from cases.jsonl" in said  # "1 active cases are" before
    assert "1 version, 1 active, 0 stored: DAMAGED" in said  # "1 versions" before


def test_commands_reading_a_corpus_refuse_a_missing_folder(tmp_path: Path):
    nope = tmp_path / "nope"
    for args in (
        ("stats",),
        ("list",),
        ("show", "c_x"),
        ("retire", "c_x"),
        ("verify",),
        ("verify", "--json"),
    ):
        result = invoke("corpus", *args, "--corpus", str(nope))
        assert isinstance(result.exception, UserError), (args, result.output)
        assert str(result.exception) == f"--corpus {nope}: no such corpus folder"
    assert not nope.exists()


def test_add_refuses_files_without_records_instead_of_nothing_new(tmp_path: Path):
    corpus, empty = tmp_path / "corpus", tmp_path / "empty.jsonl"
    empty.write_text("")
    result = invoke("corpus", "add", str(empty), "--corpus", str(corpus))
    assert isinstance(result.exception, UserError), result.output
    assert str(result.exception) == f"{empty}: no case records in them"
    assert "nothing new" not in result.output and not corpus.exists()


def test_diff_lists_added_and_retired_cases(tmp_path: Path):
    corpus = str(tmp_path / "corpus")
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text(line(A) + line(B))
    second.write_text(line(C))
    invoke("corpus", "add", str(first), "--corpus", corpus)
    invoke("corpus", "add", str(second), "--corpus", corpus)
    invoke("corpus", "retire", A.id, "--corpus", corpus)

    data = json.loads(invoke("corpus", "diff", "v0001", "--json", "--corpus", corpus).output)
    assert (data["old"], data["new"]) == ("v0001", "v0003")
    assert [r["id"] for r in data["added"]] == [C.id]
    assert [r["id"] for r in data["retired"]] == [A.id]
    assert data["added"][0]["category"] == "robustness"
    human = invoke("corpus", "diff", "--corpus", corpus)
    assert human.exit_code == 0 and "v0002 -> v0003: +0 added, -1 retired" in human.output
    bad = invoke("corpus", "diff", "5", "--corpus", corpus)
    assert isinstance(bad.exception, UserError) and "no version v0005" in str(bad.exception)


def test_list_refuses_a_filter_value_no_case_can_have(tmp_path: Path):
    corpus, cases = tmp_path / "corpus", tmp_path / "cases.jsonl"
    cases.write_text(line(A))
    invoke("corpus", "add", str(cases), "--corpus", str(corpus))
    for option, value in (("--origin", "generatd"), ("--category", "robust")):
        result = invoke("corpus", "list", "--json", "--corpus", str(corpus), option, value)
        assert isinstance(result.exception, UserError), result.output
        assert str(result.exception).startswith(f"{option} {value!r}: expected one of ")


def test_show_says_when_a_case_is_retired(tmp_path: Path):
    corpus, cases = str(tmp_path / "corpus"), tmp_path / "cases.jsonl"
    cases.write_text(line(A) + line(B))
    invoke("corpus", "add", str(cases), "--corpus", corpus)
    invoke("corpus", "retire", A.id, "--corpus", corpus)
    shown = CliRunner().invoke(app, ["corpus", "show", A.id, "--corpus", corpus])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["id"] == A.id
    assert shown.stderr.strip() == f"{A.id} is not active: retired in v0002"
    active = CliRunner().invoke(app, ["corpus", "show", B.id, "--corpus", corpus])
    assert active.stderr == ""


def test_add_takes_approved_cases_only_unless_told_who_approves(tmp_path: Path):
    corpus = str(tmp_path / "corpus")
    pending = refund_case()
    assert pending.review.status == "pending"
    cases = tmp_path / "cases.jsonl"
    cases.write_text(line(pending) + line(B))
    refused = invoke("corpus", "add", str(cases), "--corpus", corpus)
    assert isinstance(refused.exception, UserError), refused.output  # exit 2 from the CLI
    said = str(refused.exception)
    assert f"1 case(s) are pending review (first: {pending.id})" in said
    assert "--approve-as" in said and not (tmp_path / "corpus").exists()

    added = invoke("corpus", "add", str(cases), "--corpus", corpus, "--approve-as", "ana")
    assert added.exit_code == 0, added.output
    stored = {c.id: c for c in CorpusStore(Path(corpus)).cases()}
    assert set(stored) == {pending.id, B.id}  # the same ids: review is not what a case means
    assert stored[pending.id].review.status == "approved"
    assert stored[pending.id].review.reviewer == "ana"
    assert stored[pending.id].review.decided_at is not None
    assert stored[B.id].review == APPROVED  # an approved case keeps its reviewer

    rejected = tmp_path / "rejected.jsonl"
    rejected.write_text(
        line(clarify_case().model_copy(update={"review": Review(status="rejected")}))
    )
    again = invoke("corpus", "add", str(rejected), "--corpus", corpus, "--approve-as", "ana")
    assert isinstance(again.exception, UserError)
    assert "1 case(s) were rejected in review" in str(again.exception)


def test_add_refuses_cases_saying_approved_that_were_never_reviewed(tmp_path: Path):
    # generated candidates with the status flipped by hand: no reviewer, no decision time
    corpus = tmp_path / "corpus"
    forged = refund_case().model_copy(update={"review": Review(status="approved")})
    cases = tmp_path / "cases.jsonl"
    cases.write_text(line(B) + line(forged))
    refused = invoke("corpus", "add", str(cases), "--corpus", str(corpus))
    assert isinstance(refused.exception, UserError), refused.output  # exit 2 from the CLI
    assert str(refused.exception) == (
        f"1 case(s) say approved but were never reviewed: no review.reviewer (first: "
        f"{cases}:2 {forged.id}); only approved cases enter the corpus: review them "
        "(casemill review enqueue FILE), or approve hand-written cases you vouch for with "
        "--approve-as YOUR_NAME"
    )
    assert not corpus.exists()

    added = invoke("corpus", "add", str(cases), "--corpus", str(corpus), "--approve-as", "ana")
    assert added.exit_code == 0, added.output
    stored = {c.id: c for c in CorpusStore(corpus).cases()}
    assert stored[forged.id].review.reviewer == "ana"
    assert stored[forged.id].review.decided_at is not None
    assert stored[B.id].review == APPROVED  # a reviewer, no time: kept as it is (the seeds)


def test_verify_and_list_name_the_line_of_a_case_edited_after_it_entered(tmp_path: Path):
    corpus = tmp_path / "corpus"
    cases = tmp_path / "cases.jsonl"
    cases.write_text(line(A) + line(B))
    assert invoke("corpus", "add", str(cases), "--corpus", str(corpus)).exit_code == 0
    stored = corpus / "cases.jsonl"
    lines = stored.read_text().splitlines()
    number = next(n for n, t in enumerate(lines, 1) if json.loads(t)["id"] == A.id)
    lines[number - 1] = lines[number - 1].replace('"status":"approved"', '"status":"rejected"')
    stored.write_text("\n".join(lines) + "\n")

    result = invoke("corpus", "verify", "--json", "--corpus", str(corpus))
    assert result.exit_code == 1
    problems = {p["where"]: p["message"] for p in json.loads(result.output)["problems"]}
    assert set(problems) == {str(corpus / "manifests" / "v0001.json"), f"{stored}:{number}"}
    assert "not approved (review.status is 'rejected')" in problems[f"{stored}:{number}"]
    assert f"git diff {stored}" in problems[str(corpus / "manifests" / "v0001.json")]

    listed = invoke("corpus", "list", "--json", "--corpus", str(corpus))
    assert isinstance(listed.exception, UserError)  # not served as active
    assert str(listed.exception).startswith(f"{stored}:{number}: active case {A.id}")


def test_verify_reports_a_damaged_manifest_with_exit_1(tmp_path: Path):
    corpus = tmp_path / "corpus"
    cases = tmp_path / "cases.jsonl"
    cases.write_text(line(A))
    invoke("corpus", "add", str(cases), "--corpus", str(corpus))
    manifest = corpus / "manifests" / "v0001.json"
    manifest.write_text(manifest.read_text().replace('"active_count"', '"active_cnt"'))

    result = invoke("corpus", "verify", "--json", "--corpus", str(corpus))
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["ok"] is False
    assert [(p["where"], p["message"].split(";")[0]) for p in report["problems"]] == [
        (str(manifest), "field 'active_count' is missing"),
        (str(manifest), "field 'active_cnt' is not a manifest field (expected: format, version, "
                        "created_at, note, added, retired, active_count, active_sha256, counts, "
                        "operators, seeds)"),
    ]  # fmt: skip

    human = invoke("corpus", "verify", "--corpus", str(corpus))
    assert human.exit_code == 1
    said = " ".join(human.output.split())
    assert "field 'active_count' is missing" in said and "DAMAGED" in said
