"""The run directory's result files, their versioned formats, and reading a run back.

    RUN_DIR/trajectories.jsonl   written by the runner (one trajectory per case and trial)
    RUN_DIR/results.jsonl        one CaseScore per case and trial (`format` = RESULTS_FORMAT)
    RUN_DIR/summary.json         the RunSummary (`format` = SUMMARY_FORMAT), with the gate verdict
    RUN_DIR/report.html          the self-contained HTML report
    RUN_DIR/summary.md           the Markdown summary for a CI comment

Writes are atomic. Reading checks the format version and says what to do with a newer one; an
older summary.json (format 1, before runs recorded their `case_set`) reads with no case set.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from casemill.errors import RecordError, UserError
from casemill.evaluation.scoring.aggregate import by_case, per_case_means, trial_success
from casemill.evaluation.scoring.model import RESULTS_FORMAT, SUMMARY_FORMAT, CaseScore, RunSummary
from casemill.evaluation.trajectory import Trajectory
from casemill.io.jsonl import atomic_write_jsonl, atomic_write_text, read_jsonl

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
REPORT = "report.html"
SUMMARY_MD = "summary.md"
TRAJECTORIES = "trajectories.jsonl"


def write_results(run_dir: Path, scores: Sequence[CaseScore]) -> Path:
    ordered = sorted(scores, key=lambda s: (s.case_id, s.trial))
    return atomic_write_jsonl(run_dir / RESULTS, (s.model_dump(mode="json") for s in ordered))


def write_summary(run_dir: Path, summary: RunSummary) -> Path:
    text = json.dumps(summary.to_json_dict(), indent=2, ensure_ascii=False, allow_nan=False)
    return atomic_write_text(run_dir / SUMMARY, [text, "\n"])


def read_results(path: Path) -> list[CaseScore]:
    out = []
    for line in read_jsonl(path):
        if line.error:
            raise RecordError(str(path), line.number, None, line.error)
        version = line.value.get("format", RESULTS_FORMAT)
        if version > RESULTS_FORMAT:
            raise RecordError(
                str(path),
                line.number,
                "format",
                f"results format {version} is newer than this Casemill reads "
                f"({RESULTS_FORMAT}); upgrade casemill",
            )
        try:
            out.append(CaseScore.model_validate(line.value))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise RecordError(str(path), line.number, field, err["msg"]) from exc
    return out


def read_summary(path: Path) -> RunSummary:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror}); is this a run directory?") from exc
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    version = data.get("format", SUMMARY_FORMAT) if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > SUMMARY_FORMAT:
        raise UserError(
            f"{path}: summary format {version} is newer than this Casemill reads "
            f"({SUMMARY_FORMAT}); upgrade casemill"
        )
    if not isinstance(version, int) or isinstance(version, bool):
        raise UserError(
            f"{path}: summary format {version!r} is not one this Casemill reads ({SUMMARY_FORMAT})"
        )
    try:
        return RunSummary.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise UserError(f"{path}: field '{'.'.join(map(str, err['loc']))}': {err['msg']}") from exc


@dataclass
class LoadedRun:
    path: Path
    summary: RunSummary
    scores: list[CaseScore]


def load_run(run_dir: str | Path) -> LoadedRun:
    """A finished run: its summary with the per-case table rebuilt from results.jsonl."""
    run_dir = Path(run_dir)
    if not (run_dir / SUMMARY).is_file():
        raise UserError(
            f"{run_dir}: no {SUMMARY}; not an evaluated run directory "
            f"(run `casemill eval ... -o {run_dir}`)"
        )
    summary = read_summary(run_dir / SUMMARY)
    if summary.results and not (run_dir / RESULTS).is_file():
        raise UserError(_no_results(run_dir, summary))
    scores = read_results(run_dir / RESULTS) if (run_dir / RESULTS).is_file() else []
    grouped = by_case(scores)
    rebuilt = {"per_case": per_case_means(grouped), "trial_success": trial_success(grouped)}
    summary = summary.model_copy(update=rebuilt)
    return LoadedRun(path=run_dir, summary=summary, scores=scores)


def _no_results(run_dir: Path, summary: RunSummary) -> str:
    """Why a run whose results.jsonl is gone cannot be compared, and how to get it back."""
    how = (
        "scores its trajectories.jsonl again without running the agent"
        if (run_dir / TRAJECTORIES).is_file()
        else "runs the agent again: its trajectories.jsonl is gone too"
    )
    sources = summary.case_set.sources if summary.case_set else []
    command = f"casemill eval --agent {summary.agent} --cases {' '.join(sources) or 'CASES'}"
    if summary.trials > 1:
        command += f" --trials {summary.trials}"
    if summary.agent_settings.get("temperature"):
        command += f" --temperature {summary.agent_settings['temperature']:g}"
    return (
        f"{run_dir}: no {RESULTS}; its {summary.results} per-trial scores are read from that file "
        f"({SUMMARY} holds no per-case values), so there is nothing to pair with: "
        f"`{command} -o {run_dir}` {how}"
    )


def load_baseline(run_dir: str | Path, case_ids: Iterable[str]) -> RunSummary:
    """The summary of a baseline run for a run on `case_ids`. A baseline that ran none of those
    cases (a run on another corpus, or another case file) is refused: nothing could be
    compared, and every no-regression rule of a gate would pass unchecked."""
    loaded = load_run(run_dir)
    wanted = set(case_ids)
    if wanted and loaded.scores and not wanted & set(loaded.summary.per_case):
        raise UserError(
            f"{run_dir}: the baseline run shares no case with the cases evaluated now "
            f"({len(loaded.summary.per_case)} cases there, {len(wanted)} here, none in common); "
            "was it run on another corpus or case file?"
        )
    return loaded.summary


def read_trajectories(path: Path) -> list[Trajectory]:
    """Trajectories of a run (the last record wins for a repeated case and trial)."""
    found: dict[tuple[str, int], Trajectory] = {}
    for line in read_jsonl(path):
        if line.error:
            raise RecordError(str(path), line.number, None, line.error)
        try:
            t = Trajectory.model_validate(line.value)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise RecordError(
                str(path), line.number, ".".join(map(str, err["loc"])), err["msg"]
            ) from exc
        found[(t.case_id, t.trial)] = t
    return list(found.values())
