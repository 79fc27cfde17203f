"""Casemill mills evaluation cases for tool-using LLM agents: seeds and support logs in; an
expanded, validated, reviewed, versioned corpus out; the agent scored and gated on it.

Each stage is one plain function taking a typed request and returning a typed outcome, which
it has also written to disk; the command line and the Prefect flows only build the request,
call the function and present the outcome:

    >>> from pathlib import Path
    >>> from casemill import ExpandRequest, ValidateRequest, run_expand, run_validate
    >>> checked = run_validate(ValidateRequest(paths=(Path("seeds"),), batch=False))
    >>> checked.report.ok, checked.exit_code
    (True, 0)
    >>> expanded = run_expand(ExpandRequest(seeds="seeds", out="candidates.jsonl", seed=0))
    >>> expanded.accepted  # candidates written, rejects and summary beside them
    3375

The same for `run_mine` (`MineRequest`), `run_enqueue` / `run_export` (`EnqueueRequest`,
`ExportRequest`: the review queue) and `run_evaluate` (`EvaluateRequest`). Everything else a
user extends (domains, operators, agents, log formats, importers, exporters, metrics, gate
checks) plugs in through `casemill.plugins` and its entry-point groups (docs/plugins.md).

The names below are imported on first use, so that `import casemill` (and `casemill --help`)
does not pay for Prefect, pandas or Great Expectations.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("casemill")
except PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0+unknown"

_EXPORTS = {
    # the case
    "Case": "casemill.case.model",
    # the stages
    "MineRequest": "casemill.mining.stage",
    "MineOutcome": "casemill.mining.stage",
    "run_mine": "casemill.mining.stage",
    "ExpandRequest": "casemill.generators.stage",
    "ExpandOutcome": "casemill.generators.stage",
    "run_expand": "casemill.generators.stage",
    "ValidateRequest": "casemill.validation.stage",
    "ValidateOutcome": "casemill.validation.stage",
    "run_validate": "casemill.validation.stage",
    "EnqueueRequest": "casemill.review.stage",
    "EnqueueOutcome": "casemill.review.stage",
    "ExportRequest": "casemill.review.stage",
    "ExportOutcome": "casemill.review.stage",
    "run_enqueue": "casemill.review.stage",
    "run_export": "casemill.review.stage",
    "EvaluateRequest": "casemill.evaluation.stage",
    "EvaluateOutcome": "casemill.evaluation.stage",
    "run_evaluate": "casemill.evaluation.stage",
    # extension
    "operator": "casemill.generators.framework",
    "register_domain": "casemill.domains.registry",
    "UserError": "casemill.errors",
}

__all__ = [  # a literal list, so that linters and editors read it
    "__version__",
    "Case",
    "MineRequest",
    "MineOutcome",
    "run_mine",
    "ExpandRequest",
    "ExpandOutcome",
    "run_expand",
    "ValidateRequest",
    "ValidateOutcome",
    "run_validate",
    "EnqueueRequest",
    "EnqueueOutcome",
    "ExportRequest",
    "ExportOutcome",
    "run_enqueue",
    "run_export",
    "EvaluateRequest",
    "EvaluateOutcome",
    "run_evaluate",
    "operator",
    "register_domain",
    "UserError",
]

if TYPE_CHECKING:  # what editors and type checkers see; at run time, __getattr__ below
    from casemill.case.model import Case
    from casemill.domains.registry import register_domain
    from casemill.errors import UserError
    from casemill.evaluation.stage import EvaluateOutcome, EvaluateRequest, run_evaluate
    from casemill.generators.framework import operator
    from casemill.generators.stage import ExpandOutcome, ExpandRequest, run_expand
    from casemill.mining.stage import MineOutcome, MineRequest, run_mine
    from casemill.review.stage import (
        EnqueueOutcome,
        EnqueueRequest,
        ExportOutcome,
        ExportRequest,
        run_enqueue,
        run_export,
    )
    from casemill.validation.stage import ValidateOutcome, ValidateRequest, run_validate


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'casemill' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once imported, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
