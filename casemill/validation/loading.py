"""Loading case files: every line becomes a `Case` or findings located at file, line and field.

Three layers run here, in order, and a record stops at the first layer it fails:

- `json`: the line is UTF-8, valid JSON, an object, under the size limit (`casemill.io.jsonl`);
- `schema`: the raw object against `schemas/case.schema.json` (JSON Schema Draft 2020-12);
- `model`: the pydantic `Case` model (types, enums, the content id, the schema version).

Paths may be `.jsonl` / `.jsonl.gz` files or directories searched recursively (sorted). A bad
record never stops the loading and never costs the good records around it; a duplicate id is a
finding on the second record (the first is kept).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from casemill.case.model import Case
from casemill.errors import UserError
from casemill.gctune import bulk_allocation, checkpoint
from casemill.io.jsonl import Line, read_jsonl
from casemill.io.limits import field_path  # re-exported: the layers import it here
from casemill.validation.findings import Finding
from casemill.validation.schema import SchemaLayer
from casemill.validation.sizes import size_findings

if TYPE_CHECKING:
    from casemill.validation.batch import BatchRules

log = logging.getLogger(__name__)

CASE_SUFFIXES = (".jsonl", ".jsonl.gz")
# what casemill writes beside its outputs: no cases, so a folder's walk leaves them out
SIDE_SUFFIXES = tuple(
    f".{kind}{ext}" for kind in ("rejects", "quarantine") for ext in CASE_SUFFIXES
)


def case_files_in(folder: Path) -> list[Path]:
    """The case files under `folder`, recursively and sorted: `.jsonl` and `.jsonl.gz`, less the
    rejects and quarantine files casemill writes (`NAME.rejects.jsonl`, `NAME.quarantine.jsonl`),
    which hold bad records, not cases (named as a file, one is still read)."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and p.name.endswith(CASE_SUFFIXES) and not p.name.endswith(SIDE_SUFFIXES)
    )


MAX_MESSAGE = 300


@dataclass
class LoadedCase:
    """A case that passed the loading layers, with where it came from."""

    case: Case
    file: str
    line: int
    raw: bytes = b""


@dataclass
class BadRecord:
    """A record refused by some layer: its raw bytes and every reason.

    `raw_crc` is None when `raw` holds the bytes; a report that keeps no records
    (`validate_paths(..., keep_records=False)`) leaves `raw` empty and keeps their CRC-32, and
    `write_quarantine` reads them again from the file (and checks them against it)."""

    file: str
    line: int
    raw: bytes
    findings: list[Finding]
    case_id: str | None = None
    raw_crc: int | None = None


@dataclass
class LoadResult:
    files: list[str] = field(default_factory=list)
    records: int = 0
    cases: list[LoadedCase] = field(default_factory=list)
    bad: list[BadRecord] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for bad in self.bad for f in bad.findings]


def expand_paths(paths: Iterable[str | Path], *, quiet: bool = False) -> list[Path]:
    """Case files named by `paths`: files as given, directories searched recursively for
    `.jsonl` and `.jsonl.gz` files, in sorted order; a file named twice (`seeds/` and
    `seeds/support.jsonl`) is read once, or each of its cases would be its own duplicate. A
    missing path is a `UserError`; a folder with no case files is logged (unless `quiet`: a
    caller only checking paths, whose reader says so itself)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = case_files_in(path)
            if not found and not quiet:
                log.warning("%s: no .jsonl or .jsonl.gz files in this folder", path)
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            raise UserError(f"{path}: no such file or folder")
    unique: dict[Path, Path] = {}
    for path in out:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_JSON_RULES = (
    ("invalid UTF-8", "invalid-utf8"),
    ("not valid JSON", "invalid-json"),
    ("expected a JSON object", "not-object"),
    ("-byte limit", "too-large"),
    ("unreadable gzip data", "invalid-gzip"),
    ("nested over", "too-deep"),
    ("lone surrogate", "unencodable-text"),
    ("number out of range", "number-out-of-range"),
)


def json_finding(line: Line) -> Finding:
    error = line.error or "unreadable line"
    rule = next((r for key, r in _JSON_RULES if key in error), "invalid-json")
    return Finding("json", rule, error, file=line.file, line=line.number)


# Errors pydantic reports at the root (or at an object) that concern one field we can name.
_ROOT_FIELDS = (
    ("schema_version", "schema_version", "schema-version"),
    ("does not match the case's content", "id", "id-mismatch"),
    ("needs a conversation or a user_scenario", "conversation", "no-dialogue"),
    ("only assistant turns carry tool_calls", "tool_calls", "invalid"),
    ("match rules for parameters not in params", "match", "invalid"),
)

_TYPE_RULES = {
    "extra_forbidden": "unknown-field",
    "missing": "missing-field",
    "literal_error": "not-allowed",
    "enum": "not-allowed",
    "string_too_long": "too-long",
    "string_too_short": "too-short",
    "too_short": "too-short",
    "too_long": "too-long",
    "finite_number": "not-finite",
}


def _model_rule(err_type: str) -> str:
    if err_type in _TYPE_RULES:
        return _TYPE_RULES[err_type]
    if err_type.endswith(("_type", "_parsing")):
        return "wrong-type"
    if err_type.startswith(("greater_than", "less_than")):
        return "out-of-range"
    return "invalid"


def model_findings(exc: ValidationError, file: str, line: int) -> list[Finding]:
    """Findings for a pydantic `ValidationError`, one per error, with dotted field paths."""
    out = []
    for err in exc.errors(include_url=False, include_input=False, include_context=False):
        path = field_path(err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        rule = _model_rule(err["type"])
        for needle, name, root_rule in _ROOT_FIELDS:
            if needle in message:
                path = f"{path}.{name}" if path else name
                rule = root_rule if root_rule != "invalid" else rule
                break
        if err["type"] == "extra_forbidden":
            message = "unknown field (not part of the case model; remove it or check its spelling)"
        out.append(Finding("model", rule, clip(message), field=path or None, file=file, line=line))
    return out


def case_id_of(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"]:
        return value["id"]
    return None


@dataclass
class Loader:
    """Turns raw lines into cases or bad records; remembers ids seen for duplicate checks.
    A model-valid case over the text bounds of `rules` (the defaults unless given) is refused
    here, as every command that loads cases refuses it (`casemill.validation.sizes`)."""

    schema: SchemaLayer | None = None
    seen: dict[str, tuple[str, int]] = field(default_factory=dict)
    rules: BatchRules | None = None

    def load_line(self, line: Line) -> LoadedCase | BadRecord:
        if line.error is not None:
            return BadRecord(line.file, line.number, line.raw, [json_finding(line)])
        value = line.value
        if self.schema is not None:
            problems = self.schema.findings(value, line.file, line.number)
            if problems:
                return BadRecord(line.file, line.number, line.raw, problems, case_id_of(value))
        try:
            case = Case.model_validate(value)
        except ValidationError as exc:
            found = model_findings(exc, line.file, line.number)
            return BadRecord(line.file, line.number, line.raw, found, case_id_of(value))
        oversize = [f.located(line.file, line.number) for f in size_findings(case, self.rules)]
        if oversize:
            return BadRecord(line.file, line.number, line.raw, oversize, case.id)
        first = self.seen.get(case.id)
        if first is not None:
            message = f"duplicate id {case.id}: first seen at {first[0]}:{first[1]} (kept there)"
            finding = Finding(
                "batch", "duplicate-id", message, "id", line.file, line.number, case.id
            )
            return BadRecord(line.file, line.number, line.raw, [finding], case.id)
        self.seen[case.id] = (line.file, line.number)
        return LoadedCase(case, line.file, line.number, line.raw)


def iter_records(paths: Iterable[str | Path]) -> Iterator[Line]:
    for path in expand_paths(paths):
        yield from read_jsonl(path)


def load_cases(paths: Iterable[str | Path], *, schema: bool = True) -> LoadResult:
    """Load every case in `paths` (files or folders) through the json, schema and model layers.

    Never raises for bad content: each bad line becomes a `BadRecord` with findings naming its
    file, line and field. Raises `UserError` only for a path that does not exist."""
    files = expand_paths(paths)
    loader = Loader(schema=SchemaLayer.default() if schema else None)
    result = LoadResult(files=[str(p) for p in files])
    with bulk_allocation():
        for path in files:
            for line in read_jsonl(path):
                result.records += 1
                checkpoint(result.records)
                item = loader.load_line(line)
                if isinstance(item, LoadedCase):
                    result.cases.append(item)
                else:
                    result.bad.append(item)
    log.info("loaded %d cases, %d bad records", len(result.cases), len(result.bad))
    return result
