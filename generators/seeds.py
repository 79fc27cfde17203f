"""Loading the seeds an expansion starts from."""

from __future__ import annotations

from pathlib import Path

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.validation.findings import Finding
from generators.quality import Rejection


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
    from casemill.validation.loading import expand_paths
    from mining.output import check_targets

    inputs = [Path(p) for p in (seeds, corpus) if p is not None and Path(p).exists()]
    # quiet: the seeds' loader warns of an empty seed folder; an empty corpus is a valid one
    files = expand_paths(inputs, quiet=True)
    check_targets(files, targets, inputs="an input (seed or corpus file)")
