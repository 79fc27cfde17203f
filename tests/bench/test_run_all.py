"""`bench/run_all.py`: parsing FIGURE lines, the table rows and verdicts, the exit code, and a
failing script (a small real script run as a subprocess; no real benchmark runs)."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_run_all():
    spec = importlib.util.spec_from_file_location("bench_run_all", ROOT / "bench" / "run_all.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run_all"] = module
    spec.loader.exec_module(module)
    return module


run_all = _load_run_all()

LINES = [
    "python 3.11, one core\n",
    'FIGURE {"name": "model + semantic", "measured": 6123, "target": ">= 5,000", '
    '"unit": "cases/s", "ok": true}\n',
    'FIGURE {"name": "ratio", "measured": 71.25, "target": ">= 85%", "unit": "%", "ok": false}\n',
    'FIGURE {"name": "precision", "measured": 0.951, "target": ">= 0.95", "unit": "", '
    '"ok": true}\n',
    'FIGURE {"name": "peak memory", "measured": 212, "target": "—", "unit": "MB", "ok": null}\n',
    'FIGURE {"name": "skipped", "measured": null, "target": "—", "unit": "", "ok": null}\n',
    "some other output\n",
    'FIGURE {"name": "demo", "measured": 42.5, "target": "< 120", "unit": "s", "ok": true}\n',
    'FIGURE {"name": "all marked", "measured": 11, "target": "= 11 (all)", "unit": "", '
    '"ok": true}\n',
    'FIGURE {"name": "speed-up", "measured": 13.2, "target": "—", "unit": "x", "ok": null}\n',
]


def test_parse_line_reads_a_figure_and_ignores_other_lines() -> None:
    fig = run_all.parse_line(LINES[1])
    assert (fig.name, fig.measured, fig.target, fig.unit, fig.ok) == (
        "model + semantic",
        6123,
        ">= 5,000",
        "cases/s",
        True,
    )
    assert run_all.parse_line("throughput: 6,123 cases/s\n") is None
    assert run_all.parse_line(" FIGURE {} (not at the start)") is None


@pytest.mark.parametrize(
    "line",
    [
        "FIGURE {not json",
        'FIGURE {"name": "x"}',
        'FIGURE {"name": "x", "measured": 1, "target": "", "unit": "", "ok": null, "extra": 1}',
    ],
)
def test_parse_line_rejects_a_malformed_figure(line: str) -> None:
    with pytest.raises(ValueError, match="malformed figure line"):
        run_all.parse_line(line)


def test_rows_carry_verdicts_and_measured_values_with_units() -> None:
    result = run_all.collect("validate", LINES, returncode=0, seconds=1.0)
    rows = run_all.rows_for(result)
    assert [(r.figure, r.target, r.measured, r.verdict) for r in rows] == [
        ("model + semantic", ">= 5,000 cases/s", "6,123 cases/s", "pass"),
        ("ratio", ">= 85%", "71.25%", "falls short"),
        ("precision", ">= 0.95", "0.951", "pass"),
        ("peak memory", "—", "212 MB", "—"),
        ("skipped", "—", "—", "—"),
        ("demo", "< 120 s", "42.5 s", "pass"),
        ("all marked", "= 11 (all)", "11", "pass"),
        ("speed-up", "—", "13.2x", "—"),
    ]
    assert {r.script for r in rows} == {"validate"}
    assert run_all.exit_code(rows) == 1
    assert run_all.exit_code([r for r in rows if r.verdict != "falls short"]) == 0


def test_a_malformed_line_and_a_silent_script_are_failed_rows() -> None:
    bad = run_all.collect("x", ["FIGURE {oops\n"], returncode=0, seconds=0.1)
    rows = run_all.rows_for(bad)
    assert [r.verdict for r in rows] == ["failed", "failed"]
    assert rows[0].figure.startswith("malformed figure line: FIGURE {oops")
    assert rows[1].figure == "script printed no figure (exit code 0)"
    assert run_all.exit_code(rows) == 1


def _fake_script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "fake_bench.py"
    path.write_text(body, encoding="utf-8")
    return path


FAILING = """
import sys
print("working", flush=True)
print('FIGURE {"name": "half-done", "measured": 3, "target": ">= 1", "unit": "", "ok": true}')
print("boom", file=sys.stderr)
sys.exit(3)
"""


def test_a_failing_script_is_a_row_with_its_exit_code(tmp_path: Path) -> None:
    bench = run_all.Bench(name="fake", script=_fake_script(tmp_path, FAILING))
    log = io.StringIO()
    result = run_all.run_script(bench, ["--some-arg"], log)
    assert result.returncode == 3
    rows = run_all.rows_for(result)
    assert [(r.figure, r.verdict) for r in rows] == [
        ("half-done", "pass"),
        ("script failed (exit code 3)", "failed"),
    ]
    text = log.getvalue()
    assert "working" in text and "boom" in text and "--some-arg" in text
    assert "fake: exit code 3" in text


def test_main_runs_the_selected_scripts_continues_after_a_failure_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.py"
    good.write_text(
        "import sys\n"
        'print(\'FIGURE {"name": "speed", "measured": 1234.5, "target": ">= 1,000", \'\n'
        '      \'"unit": "items/s", "ok": true}\', flush=True)\n'
        "print(' '.join(sys.argv[1:]))\n",
        encoding="utf-8",
    )
    benches = (
        run_all.Bench(name="bad", script=_fake_script(tmp_path, FAILING)),
        run_all.Bench(name="good", script=good, full=("--full",), quick=("--quick",)),
        run_all.Bench(name="unused", script=tmp_path / "missing.py"),
    )
    monkeypatch.setattr(run_all, "BENCHES", benches)
    monkeypatch.setenv("COLUMNS", "200")
    assert run_all.main(["--only", "bad,good", "--quick"]) == 1
    out = capsys.readouterr().out
    assert "script failed (exit code 3)" in out
    assert "1,234.5 items/s" in out and ">= 1,000 items/s" in out and "QUICK" in out
    assert "unused" not in out
    log = Path(out.split("log: ")[1].split()[0])
    assert "--quick" in log.read_text(encoding="utf-8")
    assert run_all.main(["--only", "good"]) == 0


def test_only_rejects_an_unknown_name() -> None:
    with pytest.raises(SystemExit, match="unknown benchmark"):
        run_all.select("validate,nope")


def test_every_bench_script_exists() -> None:
    assert all(b.script.is_file() for b in run_all.BENCHES)
    assert len({b.name for b in run_all.BENCHES}) == len(run_all.BENCHES)
