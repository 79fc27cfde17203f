"""`casemill review ...` commands: enqueue (bad lines quarantined), status --json, bulk approve
and reject by filter, export exactly once, token create."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from fixtures.casebuild import approved, refund_case
from review_factory import child_case, seed_case
from typer.testing import CliRunner

from casemill.case.model import Case
from casemill.cli import app
from casemill.corpus import CorpusStore
from casemill.errors import UserError
from casemill.io.jsonl import dumps_line
from casemill.review import auth
from casemill.review.errors import NotFound
from casemill.review.store import ReviewStore

runner = CliRunner()


def invoke(*args: str):
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result


def test_cli_enqueue_decide_export(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    parent = seed_case()
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "s.jsonl").write_text(dumps_line(parent.model_dump(mode="json")))
    cands = [child_case(parent, i, operator="typos" if i < 3 else "slang") for i in range(5)]
    lines = [dumps_line(c.model_dump(mode="json")) for c in cands]
    broken = {
        **cands[0].model_dump(mode="json"),
        "id": "",
        "expected": {"outcome": "nope", "optimal_steps": 1},
    }
    file = tmp_path / "cands.jsonl"
    file.write_text("".join(lines[:2]) + "{truncated\n" + dumps_line(broken) + "".join(lines[2:]))

    r = invoke(
        "review",
        "enqueue",
        str(file),
        "--batch",
        "b1",
        "--db",
        db,
        "--parents",
        str(seeds),
        "--json",
    )
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert (summary["added"], summary["bad_lines"]) == (5, 2)
    quarantine = [
        json.loads(x) for x in (tmp_path / "cands.quarantine.jsonl").read_text().splitlines()
    ]
    assert [q["line"] for q in quarantine] == [3, 4]
    assert quarantine[1]["field"] == "expected.outcome"
    store = ReviewStore.open(db)
    assert store.get(cands[0].id).parent == parent

    r = invoke("review", "approve", "--filter", "operator=typos", "--reviewer", "ana", "--db", db)
    assert r.exit_code == 0 and "3 approved, 0 skipped" in r.stdout
    r = invoke(
        "review",
        "reject",
        "--filter",
        "batch=b1",
        "--reason",
        "slang too heavy",
        "--reviewer",
        "ana",
        "--db",
        db,
    )
    assert r.exit_code == 0 and "2 rejected" in r.stdout
    r = invoke("review", "status", "--json", "--db", db)
    row = json.loads(r.stdout)[0]
    assert (row["batch_id"], row["approved"], row["rejected"], row["decided"]) == ("b1", 3, 2, True)

    corpus = tmp_path / "corpus"
    corpus.mkdir()  # a new corpus starts in a folder made for it (a typo is refused)
    r = invoke("review", "export", "--batch", "b1", "--corpus", str(corpus), "--db", db, "--json")
    out = json.loads(r.stdout)
    assert out["corpus_version"] == 1 and sorted(out["added"]) == sorted(c.id for c in cands[:3])
    r = invoke("review", "export", "--batch", "b1", "--corpus", str(corpus), "--db", db)
    assert "nothing new to export" in r.stdout
    exported = CorpusStore(corpus).cases()
    assert len(exported) == 3 and all(
        isinstance(c, Case) and c.review.reviewer == "ana" for c in exported
    )


def test_cli_approve_needs_a_filter_and_token_create(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    r = invoke("review", "approve", "--db", db)
    assert r.exit_code == 2 and "--filter" in r.output
    r = invoke("review", "token", "create", "--reviewer", "ana", "--db", db)
    token = r.stdout.strip()
    assert r.exit_code == 0 and token.startswith("cmr_")
    assert auth.reviewer_for_token(ReviewStore.open(db), token) == "ana"
    r = runner.invoke(app, ["review", "resume", "--batch", "nope", "--db", db])
    assert isinstance(r.exception, NotFound) and "no batch 'nope'" in str(r.exception)


def test_cli_mistakes_are_named_not_silent(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    file = tmp_path / "cands.jsonl"
    parent = seed_case()
    file.write_text(dumps_line(child_case(parent, 0).model_dump(mode="json")))
    r = runner.invoke(app, ["review", "enqueue", str(file), "--policy", "autp", "--db", db])
    assert isinstance(r.exception, UserError) and "policy must be one of human, auto" in str(
        r.exception
    )
    assert ReviewStore.open(db).batches() == []  # nothing queued, no batch made
    for option in ("--parents", "--corpus"):  # a mistyped folder is named, not read as empty
        nope = str(tmp_path / "nope")
        r = runner.invoke(app, ["review", "enqueue", str(file), option, nope, "--db", db])
        assert isinstance(r.exception, UserError) and f"{option} {nope}" in str(r.exception)
    assert ReviewStore.open(db).batches() == []
    r = runner.invoke(app, ["review", "approve", "--filter", "valid=maybe", "--db", db])
    assert isinstance(r.exception, UserError) and "valid is true or false" in str(r.exception)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    r = runner.invoke(
        app, ["review", "export", "--batch", "b2", "--corpus", str(corpus), "--db", db]
    )
    assert isinstance(r.exception, NotFound) and "no batch 'b2'" in str(r.exception)
    r = runner.invoke(app, ["review", "status", "--db", "postgres:/user:secret@@host"])
    assert isinstance(r.exception, UserError) and "is not a database URL" in str(r.exception)
    assert "secret" not in str(r.exception)


def test_cli_enqueue_audit_names_who_queued(tmp_path, monkeypatch):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    case = child_case(seed_case(), 0)
    file = tmp_path / "cands.jsonl"
    file.write_text(dumps_line(case.model_dump(mode="json")))
    monkeypatch.setenv("CASEMILL_REVIEWER", "zoe")
    r = invoke("review", "enqueue", str(file), "--batch", "b1", "--db", db)
    assert r.exit_code == 0, r.output
    log = ReviewStore.open(db).audit_log(case_id=case.id)
    assert [(e.action, e.actor) for e in log] == [("enqueue", "zoe")]


def test_cli_export_to_a_mistyped_corpus_folder_is_refused_and_marks_nothing(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    store = ReviewStore.open(db)
    case = child_case(seed_case(), 0)
    store.enqueue([case], "b1")
    store.approve(case.id, "ana", None)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    typo = tmp_path / "corpsu"
    r = runner.invoke(app, ["review", "export", "--batch", "b1", "--corpus", str(typo), "--db", db])
    assert isinstance(r.exception, UserError) and str(r.exception) == (
        f"--corpus {typo}: no such corpus folder; to start a new corpus there, create the "
        f"folder first (mkdir -p {typo})"
    )
    assert not typo.exists() and store.get(case.id).exported_at is None
    r = invoke("review", "export", "--batch", "b1", "--corpus", str(corpus), "--db", db, "--json")
    assert json.loads(r.stdout)["added"] == [case.id]
    assert [c.id for c in CorpusStore(corpus).cases()] == [case.id]


def test_cli_resume_of_a_batch_never_made_or_undecided_says_so(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    store = ReviewStore.open(db)
    case = child_case(seed_case(), 0)
    store.enqueue([case], "b1")
    store.enqueue([case], "b2")  # queued in b1 already: no batch b2 is made
    r = runner.invoke(app, ["review", "resume", "--batch", "b2", "--db", db])
    assert isinstance(r.exception, NotFound) and "no batch 'b2'" in str(r.exception)
    r = runner.invoke(app, ["review", "resume", "--batch", "b1", "--db", db])
    assert r.exit_code == 1 and "batch b1 still has 1 pending case;" in r.stderr


def test_cli_default_batch_id_of_a_long_file_name_fits_the_queue(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    file = tmp_path / ("candidates-" + "x" * 150 + ".jsonl")
    file.write_text(dumps_line(child_case(seed_case(), 0).model_dump(mode="json")))
    r = invoke("review", "enqueue", str(file), "--db", db, "--json")
    batch = json.loads(r.stdout)["batch"]
    assert len(batch) == 120 and batch.startswith("candidates-xxx") and batch[-9] == "-"


def test_cli_list_show_and_undo_one_case(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    store = ReviewStore.open(db)
    parent = seed_case()
    cases = [child_case(parent, i) for i in range(3)]
    store.enqueue(cases, "b1", parents={parent.id: parent})
    store.reject(cases[1].id, "ana", None, reason="typo changes the meaning")

    r = invoke("review", "list", "--filter", "status=rejected", "--db", db, "--json")
    rows = json.loads(r.stdout)
    assert [(x["case_id"], x["status"], x["reviewer"]) for x in rows] == [
        (cases[1].id, "rejected", "ana")
    ]
    assert rows[0]["reason"] == "typo changes the meaning" and rows[0]["needs_label"] is False
    r = invoke("review", "list", "--filter", "batch=b1", "--limit", "2", "--db", db)
    assert cases[0].id in r.stdout and cases[1].id in r.stdout and cases[2].id not in r.stdout
    assert "2 of 3 shown; --limit 0 lists all" in r.stdout

    r = invoke("review", "show", cases[1].id, "--db", db, "--json")
    shown = json.loads(r.stdout)
    assert shown["status"] == "rejected" and shown["case"]["id"] == cases[1].id
    r = invoke("review", "show", cases[0].id, "--db", db)
    assert "changes vs parent" in r.stdout and "crackd" in r.stdout
    assert store.get(cases[0].id).lease_holder is None  # showing takes no lease

    r = invoke("review", "undo", cases[1].id, "--reviewer", "ana", "--db", db)
    assert r.exit_code == 0 and f"{cases[1].id} is pending again" in r.stdout
    assert store.get(cases[1].id).status == "pending"
    r = runner.invoke(app, ["review", "undo", cases[1].id, "--db", db])
    assert isinstance(r.exception, UserError) and "has no decision to undo" in str(r.exception)


def test_cli_enqueue_with_the_auto_policy_says_what_it_approved(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    parent = seed_case()
    file = tmp_path / "cands.jsonl"
    file.write_text(
        "".join(dumps_line(child_case(parent, i).model_dump(mode="json")) for i in (1, 2))
    )
    r = invoke("review", "enqueue", str(file), "--batch", "b1", "--policy", "auto", "--db", db)
    assert " ".join(r.stdout.split()) == (
        "batch b1: 2 added, 0 already queued, 0 failing validation, 0 bad lines; "
        "2 auto-approved, the other 0 wait for a person"
    )


def test_cli_a_mistyped_batch_filter_is_named_not_matched_by_nothing(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    store = ReviewStore.open(db)
    store.enqueue([child_case(seed_case(), 0)], "b1")
    for args in (
        ["approve", "--filter", "batch=b11"],
        ["reject", "--filter", "batch=b11", "--reason", "dup"],
        ["list", "--filter", "batch=b11"],
        ["next", "--filter", "batch=b11"],
    ):
        r = runner.invoke(app, ["review", *args, "--db", db], input="q\n")
        assert isinstance(r.exception, NotFound), args
        assert (
            str(r.exception) == "no batch 'b11' in the review queue; see `casemill review status`"
        )
    assert store.batch_status("b1").pending == 1
    r = invoke("review", "approve", "--filter", "batch=b1", "--reviewer", "ana", "--db", db)
    assert "1 approved, 0 skipped" in r.stdout


def test_serve_on_a_port_in_use_says_so_before_printing_an_address(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = f"sqlite:///{tmp_path / 'q.db'}"
        result = runner.invoke(app, ["review", "serve", "--port", str(port), "--db", db])
    assert isinstance(result.exception, UserError)
    assert str(result.exception).startswith(f"cannot serve on 127.0.0.1:{port} (")
    assert "review app on" not in result.output


def test_cli_status_fits_80_columns_with_whole_headers_and_batch_ids(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    store = ReviewStore.open(db)
    parent = seed_case()
    store.enqueue([child_case(parent, i) for i in range(3)], "cands-c30d9a36")
    store.enqueue([child_case(parent, 9)], "nightly-2026-11-23", policy="auto")
    r = runner.invoke(app, ["review", "status", "--db", db], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0].replace("┃", " ").split() == [
        "batch",
        "total",
        "pending",
        "approved",
        "rejected",
        "exported",
        "kappa",
    ]
    cells = [line.replace("│", " ").split() for line in lines[2:]]
    assert cells == [
        ["cands-c30d9a36", "3", "3", "0", "0", "0"],
        ["policy", "human"],
        ["nightly-2026-11-23", "1", "1", "0", "0", "0"],
        ["policy", "auto"],
    ]


def test_cli_enqueue_of_cases_queued_elsewhere_says_so_and_makes_no_batch(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    file = tmp_path / "cands.jsonl"
    file.write_text(
        "".join(dumps_line(child_case(seed_case(), i).model_dump(mode="json")) for i in range(3))
    )
    assert invoke("review", "enqueue", str(file), "--batch", "first", "--db", db).exit_code == 0
    r = runner.invoke(
        app,
        ["review", "enqueue", str(file), "--batch", "second", "--db", db],
        env={"COLUMNS": "200"},
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == (
        "nothing enqueued, no batch second made: 3 cases already queued (in batch first; see "
        "`casemill review status`)"
    )
    r = invoke("review", "enqueue", str(file), "--batch", "third", "--db", db, "--json")
    summary = json.loads(r.stdout)
    assert (summary["added"], summary["batch_made"], summary["queued_in"]) == (0, False, ["first"])
    r = invoke("review", "status", "--json", "--db", db)
    assert [b["batch_id"] for b in json.loads(r.stdout)] == ["first"]


def test_cli_filter_on_a_value_no_case_has_is_named_not_an_empty_match(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    store = ReviewStore.open(db)
    parent = seed_case()
    store.enqueue([child_case(parent, 0, operator="keyboard_typo")], "b1")
    r = runner.invoke(app, ["review", "approve", "--filter", "operator=typos", "--db", db])
    assert isinstance(r.exception, UserError) and str(r.exception) == (
        "filter operator=typos: no case in the queue has operator 'typos'; "
        "the queue has keyboard_typo"
    )
    assert store.batch_status("b1").approved == 0
    r = runner.invoke(app, ["review", "list", "--filter", "intent=refunds", "--db", db])
    assert isinstance(r.exception, UserError) and "the queue has refund" in str(r.exception)
    r = invoke(
        "review", "list", "--filter", "status=approved", "--filter", "intent=refund", "--db", db
    )
    assert r.exit_code == 0 and r.stdout.strip() == (
        "no case in the queue matches status=approved intent=refund"
    )


def test_cli_list_keeps_a_long_batch_id_whole_at_80_columns(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    batch = "support-nightly-c30d9a36"
    ReviewStore.open(db).enqueue([child_case(seed_case(), 0)], batch)
    r = runner.invoke(app, ["review", "list", "--db", db], env={"COLUMNS": "80"})
    assert r.exit_code == 0 and "…" not in r.stdout
    cells = [line.split("│")[2].strip() for line in r.stdout.splitlines() if line.startswith("│")]
    assert "".join(cells) == batch


def test_cli_enqueue_of_only_bad_lines_names_them_and_makes_no_batch(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    file = tmp_path / "bad.jsonl"
    file.write_text("{bad\n")
    r = runner.invoke(
        app, ["review", "enqueue", str(file), "--batch", "b1", "--db", db], env={"COLUMNS": "200"}
    )
    assert r.exit_code == 2
    assert r.stdout.strip() == "nothing enqueued, no batch b1 made: 1 bad line"
    assert f"skipped {file}:1: not valid JSON" in r.stderr
    assert ReviewStore.open(db).batches() == []


def test_cli_next_refuses_a_limit_of_no_decision(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    ReviewStore.open(db).enqueue([child_case(seed_case(), 0)], "b1")
    r = runner.invoke(
        app, ["review", "next", "--limit", "0", "--db", db], input="a\n", env={"COLUMNS": "200"}
    )
    assert r.exit_code == 2
    assert "Invalid value for '--limit': Input should be greater than or equal to 1" in r.output
    assert ReviewStore.open(db).batch_status("b1").pending == 1


def test_cli_show_of_a_decided_case_says_who_decided_when_and_why(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    store = ReviewStore.open(db)
    case = child_case(seed_case(), 0)
    store.enqueue([case], "b1")
    r = runner.invoke(app, ["review", "show", case.id, "--db", db], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and " by " not in r.stdout.splitlines()[-1]
    done = store.reject(case.id, "bob", store.get(case.id).version, reason="label is [wrong]")
    r = runner.invoke(app, ["review", "show", case.id, "--db", db], env={"COLUMNS": "200"})
    assert r.stdout.splitlines()[-1] == f"rejected by bob at {done.decided_at}: label is [wrong]"


def test_cli_list_json_cut_by_the_limit_says_so_on_stderr(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    parent = seed_case()
    ReviewStore.open(db).enqueue([child_case(parent, i) for i in range(3)], "b1")
    r = runner.invoke(app, ["review", "list", "--limit", "2", "--json", "--db", db])
    assert len(json.loads(r.stdout)) == 2
    assert r.stderr.strip() == "2 of 3 shown; --limit 0 lists all"
    r = runner.invoke(app, ["review", "list", "--limit", "3", "--json", "--db", db])
    assert len(json.loads(r.stdout)) == 3 and r.stderr == ""
    r = runner.invoke(app, ["review", "list", "--limit", "2", "--db", db])
    assert r.stdout.splitlines()[-1] == "2 of 3 shown; --limit 0 lists all"


def test_cli_status_and_list_of_an_empty_queue_say_where_it_is_and_what_to_do(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    expected = (
        f"the review queue at {db} is empty; queue candidates with `casemill review enqueue FILE`"
    )
    for command in ("status", "list"):
        r = runner.invoke(app, ["review", command, "--db", db], env={"COLUMNS": "300"})
        assert r.exit_code == 0 and r.stdout.strip() == expected


def test_cli_enqueue_with_auto_into_a_human_batch_approves_nothing(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    parent = seed_case()
    ReviewStore.open(db).enqueue([child_case(parent, i) for i in range(3)], "people")
    file = tmp_path / "more.jsonl"
    file.write_text(dumps_line(child_case(parent, 7).model_dump(mode="json")))
    r = runner.invoke(
        app, ["review", "enqueue", str(file), "--batch", "people", "--policy", "auto", "--db", db]
    )
    assert isinstance(r.exception, UserError) and "has the human policy, not auto" in str(
        r.exception
    )
    status = ReviewStore.open(db).batch_status("people")
    assert (status.total, status.pending, status.approved) == (3, 3, 0)


def _approved_batch(db: str) -> tuple[ReviewStore, Case]:
    store = ReviewStore.open(db)
    case = child_case(seed_case(), 0)
    store.enqueue([case], "b1")
    store.approve(case.id, "ana", None)
    return store, case


def _still_approved(store: ReviewStore, case: Case) -> None:
    item = store.get(case.id)
    assert (item.status, item.exported_at, item.corpus_version) == ("approved", None, None)
    status = store.batch_status("b1")
    assert (status.approved, status.exported, status.closed) == (1, 0, False)


def test_cli_export_with_no_corpus_in_the_working_folder_is_refused_and_marks_nothing(
    tmp_path, monkeypatch
):
    # run from the wrong folder, no --corpus, no CASEMILL_CORPUS_DIR: the default ./corpus is
    # not there, and the export must not make one there and mark the cases exported into it
    db = f"sqlite:///{tmp_path / 'q.db'}"
    store, case = _approved_batch(db)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CASEMILL_CORPUS_DIR"}
    proc = subprocess.run(
        [sys.executable, "-c", "from casemill.cli import main; main()"]
        + ["review", "export", "--batch", "b1", "--db", db],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    message = " ".join(proc.stderr.split())
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message == (
        f"error: corpus_dir (settings) corpus: no such corpus folder (looked in "
        f"{elsewhere / 'corpus'}); run from the folder that holds the corpus, or name it with "
        f"--corpus DIR or CASEMILL_CORPUS_DIR; to start a new corpus there, create the folder "
        f"first (mkdir -p corpus)"
    )
    assert proc.stdout == "" and list(elsewhere.iterdir()) == []
    _still_approved(store, case)

    # named through the environment variable, the real corpus gets the case
    real = tmp_path / "real"
    CorpusStore(real).add_version(approved(refund_case()), note="v1")
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("CASEMILL_CORPUS_DIR", str(real))
    r = invoke("review", "export", "--batch", "b1", "--db", db)
    assert r.exit_code == 0 and r.stdout.strip() == "corpus version 2: 1 cases added"
    assert case.id in {c.id for c in CorpusStore(real).cases()}
    assert list(elsewhere.iterdir()) == [] and store.get(case.id).corpus_version == 2


def test_cli_export_into_a_folder_that_is_not_a_corpus_is_refused_and_writes_nothing(
    tmp_path, monkeypatch
):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    store, case = _approved_batch(db)
    seeds = tmp_path / "seeds"  # case files, not a corpus: `casemill corpus add` makes one
    seeds.mkdir()
    (seeds / "support.jsonl").write_text(dumps_line(seed_case().model_dump(mode="json")))
    (seeds / "README.md").write_text("the seeds\n")
    docs = tmp_path / "docs"  # a folder of anything else
    docs.mkdir()
    (docs / "notes.md").write_text("notes\n")
    refusals = [
        (["--corpus", str(seeds)], f"--corpus {seeds}: not a corpus folder", "corpus add"),
        (["--corpus", str(docs)], f"--corpus {docs}: not a corpus folder", "it holds notes.md"),
    ]
    for args, head, hint in refusals:
        r = runner.invoke(app, ["review", "export", "--batch", "b1", "--db", db, *args])
        assert isinstance(r.exception, UserError), r.output
        assert str(r.exception).startswith(head) and hint in str(r.exception)
    monkeypatch.setenv("CASEMILL_CORPUS_DIR", str(seeds))  # the same folder from the settings
    r = runner.invoke(app, ["review", "export", "--batch", "b1", "--db", db])
    assert isinstance(r.exception, UserError)
    assert str(r.exception).startswith(f"corpus_dir (settings) {seeds}: not a corpus folder")
    assert sorted(p.name for p in seeds.iterdir()) == ["README.md", "support.jsonl"]
    assert sorted(p.name for p in docs.iterdir()) == ["notes.md"]
    _still_approved(store, case)

    # an empty folder the user made is a new corpus, as docs/review.md says
    new = tmp_path / "new"
    new.mkdir()
    monkeypatch.setenv("CASEMILL_CORPUS_DIR", str(new))
    r = invoke("review", "export", "--batch", "b1", "--db", db, "--json")
    assert json.loads(r.stdout)["added"] == [case.id]
    assert [c.id for c in CorpusStore(new).cases()] == [case.id]


def test_cli_enqueue_of_a_file_holding_a_case_twice_prints_its_summary(tmp_path):
    """`tests/fixtures/mixed.jsonl` holds line 1's case again at line 9: the enqueue queues it
    once and ends with its summary, not a traceback after the queue was written."""
    from pathlib import Path

    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes((Path(__file__).parents[1] / "fixtures" / "mixed.jsonl").read_bytes())
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    db = f"sqlite:///{tmp_path / 'q.db'}"
    r = invoke("review", "enqueue", str(mixed), "--db", db, "--corpus", str(corpus), "--json")
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert (summary["already_queued"], summary["queued_in"]) == (1, [])
    assert summary["added"] + summary["bad_lines"] + 1 == len(mixed.read_text().splitlines())
    assert ReviewStore.open(db).count() == summary["added"]
