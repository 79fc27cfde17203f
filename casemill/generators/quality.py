"""Quality gates every candidate passes before it is kept: every validator (semantic checks
with the replay check, and the lints when `casemill.validation` offers them) and near-duplicate
removal within the batch and against existing cases. Failures become `Rejection` records."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from casemill.case.model import Case
from casemill.dedup import NearDuplicateIndex
from casemill.validation.findings import Finding
from casemill.validation.semantic import semantic_findings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rejection:
    """A candidate (or an attempt) that did not make it, and why."""

    chain: str
    parent_id: str
    index: int
    reason: str
    detail: str = ""
    case_id: str | None = None
    duplicate_of: str | None = None
    model: str | None = None
    prompt_hash: str | None = None
    file: str | None = None  # where a skipped seed is: file, line and field
    line: int | None = None
    case: dict[str, Any] | None = field(default=None, repr=False)
    field: str | None = None  # after the last use of dataclasses.field in this class body

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}


def _lint_function() -> Callable[[Case], list[Finding]] | None:
    try:
        module = importlib.import_module("casemill.validation.lints")
    except ImportError:
        return None
    return getattr(module, "lint_findings", None)


@dataclass
class Gate:
    """Validates and deduplicates candidates; `strict_lints` turns lint warnings into rejections."""

    threshold: float = 0.9
    strict_lints: bool = False
    index: NearDuplicateIndex = field(init=False)
    lint_counts: dict[str, int] = field(default_factory=dict)
    _lint: Callable[[Case], list[Finding]] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.index = NearDuplicateIndex(threshold=self.threshold, fold_case=False)
        self._lint = _lint_function()

    def know(self, case: Case) -> None:
        """Index an existing case (a seed or a corpus case) so candidates duplicating it go."""
        self.index.add(case)

    def problems(self, case: Case) -> list[Finding]:
        """Validation errors of `case` (lint warnings are counted, and errors when strict)."""
        errors = [f for f in semantic_findings(case) if f.severity == "error"]
        if errors or self._lint is None:
            return errors
        warnings = self._lint(case)
        for w in warnings:
            self.lint_counts[w.rule] = self.lint_counts.get(w.rule, 0) + 1
        return warnings if self.strict_lints else []

    def duplicate_of(self, case: Case) -> str | None:
        """The id of a kept or known case that `case` duplicates; else `case` is kept."""
        return self.index.check_and_add(case)
