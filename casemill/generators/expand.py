"""`expand`: seeds in, validated and deduplicated candidates out, with rejections and a summary.

Plain library code (no Prefect, no printing): flows and the CLI call it. For each seed (sorted by
id) and each chain of operators (`"blend_new_order+swap_order_id+keyboard_typo"` applies the
blend, then the swap, then the typo) it makes `per_seed` attempts; attempt `i` of operator `op` on
parent `p` draws from a `random.Random` seeded by a stable hash of (seed, p, op, i), so the output
is byte-identical for the same seed whatever the order or process.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from casemill.case.model import Case
from casemill.domains.contract import contract_for
from casemill.errors import UserError
from casemill.generators.framework import (
    NotApplicable,
    OperatorSpec,
    Rejected,
    apply_operator,
    get_operator,
)
from casemill.generators.quality import Gate, Rejection
from casemill.generators.summary import Summary, coverage, diversity, quota_keys
from casemill.llm import NOT_CONFIGURED

log = logging.getLogger(__name__)

DETERMINISTIC_CHAINS: tuple[str, ...] = (
    "keyboard_typo",
    "ocr_noise",
    "char_noise",
    "spelling_noise",
    "slang",
    "paraphrase",
    "filler",
    "casing",
    "swap_order_id",
    "swap_customer",
    "swap_product",
    "swap_amount",
    "swap_address",
    "flip_not_delivered",
    "flip_already_refunded",
    "flip_shipped",
    "flip_out_of_stock",
    "flip_price_paid",
    "flip_intact",
    "flip_not_shipped",
    "flip_status",
    "inject_customer",
    "inject_tool_result",
    "instruction_override",
    "authority_impersonation",
    "social_engineering",
    "policy_bypass",
    "other_customer_data",
    "contradiction_turns",
    "fault_lookup_transient",
    "fault_lookup_persistent",
    "fault_write_transient",
    "fault_write_persistent",
    "blend_new_order",
    "blend_contradictory",
    "blend_ambiguous",
    # written against the domain contract: every pack that has one (docs/domains.md)
    "swap_entity",
    "flip_precondition",
    "attack_customer",
    "attack_tool_result",
    "fault_transient",
    "fault_persistent",
    "blend_request",
    # blend_conflict is left to `--operators`: the reference agent does not ask which of two
    # conflicting requests is meant, so the demo's gate would fail on its cases
    "blend_request+flip_precondition",
    "flip_precondition+keyboard_typo",
    "swap_order_id+keyboard_typo",
    "swap_customer+slang",
    "swap_product+ocr_noise",
    "blend_new_order+swap_order_id+keyboard_typo",
    "flip_not_delivered+paraphrase",
    "flip_intact+filler",
    "fault_lookup_transient+casing",
    "inject_customer+char_noise",
    "other_customer_data+swap_customer",
)
LLM_CHAINS: tuple[str, ...] = ("llm_adversarial_rewrite", "llm_blend")
# an endpoint that failed this many LLM-backed attempts in a row (after the SDK's own retries)
# is given up on for the rest of the run: each failure costs seconds of backoff, so an
# unreachable endpoint would otherwise stall `expand` for minutes, silently, for nothing
LLM_GIVE_UP_AFTER = 3


class ExpandConfig(BaseModel):
    """What to generate: chains of operator names, attempts per seed, quotas and gates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chains: tuple[str, ...] = DETERMINISTIC_CHAINS
    per_seed: int = Field(default=2, ge=1, description="attempts of each chain on each seed")
    quotas: dict[str, int] = Field(
        default_factory=dict,
        description="most candidates kept per operator kind ('noise') or per kind and intent "
        "('noise:refund'), counted as the coverage table counts them: a candidate counts for "
        "every kind in its chain and every intent it has",
    )
    dedup_threshold: float = Field(default=0.9, gt=0, le=1)
    strict_lints: bool = False
    llm: bool = False
    op_args: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def all_chains(self) -> tuple[str, ...]:
        return (
            (*self.chains, *(c for c in LLM_CHAINS if c not in self.chains))
            if self.llm
            else self.chains
        )


def _validation_detail(exc: ValidationError) -> str:
    """The fields an operator's output broke and why, without the inputs pydantic quotes (a
    customer turn may be 100,000 characters long)."""
    return "; ".join(
        f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in exc.errors(include_input=False)
    )


@dataclass
class ExpandResult:
    candidates: list[Case] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    skipped_seeds: list[Rejection] = field(default_factory=list)
    summary: Summary = field(default_factory=Summary)


def parse_chain(chain: str) -> list[OperatorSpec]:
    return [get_operator(name.strip()) for name in chain.split("+") if name.strip()]


def check_op_args(config: ExpandConfig) -> None:
    """Refuse, before any work, `config.op_args` that a run would not use as given: arguments an
    operator does not take (each attempt would fail on them, recorded as an `operator_error`),
    an operator no one has registered, or one that no chain of the run applies (its arguments
    would be ignored, silently). Each `UserError` names the operator, the unknown argument and
    the accepted ones (`OperatorSpec.resolve`, the check `apply_operator` makes)."""
    in_chains = {spec.name for chain in config.all_chains() for spec in parse_chain(chain)}
    for name, args in config.op_args.items():
        where = f"op_args[{name!r}]"
        try:
            spec = get_operator(name)
        except UserError as exc:
            raise UserError(f"{where}: {exc}") from None
        if name not in in_chains:
            raise UserError(
                f"{where}: no chain of this run applies operator {name!r}, so its arguments "
                f"would be ignored; add it to the chains or drop its op_args "
                f"(chains: {', '.join(config.all_chains())})"
            )
        try:
            spec.resolve(args)
        except UserError as exc:
            raise UserError(f"{where}: {exc}") from None


@dataclass
class _Run:
    config: ExpandConfig
    seed: int
    gate: Gate
    endpoint: Any
    result: ExpandResult = field(default_factory=ExpandResult)
    kept: Counter[str] = field(default_factory=Counter)  # by quota key (`quota_keys`)
    llm_failures: int = 0  # LLM-backed attempts in a row whose endpoint failed

    @property
    def llm_down(self) -> bool:
        return self.llm_failures >= LLM_GIVE_UP_AFTER

    def note_llm(self, spec: OperatorSpec, failed: Rejected | None) -> None:
        """Count an LLM-backed step's endpoint failures in a row; say once when giving up."""
        if not spec.needs_llm:
            return
        if failed is None or failed.reason != "llm_unavailable":
            self.llm_failures = 0
            return
        self.llm_failures += 1
        if self.llm_failures == LLM_GIVE_UP_AFTER:
            self.result.summary.messages.append(
                f"LLM endpoint failed {LLM_GIVE_UP_AFTER} attempts in a row "
                f"(last: {failed.detail}); "
                "the remaining LLM-backed attempts were skipped"
            )

    def at_quota(self, key: str) -> bool:
        """Whether the candidates kept under `key` (a kind or a 'kind:intent') reached its
        quota."""
        cap = self.config.quotas.get(key)
        return cap is not None and self.kept[key] >= cap

    def reject(
        self,
        chain: str,
        parent: Case,
        index: int,
        reason: str,
        detail: str = "",
        case: Case | None = None,
        **extra: Any,
    ) -> None:
        self.result.summary.reject(chain, reason)
        self.result.rejections.append(
            Rejection(
                chain=chain,
                parent_id=parent.id,
                index=index,
                reason=reason,
                detail=detail[:500],
                case_id=case.id if case else None,
                case=case.model_dump(mode="json") if case else None,
                **extra,
            )
        )

    def attempt(self, chain: str, specs: list[OperatorSpec], seed_case: Case, index: int) -> None:
        summary = self.result.summary
        summary.attempts += 1
        current = seed_case
        for spec in specs:
            try:
                out = apply_operator(
                    spec,
                    current,
                    seed=self.seed,
                    index=index,
                    args=self.config.op_args.get(spec.name),
                    endpoint=self.endpoint,
                )
            except NotApplicable:
                summary.not_applicable += 1
                return
            except Rejected as exc:
                self.note_llm(spec, exc)
                self.reject(
                    chain,
                    seed_case,
                    index,
                    exc.reason,
                    exc.detail,
                    model=exc.model,
                    prompt_hash=exc.prompt_hash,
                )
                return
            except ValidationError as exc:  # e.g. text grown past the model's limit
                self.reject(
                    chain,
                    seed_case,
                    index,
                    "invalid:model",
                    f"{spec.name}: {_validation_detail(exc)}",
                )
                return
            except Exception as exc:  # an operator bug costs this attempt only
                log.warning("operator %s failed on %s: %r", spec.name, current.id, exc)
                self.reject(
                    chain,
                    seed_case,
                    index,
                    "operator_error",
                    f"{spec.name}: {type(exc).__name__}: {exc}",
                )
                return
            self.note_llm(spec, None)
            if not out:
                summary.not_applicable += 1
                return
            current = out[0]
        self.gate_candidate(chain, seed_case, index, current)

    def gate_candidate(self, chain: str, seed_case: Case, index: int, case: Case) -> None:
        summary = self.result.summary
        summary.generated += 1
        problems = self.gate.problems(case)
        if problems:
            first = problems[0]
            self.reject(
                chain,
                seed_case,
                index,
                f"invalid:{first.rule}",
                "; ".join(f"{p.field}: {p.message}" for p in problems),
                case=case,
            )
            return
        keys = quota_keys(case)
        if any(self.at_quota(key) for key in keys):
            summary.quota_stopped += 1
            return
        dup = self.gate.duplicate_of(case)
        if dup is not None:
            summary.near_duplicates += 1
            self.reject(chain, seed_case, index, "near_duplicate", case=None, duplicate_of=dup)
            return
        self.result.candidates.append(case)
        self.kept.update(keys)
        summary.accepted_by_operator[chain] = summary.accepted_by_operator.get(chain, 0) + 1


def _valid_seeds(seeds: list[Case], result: ExpandResult, gate: Gate) -> list[Case]:
    good: dict[str, Case] = {}
    for case in sorted(seeds, key=lambda c: c.id):
        errors = [f for f in gate.problems(case) if f.severity == "error"]
        if errors:
            result.skipped_seeds.append(
                Rejection(
                    chain="(seed)",
                    parent_id=case.id,
                    index=0,
                    reason=f"invalid_seed:{errors[0].rule}",
                    detail="; ".join(f"{f.field}: {f.message}" for f in errors),
                )
            )
            continue
        good.setdefault(case.id, case)
    return list(good.values())


def _note_other_domains(seeds: list[Case], summary: Summary) -> None:
    """Say so when seeds are of a domain without a contract: only the noise operators
    (customer text, or a simulated customer's scenario) apply to them; the others edit facts
    through a pack's contract (docs/domains.md)."""
    others = sorted({c.domain for c in seeds if contract_for(c.domain) is None})
    if others:  # no counts: the flow merges its batches' messages as a set
        summary.messages.append(
            f"seeds of domains without a contract ({', '.join(others)}): only the noise "
            "operators apply to them, to their customer turns or scenario (the others need a "
            "pack's contract: docs/domains.md)"
        )


def expand(
    seeds: list[Case],
    config: ExpandConfig,
    rng_seed: int,
    existing: Iterable[Case] = (),
    *,
    endpoint: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> ExpandResult:
    """Expand `seeds` into candidates (review pending) by `config`'s chains.

    `existing` (e.g. `CorpusStore(dir).cases()`) is indexed for near-duplicates; `endpoint` is
    an `LLMEndpoint` for the LLM-backed operators (skipped, with one message, when None);
    `progress(done, total)` is called after each seed."""
    gate = Gate(threshold=config.dedup_threshold, strict_lints=config.strict_lints)
    run = _Run(config=config, seed=rng_seed, gate=gate, endpoint=endpoint)
    summary = run.result.summary
    chains = [(c, parse_chain(c)) for c in config.all_chains()]
    check_op_args(config)  # up front: a wrong argument would fail every attempt, one by one
    if any(s.needs_llm for _, specs in chains for s in specs) and endpoint is None:
        summary.messages.append(f"LLM-backed operators skipped: {NOT_CONFIGURED}")
        chains = [(c, specs) for c, specs in chains if not any(s.needs_llm for s in specs)]
    good = _valid_seeds(seeds, run.result, gate)
    summary.seeds, summary.seeds_skipped = len(good), len(run.result.skipped_seeds)
    _note_other_domains(good, summary)
    for case in existing:
        gate.know(case)
    for case in good:
        gate.know(case)
    for done, seed_case in enumerate(good, start=1):
        for chain, specs in chains:
            for index in range(config.per_seed):
                if any(run.at_quota(spec.kind) for spec in specs):
                    summary.quota_stopped += 1
                    continue
                if run.llm_down and any(s.needs_llm for s in specs):
                    continue
                run.attempt(chain, specs, seed_case, index)
        if progress is not None:
            progress(done, len(good))
    summary.accepted = len(run.result.candidates)
    summary.coverage = coverage(run.result.candidates)
    summary.diversity = diversity(good, run.result.candidates)
    summary.lint_warnings = dict(sorted(gate.lint_counts.items()))
    return run.result
