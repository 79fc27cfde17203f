"""The `expand-corpus` flow: seeds (and the corpus) into validated, deduplicated candidates.

Seeds are cut into batches, one task a batch, each a call of the library's `casemill.generators.expand`
cached on its inputs and the code (expansion is deterministic: same seeds, config and seed give
the same candidates). Every batch knows all seeds and the corpus, so no candidate duplicates
them; a final merge removes near-duplicates across batches in batch order and writes the
candidates, the rejects and the summary. Quotas (`--quota`) apply per batch.

The LLM-backed operators (`llm=true`, or an LLM chain in `chains`) use the endpoint configured
where the flow runs (`CASEMILL_LLM_BASE_URL`, `CASEMILL_LLM_MODEL`, `CASEMILL_LLM_API_KEY`, as
`casemill expand --llm`); without one they are skipped and the run logs why. The key never
leaves the worker's environment: a batch task is told the model and the endpoint's address
(its cache key then changes with them) and builds its client from the settings itself.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import INPUTS, NO_CACHE, TASK_SOURCE
from prefect.utilities.annotations import quote

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.flows import _artifacts as artifacts
from casemill.flows._logging import not_user_error
from casemill.flows._runtime import code_fingerprint, default_task_runner
from casemill.generators.seeds import (
    check_outputs,
    check_quotas,
    check_threshold,
    expand_outputs,
    load_seeds,
    seed_rejections,
)
from casemill.io.jsonl import atomic_write_jsonl, atomic_write_text
from casemill.text import count


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
    """Expand seeds [start, stop) of `seeds`, knowing every seed and the corpus. The inputs are
    small (paths, fingerprints), so the cache key is cheap and Prefect walks no cases. `llm`
    names the endpoint the LLM-backed operators use (see `llm_target`), None to skip them."""
    from casemill.generators import ExpandConfig, expand
    from casemill.llm import LLMEndpoint

    seed_cases, known = _inputs(seeds, corpus_dir, known_fingerprint)
    endpoint = LLMEndpoint.from_settings() if llm else None
    return expand(
        list(seed_cases[start:stop]),
        ExpandConfig.model_validate(config),
        seed,
        existing=known,
        endpoint=endpoint,
    )


def llm_target(config: Any) -> tuple[str | None, str | None]:
    """`(target, note)`: `target` is `MODEL at BASE_URL` of the configured endpoint when a chain
    of `config` needs an LLM (no key in it: it becomes a task input), else None; `note` says why
    the LLM-backed operators will be skipped, when they will."""
    from casemill.errors import EndpointNotConfigured
    from casemill.generators import parse_chain
    from casemill.llm import LLMEndpoint

    if not any(s.needs_llm for c in config.all_chains() for s in parse_chain(c)):
        return None, None
    try:
        endpoint = LLMEndpoint.from_settings()
    except EndpointNotConfigured as exc:
        return None, f"LLM-backed operators skipped: {exc}"
    return f"{endpoint.model} at {_address(endpoint.base_url)}", None


def _address(url: str) -> str:
    """`url` without a user, password or query string, which may carry a credential."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


@lru_cache(maxsize=1)  # a run's batches share their inputs
def _inputs(
    seeds: str, corpus_dir: str | None, fingerprint: str
) -> tuple[tuple[Case, ...], tuple[Case, ...]]:
    """The valid seeds and every known case (corpus and seeds), read and checked once a process
    for the inputs `fingerprint` names (`inputs_fingerprint`), not once a batch: every batch
    task of a run needs all of them."""
    seed_cases, _ = load_seeds(seeds)
    return tuple(seed_cases), (*_corpus_cases(corpus_dir), *seed_cases)


def _corpus_cases(corpus_dir: str | None) -> list[Case]:
    """The corpus's cases (none without `corpus_dir`); a folder that is not a corpus is refused,
    as `casemill expand --corpus` refuses it: read as an empty corpus, a mistyped path would
    fill the review queue with the corpus's own cases again."""
    from casemill.corpus import existing_store

    return existing_store(corpus_dir, "corpus_dir").cases() if corpus_dir else []


def inputs_fingerprint(seeds: str, corpus_dir: str | None) -> str:
    """What the expansion reads: the seed files' bytes and the corpus's latest manifest."""
    digest = hashlib.sha256()
    root = Path(seeds)
    for path in sorted(root.rglob("*.jsonl*")) if root.is_dir() else [root]:
        digest.update(path.name.encode() + path.read_bytes())
    if corpus_dir and Path(corpus_dir, "manifests").is_dir():
        for path in sorted(Path(corpus_dir, "manifests").glob("v*.json")):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def merge(
    results: list[Any], seeds: list[Case], threshold: float
) -> tuple[list[Case], list[Any], dict[str, Any]]:
    """Candidates of all batches, near-duplicates across batches removed, with merged counts."""
    from casemill.dedup import NearDuplicateIndex
    from casemill.generators.summary import coverage, diversity

    index = NearDuplicateIndex(threshold=threshold, fold_case=False)  # as generators.quality
    kept: list[Case] = []
    rejects: list[Any] = []
    totals: dict[str, Any] = {}
    cross_batch = 0
    for result in results:
        rejects += [*result.skipped_seeds, *result.rejections]
        for case in result.candidates:
            if index.check_and_add(case) is None:
                kept.append(case)
            else:
                cross_batch += 1
        for key, value in result.summary.as_dict().items():
            totals[key] = _add(totals.get(key), value)
    totals["accepted"] = len(kept)
    totals["near_duplicates"] = totals.get("near_duplicates", 0) + cross_batch
    totals["coverage"] = coverage(kept)
    totals["diversity"] = diversity(seeds, kept)
    totals["messages"] = sorted(set(totals.get("messages", [])))
    return kept, rejects, totals


def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if isinstance(b, dict):
        return {k: _add(a.get(k), v) for k, v in b.items()} | {
            k: v for k, v in a.items() if k not in b
        }
    if isinstance(b, list):
        return a + b
    if isinstance(b, int | float):
        return a + b
    return b


@task(
    name="write-candidates",
    retries=2,
    retry_delay_seconds=1,
    retry_condition_fn=not_user_error,
    cache_policy=NO_CACHE,
)
def write_outputs(
    candidates: list[Case], rejects: list[Any], summary: dict[str, Any], out: str
) -> dict[str, str]:
    out_path = Path(out)
    stem = out_path.name.removesuffix(".jsonl")
    rejects_path = out_path.with_name(stem + ".rejects.jsonl")
    summary_path = out_path.with_name(stem + ".summary.json")
    atomic_write_jsonl(out_path, (c.model_dump(mode="json") for c in candidates))
    atomic_write_jsonl(rejects_path, (r.as_dict() for r in rejects))
    atomic_write_text(summary_path, [json.dumps(summary, indent=1, sort_keys=True) + "\n"])
    return {"candidates": str(out_path), "rejects": str(rejects_path), "summary": str(summary_path)}


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
    from casemill.generators import DETERMINISTIC_CHAINS, ExpandConfig

    outputs = expand_outputs(out)  # checked before any work, as `casemill expand` does
    check_outputs(
        seeds,
        corpus_dir,
        {
            "out": outputs["candidates"],
            "rejects": outputs["rejects"],
            "summary": outputs["summary"],
        },
    )
    seed_cases, skipped = load_seeds(seeds)
    check_threshold(dedup_threshold, "dedup_threshold")  # as `casemill expand` checks them
    check_quotas(quotas or {}, seed_cases, "quotas")
    if per_seed < 1 or batch_size < 1:
        raise UserError(f"per_seed ({per_seed}) and batch_size ({batch_size}) must be at least 1")
    corpus = _corpus_cases(corpus_dir)  # a corpus_dir that is no corpus: refused here
    logger = get_run_logger()
    for finding in skipped:
        logger.warning("skipped seed: %s", finding)
    config = ExpandConfig(
        chains=tuple(chains or DETERMINISTIC_CHAINS),
        per_seed=per_seed,
        quotas=quotas or {},
        dedup_threshold=dedup_threshold,
        llm=llm,
    )
    target, note = llm_target(config)
    if note:
        logger.warning(note)
    elif target:
        logger.info("LLM-backed operators use %s", target)
    starts = list(range(0, len(seed_cases), batch_size))
    logger.info(
        "expanding %s in %s (%s, %s)",
        count(len(seed_cases), "seed"),
        count(len(starts), "batch", "batches"),
        count(len(config.all_chains()), "chain"),
        count(len({c.id for c in [*corpus, *seed_cases]}), "known case"),
    )
    progress = artifacts.ProgressArtifact(len(starts), "seed batches expanded")
    known_fp = inputs_fingerprint(seeds, corpus_dir)
    code = code_fingerprint("casemill.generators")
    futures = [
        expand_batch.submit(
            seeds,
            start,
            start + batch_size,
            known_fp,
            corpus_dir,
            config.model_dump(mode="json"),
            seed,
            code,
            target,
        )
        for start in starts
    ]
    results = []
    for future in futures:
        results.append(future.result())
        progress.advance()
    candidates, rejects, summary = merge(results, seed_cases, dedup_threshold)
    rejects = [*seed_rejections(skipped), *rejects]
    summary["seeds_skipped"] = summary.get("seeds_skipped", 0) + len(skipped)
    paths = write_outputs(quote(candidates), quote(rejects), summary, out)
    for message in summary.get("messages", []):
        if message != note:  # said already, before the batches ran
            logger.warning(message)
    artifacts.table(
        "expand-summary",
        [
            {"figure": k, "value": json.dumps(summary.get(k))}
            for k in (
                "seeds",
                "attempts",
                "generated",
                "accepted",
                "near_duplicates",
                "rejected_by_reason",
                "diversity",
            )
        ],
        f"{len(candidates)} candidates from {len(seed_cases)} seeds",
    )
    logger.info("%s written to %s", count(len(candidates), "candidate"), out)
    return {**paths, "accepted": len(candidates), "summary": summary}
