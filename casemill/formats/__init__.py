"""Importers and exporters: bring cases from other formats in, and write them back out.

Each format is a small module with `import_X(path, ...) -> ImportResult` (the cases, plus every
bad record quarantined with located findings; good records are kept) and, where the format can
hold Casemill's cases, `export_X(cases, path) -> ExportResult`:

- `chapter`: the test-case shape of a book chapter on evaluating customer-support agents,
  `{order, conversation, expected.final_state}`;
- `companion`: that book's companion repository's `{sample_id, input, expected_function_call}`
  JSONL (both shown, with examples, in docs/formats.md);
- `tau2`: tau2-bench retail tasks with `db.json` as the environment (import only);
- `tau-bench`: tau-bench airline tasks with the `db/` folder as the environment, as `airline`
  cases (import only).

A case an export cannot hold is skipped, never bent to fit: a finding names it, with the reason
(its `rule`) and the field. The book's formats hold one order and the customer's turns as
scripted text, so conversation-level cases (a `user_scenario`: instructions for a simulated
customer) are skipped with the reason `user scenario`: as the customer's words the scenario
would hand the agent what the customer keeps back, and dropped it would change the test.
State the book's order has no place for is a reason too when the test depends on it (the
product catalogue of an exchange case, refunds already made, tool faults: see `fidelity`), and
every record is read back by the format's own importer before it is written: a record that would
be quarantined (a replay that fails) or read as another test is skipped (`round trip`).
`casemill export` counts the skipped cases by reason and prints each with the file and line it
was read from. Forbidden calls are the one part a written record may lose: neither book format
has a place for them, and their importers forbid only what the outcome's rule forbids (no write
for a refusal). Skipping every such case would drop most of an export, so the case is written
and named instead (`ExportResult.narrowed`, a warning with the calls it lost), and
`casemill export` lists each with its file and line.

Importers and exporters are Casemill plugins (`casemill.plugins`): `IMPORTERS` and `EXPORTERS`
read the `casemill.importers` and `casemill.exporters` entry points, where Casemill declares its
own and a package adds a format (`casemill import --from NAME`, `casemill export --to NAME`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from casemill import plugins
from casemill.case.model import Case
from casemill.formats.chapter import export_chapter, import_chapter
from casemill.formats.companion import export_companion, import_companion
from casemill.formats.result import (
    ExportResult,
    FieldProblem,
    ImportResult,
    Quarantined,
    write_quarantine,
)
from casemill.formats.tau2 import import_tau2
from casemill.formats.tau_bench import import_tau_bench


class Importer(Protocol):
    """What a `casemill.importers` entry point names: cases read from `path`, every bad record
    quarantined with located findings. Options (`environment`, `label`) come by keyword, and
    only those its signature names are given."""

    def __call__(self, path: str | Path, /, **options: Any) -> ImportResult: ...


class Exporter(Protocol):
    """What a `casemill.exporters` entry point names: `cases` written to `path`, a case the
    format cannot hold skipped with a finding saying why."""

    def __call__(self, cases: Iterable[Case], path: str | Path, /) -> ExportResult: ...


class _Registered(Mapping[str, Any]):
    """The importers or exporters by name, read from the plugin registry when asked."""

    def __init__(self, kind: str):
        self.kind = kind

    def __getitem__(self, name: str) -> Any:
        found = plugins.find(self.kind, name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(plugins.names(self.kind))

    def __len__(self) -> int:
        return len(plugins.names(self.kind))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in plugins.names(self.kind)


IMPORTERS: Mapping[str, Importer] = _Registered("importer")
EXPORTERS: Mapping[str, Exporter] = _Registered("exporter")

__all__ = [
    "EXPORTERS",
    "IMPORTERS",
    "ExportResult",
    "Exporter",
    "FieldProblem",
    "ImportResult",
    "Importer",
    "Quarantined",
    "export_chapter",
    "export_companion",
    "import_chapter",
    "import_companion",
    "import_tau2",
    "import_tau_bench",
    "write_quarantine",
]
