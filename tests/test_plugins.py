"""`casemill.plugins`: a package outside Casemill adds a metric, an operator, a gate check, an
agent transport and a log format through entry points, and each works where Casemill's own do;
a plugin that does not load says which entry point of which package to fix."""

from __future__ import annotations

import json
import logging
from importlib.metadata import EntryPoints
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill import plugins
from casemill.cli import app
from casemill.errors import UserError
from tests.evaluation.scoring import casebuild as cb
from tests.plugin_package import DISTRIBUTION, ENTRY_POINTS, MODULE, forget, install

runner = CliRunner()
LOG = (
    "customer| My mug arrived cracked, order W1001.\n"
    "assistant| Sorry to hear that, I will look into it.\n"
    "\n"
    "customer| Cancel order W1001 please, it has not shipped.\n"
    "assistant| Done, it is cancelled.\n"
)


@pytest.fixture
def extras(tmp_path, monkeypatch):
    """Installs `casemill-extras` (or another distribution) on sys.path for this test."""

    def _install(entry_points=None, name=DISTRIBUTION) -> Path:
        folder = install(tmp_path / name, entry_points, name)
        monkeypatch.syspath_prepend(str(folder))
        plugins.refresh()
        return folder

    yield _install
    forget()


def test_the_built_ins_are_declared_as_entry_points_of_casemill():
    assert plugins.names("agent") == ["http", "https", "openai", "python", "recorded", "reference"]
    assert plugins.names("log_format") == ["csv", "openai-jsonl", "otel", "transcript"]
    assert plugins.names("gate_check") == ["no_regression", "threshold"]
    assert {"support", "tau2-retail"} <= set(plugins.names("domain"))
    assert "task_success" in plugins.names("metric") and "typo" not in plugins.names("metric")
    assert plugins.declared("operator")["casing"].target == "casemill.generators.noise:casing"
    assert all(p.origin == plugins.BUILT_IN for p in plugins.declared("exporter").values())


def test_plugins_list_json_names_kind_origin_object_and_error(extras):
    extras()
    result = runner.invoke(app, ["plugins", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {
        "kind": "metric",
        "name": "reply_words",
        "origin": DISTRIBUTION,
        "object": f"{MODULE}:ReplyWords",
        "error": None,
    } in rows
    assert {
        "kind": "domain",
        "name": "support",
        "origin": "built-in",
        "object": "casemill.domains.support:SupportDomain",
        "error": None,
    } in rows
    ours = {(r["kind"], r["name"]) for r in rows if r["origin"] == DISTRIBUTION}
    assert ours == {(k.split(".")[1].rstrip("s"), n) for k, e in ENTRY_POINTS.items() for n in e}
    assert len({r["kind"] for r in rows}) == len(plugins.KINDS)


def test_plugins_list_shows_a_load_error_and_exits_1(extras):
    extras({"casemill.metrics": {"no_version": f"{MODULE}:NoVersion"}})
    result = runner.invoke(app, ["plugins", "list", "--kind", "metric", "--json"])
    assert result.exit_code == 1
    (row,) = [r for r in json.loads(result.stdout) if r["origin"] == DISTRIBUTION]
    assert row["error"] == (
        f"metric 'no_version' from package '{DISTRIBUTION}' (casemill.metrics entry point "
        f"no_version = {MODULE}:NoVersion) is not a Metric "
        "(casemill.evaluation.scoring.plugins.Metric): it lacks version"
    )
    bad = runner.invoke(app, ["plugins", "list", "--kind", "metrics"])
    assert isinstance(bad.exception, UserError)
    assert str(bad.exception).startswith("--kind 'metrics' is not a kind; kinds: domain, ")


@pytest.mark.parametrize(
    ("group", "value", "said"),
    [
        ("casemill.metrics", "cm_gone:Metric", "cannot import module 'cm_gone'"),
        ("casemill.metrics", f"{MODULE}:Missing", f"module '{MODULE}' has no attribute 'Missing'"),
        ("casemill.operators", f"{MODULE}:plain", "is not an operator: decorate the function"),
        (
            "casemill.gate_checks",
            f"{MODULE}:Lines",
            "is not a GateCheck (casemill.evaluation.gate_checks.GateCheck): it lacks name, "
            "__call__ (it is not callable)",
        ),
    ],
)
def test_a_plugin_that_does_not_load_names_its_entry_point(extras, group, value, said):
    extras({group: {"broken": value}})
    kind = {"casemill.metrics": "metric", "casemill.operators": "operator"}.get(group, "gate_check")
    with pytest.raises(UserError) as err:
        plugins.get(kind, "broken")
    assert said in str(err.value)
    assert f"package '{DISTRIBUTION}' ({group} entry point broken = {value})" in str(err.value)


def test_an_operator_of_another_package_runs_in_expand(extras, tmp_path):
    extras()
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(
        "".join(c.model_dump_json() + "\n" for c in (cb.refund_case(), cb.cancel_case()))
    )
    out = tmp_path / "out.jsonl"
    result = runner.invoke(
        app, ["expand", "--seeds", str(seeds), "-o", str(out), "--operators", "thanks_suffix"]
    )
    assert result.exit_code == 0, result.output
    made = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(made) == 2
    for case in made:
        (step,) = case["provenance"]["operators"]
        assert step == {**step, "name": "thanks_suffix", "version": "1", "kind": "noise"}
        assert step["args"] == {"text": "Thanks a lot!"}
        first = next(t for t in case["conversation"] if t["role"] == "customer")
        assert first["content"].endswith(" Thanks a lot!")
    listed = runner.invoke(app, ["ops", "list", "--json"])
    assert "thanks_suffix" in listed.stdout


def test_a_metric_of_another_package_is_in_every_result_and_the_summary(extras, tmp_path):
    extras()
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        "".join(
            c.model_dump_json() + "\n"
            for c in (cb.refund_case(), cb.cancel_case(), cb.clarify_case())
        )
    )
    run = tmp_path / "run"
    result = runner.invoke(
        app, ["eval", "--agent", "reference", "--cases", str(cases), "-o", str(run), "--json"]
    )
    assert result.exit_code == 0, result.output
    replies = {
        t["case_id"]: t["final_reply"]
        for t in map(json.loads, (run / "trajectories.jsonl").read_text().splitlines())
    }
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert len(results) == 3
    for r in results:
        assert r["metrics"]["reply_words"] == len(replies[r["case_id"]].split()) > 0
    summary = json.loads((run / "summary.json").read_text())
    words = [r["metrics"]["reply_words"] for r in results]
    assert summary["metrics"]["reply_words"]["mean"] == pytest.approx(sum(words) / 3)
    assert summary["metric_versions"]["reply_words"] == "1"


def test_a_metric_that_does_not_load_stops_scoring_before_any_trial(extras):
    from casemill.evaluation.scoring.pipeline import score_all

    extras({"casemill.metrics": {"no_version": f"{MODULE}:NoVersion"}})
    case = cb.refund_case()
    with pytest.raises(UserError, match="metric 'no_version' from package .* lacks version"):
        score_all([case], [cb.trajectory(case, cb.GOOD_REFUND, cb.GOOD_REFUND_REPLY)])


def test_a_metric_registered_at_run_time_is_scored_and_one_that_raises_is_a_note():
    from casemill.evaluation.scoring import score

    class Calls:
        name, version = "calls_made", "2"

        def __call__(self, trial):
            assert trial.metrics["task_success"] in (0.0, 1.0) and trial.mode == "casemill"
            return len(trial.trajectory.calls)

    class Broken:
        name, version = "broken_metric", "1"

        def __call__(self, trial):
            raise ZeroDivisionError("no")

    case = cb.refund_case()
    done = cb.trajectory(case, cb.GOOD_REFUND, cb.GOOD_REFUND_REPLY)
    plugins.register("metric", Calls())
    plugins.register("metric", Broken)  # a class is made without arguments
    try:
        scored = score(case, done)
        assert scored.metrics["calls_made"] == 2.0
        assert scored.metrics["broken_metric"] is None
        assert any("metric 'broken_metric' raised ZeroDivisionError: no" in n for n in scored.notes)
        with pytest.raises(UserError, match="registered already; pass replace=True"):
            plugins.register("metric", Calls())
        with pytest.raises(UserError, match="'task_success' is a built-in metric"):
            plugins.register("metric", Calls(), "task_success")
    finally:
        plugins.unregister("metric", "calls_made")
        plugins.unregister("metric", "broken_metric")
    assert "calls_made" not in score(case, done).metrics


def test_a_gate_rule_names_a_check_of_another_package(extras):
    from casemill.evaluation.gate import check_gate, parse_gate
    from casemill.evaluation.scoring import score, summarize

    extras()
    cases = [cb.refund_case(), cb.cancel_case()]
    replies = [(cb.GOOD_REFUND, cb.GOOD_REFUND_REPLY), ([], "Done.")]
    scores = [score(c, cb.trajectory(c, *r)) for c, r in zip(cases, replies, strict=True)]
    summary = summarize(cases, scores)
    words = {c.id: summary.per_case[c.id]["reply_words"] for c in cases}
    limit = min(words.values())
    gate = parse_gate(
        f'[[rule]]\nkind = "most"\nmetric = "reply_words"\nargs = {{ limit = {limit} }}\n'
    )
    verdict = check_gate(gate, cases, scores, summary)
    assert not verdict.passed
    (failure,) = verdict.failures
    assert failure.case_ids == tuple(i for i, w in words.items() if w > limit)
    assert failure.value == max(words.values())
    assert failure.rule == "rule 1: reply_words most"
    with pytest.raises(UserError, match=r"<gate>:2: rule 1, field 'kind': unknown kind 'mots'"):
        parse_gate('[[rule]]\nkind = "mots"\nmetric = "reply_words"\n')
    with pytest.raises(UserError, match="a threshold rule takes no 'args'"):
        parse_gate('[[rule]]\nmetric = "tool_recall"\nmin = 1.0\nargs = { a = 1 }\n')


def test_an_agent_transport_of_another_package_is_a_spec_prefix(extras):
    from casemill.evaluation.agents import load_agent

    extras()
    assert load_agent("echo:hello there").text == "hello there"
    with pytest.raises(UserError) as err:
        load_agent("nonsense")
    assert str(err.value) == (
        "unknown agent spec 'nonsense'; expected one of: reference, reference:NAME, "
        "python:package.module:function, http(s)://..., openai:MODEL, recorded:LOG, echo:..."
    )


def test_a_log_format_of_another_package_is_a_format_name(extras, tmp_path):
    from casemill.mining.parsers import FORMATS, carried, get_parser, spans_files

    extras()
    assert list(FORMATS) == ["openai-jsonl", "transcript", "csv", "otel", "lines"]
    assert "lines" in FORMATS and "nope" not in FORMATS
    log = tmp_path / "a.log"
    log.write_text(LOG)
    (first, second) = get_parser("lines")(log, max_turns=5)
    assert [m.role for m in first.messages] == ["customer", "assistant"]
    assert second.messages[0].content == "Cancel order W1001 please, it has not shipped."
    assert carried("lines") == {} and spans_files([log], "lines") is False
    assert spans_files([log], "otel") is True and set(carried("otel")) == {"carry"}


def test_casemill_mine_reads_a_log_format_of_another_package(extras, tmp_path):
    extras()
    log = tmp_path / "chat.log"
    log.write_text(LOG)
    out = tmp_path / "mined.jsonl"
    result = runner.invoke(app, ["mine", str(log), "--format", "lines", "-o", str(out)])
    assert result.exit_code == 0, result.output
    mined = [json.loads(line) for line in out.read_text().splitlines()]
    assert mined and all(c["provenance"]["origin"] == "mined" for c in mined)
    assert {c["provenance"]["source"]["file"] for c in mined} == {str(log)}
    bad = runner.invoke(app, ["mine", str(log), "--format", "line", "-o", str(out)])
    assert "--format 'line' is not one of openai-jsonl, transcript, csv, otel, lines" in str(
        bad.exception
    )


def test_import_and_export_use_the_formats_of_another_package(extras, tmp_path):
    extras()
    cases = tmp_path / "cases.jsonl"
    made = (cb.refund_case(), cb.cancel_case())
    cases.write_text("".join(c.model_dump_json() + "\n" for c in made))
    out = tmp_path / "ids.txt"
    result = runner.invoke(app, ["export", str(cases), "--to", "ids", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().split() == [c.id for c in made]
    back = tmp_path / "back.jsonl"
    imported = runner.invoke(
        app, ["import", str(cases), "--from", "cases", "--label", "x", "-o", str(back), "--json"]
    )
    assert imported.exit_code == 0, imported.output
    assert [json.loads(line)["id"] for line in back.read_text().splitlines()] == [
        c.id for c in made
    ]
    refused = runner.invoke(app, ["import", str(cases), "--from", "chapter", "--label", "x"])
    assert str(refused.exception) == (
        "--label is only for --from cases or companion (the generic domain's label)"
    )


def test_a_built_in_name_another_package_declares_is_ignored(extras, caplog):
    caplog.set_level(logging.WARNING)
    extras({"casemill.operators": {"casing": f"{MODULE}:thanks_suffix"}})
    assert plugins.declared("operator")["casing"].origin == plugins.BUILT_IN
    assert f"package '{DISTRIBUTION}'" in caplog.text and "a built-in name: ignored" in caplog.text


def test_two_packages_declaring_one_name_are_refused_when_it_is_asked_for(extras):
    extras({"casemill.metrics": {"reply_words": f"{MODULE}:ReplyWords"}})
    extras({"casemill.metrics": {"reply_words": f"{MODULE}:NoVersion"}}, name="other-extras")
    with pytest.raises(UserError, match="metric 'reply_words' is declared twice, by package"):
        plugins.get("metric", "reply_words")
    assert "tool_recall" in plugins.names("metric")  # the others are unaffected


def test_missing_casemill_metadata_says_to_sync(monkeypatch):
    monkeypatch.setattr(plugins, "entry_points", lambda: EntryPoints(()))
    plugins.refresh()
    try:
        with pytest.raises(UserError, match="run `uv sync` in the checkout"):
            plugins.names("metric")
    finally:
        monkeypatch.undo()
        plugins.refresh()
