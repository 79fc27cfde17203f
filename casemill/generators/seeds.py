"""Loading the seeds an expansion starts from."""

from __future__ import annotations

from pathlib import Path

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.generators.quality import Rejection
from casemill.validation.findings import Finding


def load_seeds(seeds: str | Path) -> tuple[list[Case], list[Finding]]:
    """The valid seed cases of a file or folder, and the first finding of each seed that is not
    valid, located at its file, line and field (it is skipped, not expanded). A seed is valid
    when it loads (JSON, schema, model) and passes the semantic checks with the replay, the ones
    `expand` gates seeds with. A corpus folder (`cases.jsonl` and `manifests/`) gives the active
    cases of its latest version. A missing path, or no valid seed, is a `UserError`."""
    from casemill.validation import load_cases
    from casemill.validation.semantic import semantic_findings

    path = Path(seeds)
    if not path.exists():
        raise UserError(f"{seeds}: no such seed file or folder")
    if _is_corpus(path):
        return _corpus_seeds(path)
    loaded = load_cases([path])
    skipped = [bad.findings[0] for bad in loaded.bad if bad.findings]
    cases = []
    for item in loaded.cases:
        errors = [f for f in semantic_findings(item.case) if f.severity == "error"]
        if errors:
            skipped.append(errors[0].located(item.file, item.line))
        else:
            cases.append(item.case)
    if not cases:
        raise UserError(f"{seeds}: no valid seed cases (run 'casemill validate {seeds}')")
    skipped.sort(key=lambda f: (f.file or "", f.line or 0))
    return cases, skipped


def _is_corpus(path: Path) -> bool:
    return path.is_dir() and (path / "manifests").is_dir() and (path / "cases.jsonl").is_file()


def _corpus_seeds(path: Path) -> tuple[list[Case], list[Finding]]:
    """The active cases of a corpus folder's latest version: its `cases.jsonl` also keeps every
    case ever retired, which read as a plain file would be expanded too."""
    from casemill.corpus import CorpusStore

    cases = CorpusStore(path).cases()
    if not cases:
        raise UserError(f"{path}: the corpus has no active cases to expand")
    return cases, []


def seed_rejections(skipped: list[Finding]) -> list[Rejection]:
    """The rejection records of seeds `load_seeds` skipped, for the rejects file: the reason
    (`invalid_seed:RULE`), the message, and where the seed is (file, line, field)."""
    return [
        Rejection(
            chain="(seed)",
            parent_id=f.case_id or "",
            index=0,
            reason=f"invalid_seed:{f.rule}",
            detail=f.message,
            file=f.file,
            line=f.line,
            field=f.field,
        )
        for f in skipped
    ]


def expand_outputs(out: str | Path) -> dict[str, Path]:
    """The files an expansion writes for `out`: the candidates, rejects and summary."""
    out = Path(out)
    stem = out.name.removesuffix(".jsonl")
    return {
        "candidates": out,
        "rejects": out.with_name(stem + ".rejects.jsonl"),
        "summary": out.with_name(stem + ".summary.json"),
    }


def check_outputs(seeds: str | Path, corpus: str | Path | None, targets: dict[str, Path]) -> None:
    """Refuse outputs (by the option naming them) that are folders or one of the seed or corpus
    files: `-o seeds/support.jsonl` would replace the seeds with their candidates."""
    from casemill.io.targets import check_targets
    from casemill.validation.loading import expand_paths

    inputs = [Path(p) for p in (seeds, corpus) if p is not None and Path(p).exists()]
    # quiet: the seeds' loader warns of an empty seed folder; an empty corpus is a valid one
    files = expand_paths(inputs, quiet=True)
    check_targets(files, targets, inputs="an input (seed or corpus file)")


def check_quotas(quotas: dict[str, int], seeds: list[Case], name: str = "--quota") -> None:
    """Each quota names a known operator kind (`KIND` or `KIND:INTENT`) and a count of at
    least 0, and its intent is one some seed has: a typo (noise:refnd) would cap nothing,
    silently. `name` is how the caller calls the setting, in the message."""
    from casemill.generators import KINDS

    intents = sorted({i for case in seeds for i in case.tags.intents})
    for key, number in quotas.items():
        kind, _, intent = key.partition(":")
        if kind not in KINDS:
            raise UserError(
                f"{name} {key}={number}: unknown kind; known: {', '.join(KINDS)} "
                "(optionally KIND:INTENT, e.g. noise:refund=100)"
            )
        if type(number) is not int or number < 0:
            raise UserError(f"{name} {key}={number!r}: expected a whole number, at least 0")
        if intent and intent not in intents:
            raise UserError(
                f"{name} {key}={number}: no seed has the intent {intent!r}; "
                f"the seeds' intents: {', '.join(intents) or '(none)'}"
            )


def check_threshold(threshold: float, name: str = "--dedup-threshold") -> float:
    """The near-duplicate threshold is a Jaccard similarity: above 0 (0 would call every pair of
    cases with the same signature a duplicate) and at most 1."""
    if not 0 < threshold <= 1:  # NaN fails too
        raise UserError(
            f"{name} {threshold}: expected a number above 0 and at most 1, e.g. {name} 0.9"
        )
    return threshold
