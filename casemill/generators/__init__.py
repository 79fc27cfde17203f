"""Generators: operators that turn seed cases into many candidates whose expected state is still
right (invariant noise, entity swaps, outcome flips, adversarial attacks, environment faults,
intent interpolation), with lineage, re-validation, near-duplicate removal and a run summary.

Public API:
    expand(seeds, config, rng_seed, existing=(), *, endpoint=None, progress=None) -> ExpandResult
    ExpandConfig, ExpandResult, Rejection, Summary
    operator (decorator), all_operators(), get_operator(name), apply_operator(...)
"""

from casemill.generators.expand import (
    DETERMINISTIC_CHAINS,
    LLM_CHAINS,
    ExpandConfig,
    ExpandResult,
    expand,
    parse_chain,
)
from casemill.generators.framework import (
    KINDS,
    NotApplicable,
    OperatorSpec,
    Rejected,
    all_operators,
    apply_operator,
    candidate_rng,
    get_operator,
    operator,
)
from casemill.generators.quality import Rejection
from casemill.generators.summary import Summary

__all__ = [
    "DETERMINISTIC_CHAINS",
    "KINDS",
    "LLM_CHAINS",
    "ExpandConfig",
    "ExpandResult",
    "NotApplicable",
    "OperatorSpec",
    "Rejected",
    "Rejection",
    "Summary",
    "all_operators",
    "apply_operator",
    "candidate_rng",
    "expand",
    "get_operator",
    "operator",
    "parse_chain",
]
