"""Prefect artifacts the flows publish: summary tables, verdicts, links, progress.

Artifacts need a flow or task run; these helpers do nothing outside one, so the same code runs
under plain function calls (tests, benchmarks)."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def _in_run() -> bool:
    from prefect.context import FlowRunContext, TaskRunContext

    return FlowRunContext.get() is not None or TaskRunContext.get() is not None


def artifact_key(text: str) -> str:
    """Artifact keys allow lower-case letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:100] or "casemill"


def table(key: str, rows: list[dict[str, Any]], description: str) -> None:
    if _in_run() and rows:
        from prefect.artifacts import create_table_artifact

        create_table_artifact(table=rows, key=artifact_key(key), description=description)


def markdown(key: str, text: str, description: str) -> None:
    if _in_run():
        from prefect.artifacts import create_markdown_artifact

        create_markdown_artifact(markdown=text, key=artifact_key(key), description=description)


def link(key: str, path: Path, text: str) -> None:
    if _in_run():
        from prefect.artifacts import create_link_artifact

        create_link_artifact(
            link=Path(path).resolve().as_uri(), link_text=text, key=artifact_key(key)
        )


class ProgressArtifact:
    """A progress artifact advanced as batches finish (a no-op outside a run)."""

    def __init__(self, total: int, description: str):
        self.total = max(total, 1)
        self.done = 0
        self.id = None
        if _in_run():
            from prefect.artifacts import create_progress_artifact

            self.id = create_progress_artifact(progress=0.0, description=description)

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.id is not None:
            from prefect.artifacts import update_progress_artifact

            update_progress_artifact(
                artifact_id=self.id, progress=min(100.0, 100.0 * self.done / self.total)
            )
