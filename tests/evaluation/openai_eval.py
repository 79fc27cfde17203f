"""`casemill eval` of an `openai:m` agent (answered by the local OpenAI-compatible test server)
on a few cases written to a file."""

from __future__ import annotations

from pathlib import Path

from casemill.case.model import Case


def openai_eval_argv(tmp_path: Path, *cases: Case) -> tuple[list[str], Path]:
    """The `casemill eval` arguments for `openai:m` on `cases` (written to
    tmp_path/cases.jsonl), and the run folder they name."""
    path, run = tmp_path / "cases.jsonl", tmp_path / "run"
    path.write_text("".join(c.model_dump_json() + "\n" for c in cases))
    return ["eval", "--agent", "openai:m", "--cases", str(path), "-o", str(run)], run
