"""The expand stage: seeds (and a corpus) in; candidates, rejects and a summary written.

`run_expand(request)` is what `casemill expand` calls; the `expand-corpus` flow calls the same
pieces, one Prefect task a batch: `plan_expand` checks the inputs and cuts the seeds into
batches, `expand_part` expands one batch knowing every seed and the corpus (so no candidate
duplicates them), and `finish_expand` removes near-duplicates across batches, in batch order,
and writes the three files. `run_expand` is those three pieces in a row, so the command and the
flow give the same files for the same batches. Without a `batch_size` the seeds are one batch:
what `casemill expand` has always done.

Example:
    >>> outcome = run_expand(ExpandRequest(seeds=Path("seeds"), out=Path("x.jsonl")))
    ... # doctest: +SKIP
    >>> outcome.accepted, outcome.paths["summary"]  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.generators.expand import (
    DETERMINISTIC_CHAINS,
    ExpandConfig,
    ExpandResult,
    expand,
    parse_chain,
)
from casemill.generators.seeds import (
    check_outputs,
    check_quotas,
    check_threshold,
    expand_outputs,
    load_seeds,
    seed_rejections,
)
from casemill.generators.summary import coverage, diversity
from casemill.io.jsonl import atomic_write_jsonl, atomic_write_text

log = logging.getLogger(__name__)

Caller = Literal["cli", "flow"]
Progress = Callable[[int, int], None]
Warn = Callable[[str, str], None]

# how each caller names the settings, for the errors: the command's options, the flow's parameters
_NAMES: dict[str, dict[str, str]] = {
    "cli": {
        "out": "-o",
        "threshold": "--dedup-threshold",
        "quota": "--quota",
        "corpus": "--corpus",
    },
    "flow": {
        "out": "out",
        "threshold": "dedup_threshold",
        "quota": "quotas",
        "corpus": "corpus_dir",
    },
}


@dataclass(frozen=True)
class ExpandRequest:
    """Everything an expansion reads and writes, and its knobs. `chains` empty means the
    deterministic chains; `batch_size` None expands the seeds as one batch; `caller` says how
    the errors name the settings (`--quota` for the command, `quotas` for the flow)."""

    seeds: Path | str  # kept as given: the rejects name the seed files under it
    out: Path | str
    corpus: Path | str | None = None
    chains: tuple[str, ...] = ()
    per_seed: int = 2
    seed: int = 0
    quotas: Mapping[str, int] = field(default_factory=dict)
    dedup_threshold: float = 0.9
    llm: bool = False
    strict: bool = False
    batch_size: int | None = None
    caller: Caller = "cli"

    def config(self) -> ExpandConfig:
        return ExpandConfig(
            chains=self.chains or DETERMINISTIC_CHAINS,
            per_seed=self.per_seed,
            quotas=dict(self.quotas),
            dedup_threshold=self.dedup_threshold,
            llm=self.llm,
            strict_lints=self.strict,
        )


@dataclass(frozen=True)
class ExpandPlan:
    """The checked inputs of a run: the valid seeds, the skipped ones' findings, the corpus, the
    batches (`[start, stop)` of the seeds), the endpoint the LLM-backed operators use (`llm`,
    see `llm_target`) and why they will be skipped (`llm_note`), and the inputs' fingerprint."""

    config: ExpandConfig
    seeds: tuple[Case, ...]
    skipped: tuple[Any, ...]
    corpus: tuple[Case, ...]
    batches: tuple[tuple[int, int], ...]
    fingerprint: str
    llm: str | None = None
    llm_note: str | None = None


@dataclass(frozen=True)
class ExpandOutcome:
    """What an expansion wrote: the counts, the paths and the summary (as in NAME.summary.json)."""

    seeds: int
    accepted: int
    summary: dict[str, Any]
    paths: dict[str, Path]


def plan_expand(request: ExpandRequest, *, warn: Warn | None = None) -> ExpandPlan:
    """Check every input before any work (each `UserError` names the setting and what to do),
    read the seeds (each skipped one is passed to `warn`) and the corpus, and cut the batches."""
    names = _NAMES[request.caller]
    check_threshold(request.dedup_threshold, names["threshold"])
    files = expand_outputs(request.out)
    targets = {names["out"]: files["candidates"], "rejects": files["rejects"]}
    check_outputs(request.seeds, request.corpus, {**targets, "summary": files["summary"]})
    fingerprint = inputs_fingerprint(str(request.seeds), _str(request.corpus))
    seeds, skipped, corpus = _inputs(
        str(request.seeds), _str(request.corpus), fingerprint, names["corpus"]
    )
    for finding in skipped:
        (warn or _log_warning)("skipped seed", str(finding))
    check_quotas(dict(request.quotas), list(seeds), names["quota"])
    _check_sizes(request)
    size = request.batch_size or len(seeds)
    config = request.config()
    target, note = llm_target(config)
    return ExpandPlan(
        config=config,
        seeds=seeds,
        skipped=skipped,
        corpus=corpus,
        batches=tuple((start, start + size) for start in range(0, len(seeds), size)),
        fingerprint=fingerprint,
        llm=target,
        llm_note=note,
    )


def _check_sizes(request: ExpandRequest) -> None:
    if request.batch_size is None:
        if request.per_seed < 1:
            raise UserError(f"per_seed ({request.per_seed}) must be at least 1")
    elif request.per_seed < 1 or request.batch_size < 1:
        raise UserError(
            f"per_seed ({request.per_seed}) and batch_size ({request.batch_size}) "
            "must be at least 1"
        )


def _log_warning(label: str, text: str) -> None:
    log.warning("%s: %s", label, text)


def _str(path: Path | str | None) -> str | None:
    return None if path is None else str(path)


def expand_part(
    seeds: str,
    start: int,
    stop: int,
    fingerprint: str,
    corpus_dir: str | None,
    config: ExpandConfig,
    seed: int,
    llm: str | None = None,
    *,
    corpus_option: str = "corpus_dir",
    progress: Progress | None = None,
) -> ExpandResult:
    """Expand seeds [start, stop) of `seeds`, knowing the corpus and every other seed (the
    batch's own are known to `expand`). The inputs are small (paths, the fingerprint of what
    they hold, `inputs_fingerprint`), so a task cached on them is cheap to key; the seeds and
    the corpus are read once a process for a fingerprint. `llm` names the endpoint of the
    LLM-backed operators (`llm_target`), None to skip them; the client is built here, from the
    settings, so the key never travels with the batch."""
    from casemill.llm import LLMEndpoint

    seed_cases, _, corpus = _inputs(seeds, corpus_dir, fingerprint, corpus_option)
    known = [*corpus, *seed_cases[:start], *seed_cases[stop:]]
    endpoint = LLMEndpoint.from_settings() if llm else None
    return expand(
        list(seed_cases[start:stop]),
        config,
        seed,
        existing=known,
        endpoint=endpoint,
        progress=progress,
    )


def finish_expand(request: ExpandRequest, plan: ExpandPlan, results: list[Any]) -> ExpandOutcome:
    """Merge the batches' results (`merge`), add the seeds skipped on reading, and write the
    candidates, the rejects and the summary beside `request.out`."""
    candidates, rejects, summary = merge(results, list(plan.seeds), plan.config.dedup_threshold)
    rejects = [*seed_rejections(list(plan.skipped)), *rejects]
    summary["seeds_skipped"] = summary.get("seeds_skipped", 0) + len(plan.skipped)
    paths = expand_outputs(request.out)
    atomic_write_jsonl(paths["candidates"], (c.model_dump(mode="json") for c in candidates))
    atomic_write_jsonl(paths["rejects"], (r.as_dict() for r in rejects))
    text = json.dumps(summary, indent=1, sort_keys=True) + "\n"
    atomic_write_text(paths["summary"], [text])
    return ExpandOutcome(
        seeds=len(plan.seeds), accepted=len(candidates), summary=summary, paths=paths
    )


def run_expand(
    request: ExpandRequest, *, progress: Progress | None = None, warn: Warn | None = None
) -> ExpandOutcome:
    """Check, expand batch by batch and write: `casemill expand` in one call. `progress(done,
    total)` is called after each seed; `warn(label, text)` is told each skipped seed."""
    plan = plan_expand(request, warn=warn)
    results = []
    for start, stop in plan.batches:
        tick = None if progress is None else _offset(progress, start, len(plan.seeds))
        results.append(
            expand_part(
                str(request.seeds),
                start,
                stop,
                plan.fingerprint,
                _str(request.corpus),
                plan.config,
                request.seed,
                plan.llm,
                corpus_option=_NAMES[request.caller]["corpus"],
                progress=tick,
            )  # fmt: skip
        )
    return finish_expand(request, plan, results)


def _offset(progress: Progress, start: int, total: int) -> Progress:
    return lambda done, _: progress(start + done, total)


def llm_target(config: ExpandConfig) -> tuple[str | None, str | None]:
    """`(target, note)`: `target` is `MODEL at BASE_URL` of the configured endpoint when a chain
    of `config` needs an LLM (no key in it: it becomes a task input), else None; `note` says why
    the LLM-backed operators will be skipped, when they will."""
    from casemill.errors import EndpointNotConfigured
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
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"


@lru_cache(maxsize=1)  # a run's batches share their inputs
def _inputs(
    seeds: str, corpus_dir: str | None, fingerprint: str, corpus_option: str = "corpus_dir"
) -> tuple[tuple[Case, ...], tuple[Any, ...], tuple[Case, ...]]:
    """The valid seeds, the skipped seeds' findings and the corpus's cases, read and checked
    once a process for the inputs `fingerprint` names (`inputs_fingerprint`), not once a batch:
    every batch of a run needs all of them."""
    seed_cases, skipped = load_seeds(seeds)
    return tuple(seed_cases), tuple(skipped), tuple(_corpus_cases(corpus_dir, corpus_option))


def _corpus_cases(corpus_dir: str | None, option: str) -> list[Case]:
    """The corpus's cases (none without `corpus_dir`); a folder that is not a corpus is refused:
    read as an empty corpus, a mistyped path would fill the review queue with the corpus's own
    cases again."""
    from casemill.corpus import existing_store

    return existing_store(corpus_dir, option).cases() if corpus_dir else []


def inputs_fingerprint(seeds: str, corpus_dir: str | None) -> str:
    """What the expansion reads: the seed files' bytes and the corpus's latest manifest."""
    digest = hashlib.sha256()
    root = Path(seeds)
    files = sorted(root.rglob("*.jsonl*")) if root.is_dir() else [root] if root.exists() else []
    for path in files:  # a missing path reads as nothing here: `load_seeds` says what is wrong
        digest.update(path.name.encode() + path.read_bytes())
    if corpus_dir and Path(corpus_dir, "manifests").is_dir():
        for path in sorted(Path(corpus_dir, "manifests").glob("v*.json")):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def merge(
    results: list[Any], seeds: list[Case], threshold: float
) -> tuple[list[Case], list[Any], dict[str, Any]]:
    """Candidates of all batches, near-duplicates across batches removed, with merged counts.
    The diversity is measured against the seeds `expand` expanded (valid, one a content id),
    and the messages are kept once each, in the order the batches gave them: so one batch
    merges to what `expand` summarised."""
    from casemill.dedup import NearDuplicateIndex

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
    totals["diversity"] = diversity(_expanded_seeds(seeds, results), kept)
    totals["messages"] = list(dict.fromkeys(totals.get("messages", [])))
    return kept, rejects, totals


def _expanded_seeds(seeds: list[Case], results: list[Any]) -> list[Case]:
    """The seeds `expand` went on to expand: one a content id, sorted by it, without those its
    gate refused (`ExpandResult.skipped_seeds`)."""
    refused = {r.parent_id for result in results for r in result.skipped_seeds}
    good: dict[str, Case] = {}
    for case in sorted(seeds, key=lambda c: c.id):
        if case.id not in refused:
            good.setdefault(case.id, case)
    return list(good.values())


def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if isinstance(b, dict):
        return {k: _add(a.get(k), v) for k, v in b.items()} | {
            k: v for k, v in a.items() if k not in b
        }
    if isinstance(b, list | int | float):
        return a + b
    return b
