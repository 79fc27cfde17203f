"""Casemill's own log formats, as the `casemill.log_formats` entry points name them.

Each is a `LogFormat` (`casemill.mining.parsers.LogFormat`): `parse` reads one file; a format
whose records may go on into the next file of a run also says what it carries from file to file
(`carried`) and whether the run's files need to be read in one stream (`spans_files`). The
parsers are imported on first use, so naming a format costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from casemill.mining.model import Conversation, Quarantined


class OpenAIJsonl:
    """`openai-jsonl`: a conversation a line (`messages`), or a model call a line, joined into
    conversations across the files of a run."""

    def parse(self, path: Path, **options: Any) -> Iterator[Conversation | Quarantined]:
        from casemill.mining.parsers.openai_jsonl import parse

        return parse(path, **options)

    def carried(self) -> dict[str, Any]:
        from casemill.mining.parsers.model_calls import CallJoiner

        return {"calls": CallJoiner()}

    def spans_files(self, paths: Iterable[Path]) -> bool:
        from casemill.mining.parsers.model_calls import holds_calls

        return any(map(holds_calls, paths))


class Transcript:
    """`transcript`: plain-text chat transcripts, one speaker a line."""

    def parse(self, path: Path, **options: Any) -> Iterator[Conversation | Quarantined]:
        from casemill.mining.parsers.transcript import parse

        return parse(path, **options)


class CsvTickets:
    """`csv`: support tickets a row, columns mapped by `--csv-mapping`."""

    def parse(self, path: Path, **options: Any) -> Iterator[Conversation | Quarantined]:
        from casemill.mining.parsers.csv_tickets import parse

        return parse(path, **options)


class Otel:
    """`otel`: OpenTelemetry GenAI spans, a trace a conversation, across the files of a run."""

    def parse(self, path: Path, **options: Any) -> Iterator[Conversation | Quarantined]:
        from casemill.mining.parsers.otel import parse

        return parse(path, **options)

    def carried(self) -> dict[str, Any]:
        from casemill.mining.parsers.otel import Carry

        return {"carry": Carry()}

    def spans_files(self, paths: Iterable[Path]) -> bool:
        return True
