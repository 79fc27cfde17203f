"""The `expand-corpus` flow: seeds (and the corpus) into validated, deduplicated candidates.

The work is the expand stage's (`casemill.generators.stage`, what `casemill expand` runs): the
seeds are cut into batches, one task a batch (`expand_part`), cached on its inputs and the code
(expansion is deterministic: same seeds, config and seed give the same candidates). Every
batch knows all seeds and the corpus, so no candidate duplicates them; a final merge
(`finish_expand`) removes near-duplicates across batches in batch order and writes the
candidates, the rejects and the summary. Quotas (`quotas`) apply per batch.

The LLM-backed operators (`llm=true`, or an LLM chain in `chains`) use the endpoint configured
where the flow runs (`CASEMILL_LLM_BASE_URL`, `CASEMILL_LLM_MODEL`, `CASEMILL_LLM_API_KEY`, as
`casemill expand --llm`); without one they are skipped and the run logs why. The key never
leaves the worker's environment: a batch task is told the model and the endpoint's address
(its cache key then changes with them) and builds its client from the settings itself.
"""

from __future__ import annotations

import json
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import INPUTS, NO_CACHE, TASK_SOURCE
from prefect.utilities.annotations import quote

from casemill.flows import _artifacts as artifacts
from casemill.flows._logging import not_user_error
from casemill.flows._runtime import code_fingerprint, default_task_runner
from casemill.generators.stage import (  # noqa: F401 - llm_target, merge: their old home
    ExpandOutcome,
    ExpandPlan,
    ExpandRequest,
    expand_part,
    finish_expand,
    inputs_fingerprint,
    llm_target,
    merge,
    plan_expand,
)
from casemill.text import count

SUMMARY_FIGURES = (
    "seeds",
    "attempts",
    "generated",
    "accepted",
    "near_duplicates",
    "rejected_by_reason",
    "diversity",
)


@task(name="expand-batch", cache_policy=INPUTS + TASK_SOURCE, persist_result=True)
def expand_batch(
    seeds: str,
    start: int,
    stop: int,
    known_fingerprint: str,
    corpus_dir: str | None,
    config: dict[str, Any],
    seed: int,
    code: str,
    llm: str | None = None,
) -> Any:
    """Expand seeds [start, stop) of `seeds`, knowing every seed and the corpus
    (`casemill.generators.stage.expand_part`). The inputs are small (paths, fingerprints), so
    the cache key is cheap and Prefect walks no cases; `code` changes with the library's code.
    `llm` names the endpoint the LLM-backed operators use (`llm_target`), None to skip them."""
    from casemill.generators import ExpandConfig

    config_model = ExpandConfig.model_validate(config)
    return expand_part(seeds, start, stop, known_fingerprint, corpus_dir, config_model, seed, llm)


@task(
    name="write-candidates",
    retries=2,
    retry_delay_seconds=1,
    retry_condition_fn=not_user_error,
    cache_policy=NO_CACHE,
)
def write_outputs(request: ExpandRequest, plan: ExpandPlan, results: list[Any]) -> ExpandOutcome:
    """Near-duplicates across batches removed; the candidates, rejects and summary written."""
    return finish_expand(request, plan, results)


@flow(name="expand-corpus", task_runner=default_task_runner())
def expand_corpus(
    seeds: str = "seeds",
    out: str = "candidates/expanded.jsonl",
    corpus_dir: str | None = "corpus",
    chains: list[str] | None = None,
    per_seed: int = 2,
    quotas: dict[str, int] | None = None,
    dedup_threshold: float = 0.9,
    seed: int = 0,
    batch_size: int = 25,
    llm: bool = False,
) -> dict[str, Any]:
    """Expand the seeds into candidates (review pending) written to `out`; `llm` adds the
    LLM-backed chains (as `casemill expand --llm`), run against the endpoint configured on the
    worker."""
    request = ExpandRequest(
        seeds=seeds, out=out, corpus=corpus_dir, chains=tuple(chains or ()), per_seed=per_seed,
        seed=seed, quotas=quotas or {}, dedup_threshold=dedup_threshold, llm=llm,
        batch_size=batch_size, caller="flow",
    )  # fmt: skip
    plan = plan_expand(request, warn=_warn)  # checked before any work, as `casemill expand` does
    logger = get_run_logger()
    _log_plan(logger, plan)
    progress = artifacts.ProgressArtifact(len(plan.batches), "seed batches expanded")
    config, code = plan.config.model_dump(mode="json"), code_fingerprint("casemill.generators")
    futures = [
        expand_batch.submit(
            seeds, start, stop, plan.fingerprint, corpus_dir, config, seed, code, plan.llm
        )
        for start, stop in plan.batches
    ]
    results = []
    for future in futures:
        results.append(future.result())
        progress.advance()
    outcome = write_outputs(request, quote(plan), quote(results))
    _publish(logger, plan, outcome, out)
    paths = {name: str(path) for name, path in outcome.paths.items()}
    return {**paths, "accepted": outcome.accepted, "summary": outcome.summary}


def _warn(label: str, text: str) -> None:
    get_run_logger().warning("%s: %s", label, text)


def _log_plan(logger: Any, plan: ExpandPlan) -> None:
    if plan.llm_note:
        logger.warning(plan.llm_note)
    elif plan.llm:
        logger.info("LLM-backed operators use %s", plan.llm)
    logger.info(
        "expanding %s in %s (%s, %s)",
        count(len(plan.seeds), "seed"),
        count(len(plan.batches), "batch", "batches"),
        count(len(plan.config.all_chains()), "chain"),
        count(len({c.id for c in [*plan.corpus, *plan.seeds]}), "known case"),
    )


def _publish(logger: Any, plan: ExpandPlan, outcome: ExpandOutcome, out: str) -> None:
    """The run's messages in its log (the LLM note was said before the batches ran), the
    summary as a table artifact, and where the candidates are."""
    summary = outcome.summary
    for message in summary.get("messages", []):
        if message != plan.llm_note:
            logger.warning(message)
    artifacts.table(
        "expand-summary",
        [{"figure": k, "value": json.dumps(summary.get(k))} for k in SUMMARY_FIGURES],
        f"{outcome.accepted} candidates from {outcome.seeds} seeds",
    )
    logger.info("%s written to %s", count(outcome.accepted, "candidate"), out)
