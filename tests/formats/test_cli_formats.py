from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.errors import UserError
from casemill.io.jsonl import read_jsonl

runner = CliRunner()


def test_import_writes_cases_and_quarantine_and_exits_1_on_bad_records(
    fixtures: Path, tmp_path: Path
) -> None:
    out = tmp_path / "cases.jsonl"
    result = runner.invoke(
        app,
        ["import", "--from", "chapter", str(fixtures / "chapter_mixed_bad.jsonl"), "-o", str(out)],
    )
    assert result.exit_code == 1, result.output
    assert "read         19" in result.output and "imported     4" in result.output
    assert "quarantined  15" in result.output
    assert "chapter_mixed_bad.jsonl:4: field 'conversation[0].role'" in result.output
    assert "generic:chapter 1, support 3" in result.output
    assert len([line for line in read_jsonl(out) if line.value]) == 4
    quarantine = tmp_path / "cases.quarantine.jsonl"
    rows = [line.value for line in read_jsonl(quarantine)]
    assert [r["line"] for r in rows] == [2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 16, 17, 18, 20]
    assert rows[1]["reasons"][0]["field"] == "expected"


def test_clean_import_exits_0_and_json_summary(fixtures: Path, tmp_path: Path) -> None:
    quarantine = tmp_path / "q.jsonl"
    result = runner.invoke(
        app,
        [
            "import",
            "--from",
            "companion",
            str(fixtures / "companion_mixed.jsonl"),
            "--quarantine",
            str(quarantine),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["read"] == 12 and summary["imported"] == 12 and summary["quarantined"] == 0
    assert summary["domains"]["generic:attorney"] == 2
    assert summary["inferred_tools"]["generic:attorney"] == ["review_contract", "track_deadlines"]
    assert not quarantine.exists()


def test_export_round_trip_through_the_cli(fixtures: Path, tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    runner.invoke(
        app,
        ["import", "--from", "chapter", str(fixtures / "chapter_cases.jsonl"), "-o", str(cases)],
    )
    out = tmp_path / "chapter.jsonl"
    result = runner.invoke(app, ["export", "--to", "chapter", str(cases), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 7 of 7 cases" in result.output
    original = [json.loads(x) for x in (fixtures / "chapter_cases.jsonl").read_text().splitlines()]
    assert [json.loads(x) for x in out.read_text().splitlines()] == original


def test_export_exits_1_when_cases_are_skipped(root: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["export", "--to", "companion", str(root / "seeds"), "-o", str(tmp_path / "c.jsonl")]
    )
    assert result.exit_code == 1
    assert "exactly one expected call" in result.output


def test_export_counts_the_skipped_cases_by_reason_and_says_where_each_was_read(
    root: Path, tmp_path: Path
) -> None:
    from casemill.formats.cases_io import load_cases

    seeds = root / "seeds" / "support.jsonl"
    cases, _ = load_cases(seeds)
    scenarios = [n for n, c in enumerate(cases, start=1) if c.user_scenario]
    multi = [
        n
        for n, c in enumerate(cases, start=1)
        if not c.user_scenario and len(c.environment.state["orders"]) > 1
    ]
    single = [
        (n, c)
        for n, c in enumerate(cases, start=1)
        if not c.user_scenario and len(c.environment.state["orders"]) == 1
    ]
    exchanges = [n for n, c in single if "exchange" in c.tags.intents]
    history = [
        n for n, c in single if next(iter(c.environment.state["orders"].values())).get("refunds")
    ]
    assert exchanges and history
    out = tmp_path / "chapter.jsonl"
    result = runner.invoke(app, ["export", "--to", "chapter", str(seeds), "-o", str(out)])
    said = " ".join(result.output.split())
    assert result.exit_code == 1
    skipped = len(scenarios) + len(multi) + len(exchanges) + len(history)
    reasons = sorted(
        [
            ("more than one order", len(multi)),
            ("user scenario", len(scenarios)),
            ("product catalogue", len(exchanges)),
            ("order history", len(history)),
        ],
        key=lambda r: (-r[1], r[0]),
    )
    assert (
        f"wrote {len(cases) - skipped} of {len(cases)} cases to {out} (chapter); skipped "
        f"{skipped} ({', '.join(f'{rule} {n}' for rule, n in reasons)})"
    ) in said
    first = cases[scenarios[0] - 1]
    assert (
        f"skipped {seeds}:{scenarios[0]}: case {first.id} (user scenario): field "
        "'user_scenario': a user scenario (instructions for a simulated customer) has no place "
        "in the chapter format"
    ) in said
    assert said.count("(user scenario): field 'user_scenario'") == len(scenarios)


def test_import_and_export_refuse_an_output_that_is_an_input_or_a_folder(
    fixtures: Path, tmp_path: Path
) -> None:
    src = tmp_path / "chapter.jsonl"
    src.write_bytes((fixtures / "chapter_cases.jsonl").read_bytes())
    out = tmp_path / "cases.jsonl"
    for args, message in (
        (
            ["import", "--from", "chapter", str(src), "-o", str(src)],
            f"--out {src} is also an input",
        ),
        (
            ["import", "--from", "chapter", str(src), "-o", str(tmp_path)],
            f"--out {tmp_path} is a folder",
        ),
        (
            ["import", "--from", "chapter", str(src), "-o", str(out), "--quarantine", str(out)],
            f"--quarantine {out} is also --out",
        ),
        (["export", "--to", "chapter", str(src), "-o", str(src)], f"--out {src} is also an input"),
        (
            ["export", "--to", "chapter", str(src), "-o", str(tmp_path)],
            f"--out {tmp_path} is a folder",
        ),
    ):
        result = runner.invoke(app, args)
        assert isinstance(result.exception, UserError), (args, result.output)
        assert str(result.exception).startswith(message), str(result.exception)
    assert src.read_bytes() == (fixtures / "chapter_cases.jsonl").read_bytes()  # not replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chapter.jsonl"]


def test_environment_only_for_tau2(fixtures: Path) -> None:
    result = runner.invoke(
        app,
        [
            "import",
            "--from",
            "chapter",
            str(fixtures / "chapter_cases.jsonl"),
            "--environment",
            "db.json",
        ],
    )
    assert result.exit_code != 0
    assert isinstance(result.exception, UserError)
    assert "--environment is only for --from tau-bench or tau2" in str(result.exception)


@pytest.mark.shared_data
def test_tau2_import_command(shared_data: Path, tmp_path: Path) -> None:
    tau2 = shared_data / "tau2-retail"
    out = tmp_path / "tau2.jsonl"
    result = runner.invoke(
        app,
        [
            "import",
            "--from",
            "tau2",
            str(tau2 / "tasks.json"),
            "--environment",
            str(tau2 / "db.json"),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "imported     114" in result.output and "tau2-retail 114" in result.output
    assert sum(1 for line in read_jsonl(out) if line.value) == 114


@pytest.mark.slow
@pytest.mark.shared_data
def test_imported_tau2_cases_pass_casemill_validate(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "tau2.jsonl"
    runner.invoke(
        app,
        [
            "import",
            "--from",
            "tau2",
            str(shared_data / "tau2-retail" / "tasks.json"),
            "-o",
            str(out),
        ],
    )
    result = runner.invoke(app, ["validate", str(out)])
    assert result.exit_code == 0, result.output
    assert "all cases valid" in result.output


@pytest.mark.slow
def test_imported_chapter_and_companion_cases_pass_casemill_validate(
    fixtures: Path, tmp_path: Path
) -> None:
    paths = []
    for fmt, name in (("chapter", "chapter_cases.jsonl"), ("companion", "companion_mixed.jsonl")):
        out = tmp_path / f"{fmt}.jsonl"
        runner.invoke(app, ["import", "--from", fmt, str(fixtures / name), "-o", str(out)])
        paths.append(str(out))
    result = runner.invoke(app, ["validate", *paths])
    assert result.exit_code == 0, result.output


def test_export_names_each_case_written_without_its_forbidden_calls(
    root: Path, tmp_path: Path
) -> None:
    seeds = root / "seeds" / "support.jsonl"
    out = tmp_path / "c.jsonl"
    result = runner.invoke(app, ["export", "--to", "chapter", str(seeds), "-o", str(out)])
    from casemill.formats import export_chapter
    from casemill.formats.cases_io import load_cases

    cases, _ = load_cases(seeds)
    narrowed = export_chapter(cases, tmp_path / "again.jsonl").narrowed
    line = {c.id: n for n, c in enumerate(cases, start=1)}
    assert narrowed
    assert f"; {len(narrowed)} of those written lost forbidden calls" in result.output
    for finding in narrowed:
        assert (
            f"  without forbidden calls {seeds}:{line[finding.case_id]}: case {finding.case_id}: "
            "the chapter format has no place for"
        ) in result.output
