"""Log parsers, one a format. Each is `parse(path, *, max_turns, progress, **options)` yielding
`Conversation`s and `Quarantined` records in file order, in constant memory.

A format is a `LogFormat` plugin: `--format NAME` names a `casemill.log_formats` entry point
(Casemill's own in `casemill.mining.parsers.formats`, declared in its `pyproject.toml`; a
package adds one the same way, see docs/plugins.md).

The records of some formats may go on from one file into the next (`spans_files`): OTel
traces, conversations of model calls. Their parser takes what it carries across the files of a
run (`carried`) by keyword, and what is still open after the last file is mined then
(`finish_carried`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from casemill import plugins
from casemill.errors import UserError
from casemill.mining.model import Conversation, Quarantined

Parser = Callable[..., Iterator[Conversation | Quarantined]]
PLUGIN_KIND = "log_format"
BUILT_IN_ORDER = ("openai-jsonl", "transcript", "csv", "otel")


class LogFormat(Protocol):
    """What a `casemill.log_formats` entry point names. `parse(path, *, max_turns, progress,
    **options)` yields the file's `Conversation`s and `Quarantined` records in file order (and
    takes, and ignores, options meant for other formats, such as `csv_mapping`).

    Optional: `carried()`, the objects (by keyword) the parser takes to go on from one file of
    a run into the next, each with `finish(max_turns)` yielding what is still open after the
    last file; `spans_files(paths)`, whether a record may go on from one of these files into
    the next (the run then reads them in one stream)."""

    def parse(self, path: Path, **options: Any) -> Iterator[Conversation | Quarantined]: ...


class _Names(Sequence[str]):
    """The names `--format` takes, read from the registry when asked: Casemill's in their
    usual order, then those installed packages add."""

    def _names(self) -> tuple[str, ...]:
        names = plugins.names(PLUGIN_KIND)
        ours = [n for n in BUILT_IN_ORDER if n in names]
        return (*ours, *(n for n in names if n not in ours))

    def __getitem__(self, index):  # type: ignore[override]
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in plugins.names(PLUGIN_KIND)

    def __repr__(self) -> str:
        return repr(self._names())


FORMATS: Sequence[str] = _Names()


def get_format(fmt: str) -> LogFormat:
    """The log format called `fmt` (a `UserError` naming the known ones otherwise)."""
    found = plugins.find(PLUGIN_KIND, fmt)
    if found is None:
        raise UserError(f"unknown log format {fmt!r}; known: {', '.join(FORMATS)}")
    return found


def get_parser(fmt: str) -> Parser:
    return get_format(fmt).parse


def carried(fmt: str) -> dict[str, Any]:
    """What the parser of `fmt` carries from one file of a run to the next, by keyword: the
    OTel traces (`carry`) or the conversations of model calls (`calls`) still open; nothing
    for the formats whose records end in their file."""
    make = getattr(get_format(fmt), "carried", None)
    return make() if make is not None else {}


def finish_carried(state: dict[str, Any], max_turns: int) -> Iterator[Conversation | Quarantined]:
    """What `state` (`carried`) holds open after the run's last file."""
    for key, value in state.items():
        if key == "calls":
            from casemill.mining.parsers.openai_jsonl import finish

            yield from finish(value, max_turns)
        elif callable(getattr(value, "finish", None)):
            yield from value.finish(max_turns)


def spans_files(paths: Iterable[Path], fmt: str) -> bool:
    """Whether a trace or a conversation of these files may go on from one file into the next
    (a rotated file splits it): OTel spans, and logs of model calls (told by their first
    records, `holds_calls`)."""
    spans = getattr(get_format(fmt), "spans_files", None)
    return bool(spans(paths)) if spans is not None else False


__all__ = [
    "FORMATS",
    "LogFormat",
    "Parser",
    "carried",
    "finish_carried",
    "get_format",
    "get_parser",
    "spans_files",
]
