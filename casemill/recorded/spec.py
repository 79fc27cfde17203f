"""What `recorded:LOG` names: the log, how to read it and how mining redacted it.

    recorded:logs/support.jsonl                  # openai-jsonl, redacted with seed 0
    recorded:logs/support.jsonl?seed=3           # mined with `casemill mine --seed 3`
    recorded:logs/support.jsonl?redact=off       # mined with `casemill mine --no-redact`
    recorded:traces/spans.jsonl?format=otel      # any `--format` that logs tool calls
    recorded:tickets.csv?csv-mapping=map.json    # csv (the default for a `.csv` file)
    recorded:logs/support.jsonl?names-model=en_core_web_sm   # mined with --names-model

Options follow a `?`, joined by `&`, with the names and values `casemill mine` takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl

from casemill.errors import UserError

OPTIONS = ("format", "seed", "redact", "csv-mapping", "names-model")
ON, OFF = ("on", "yes", "true", "1"), ("off", "no", "false", "0")
NO_CALLS = ("transcript",)  # formats whose logs show tool results but not the calls


@dataclass(frozen=True)
class LogSpec:
    """A recorded agent's log: its file, format, redaction (as the mine run had it)."""

    path: Path
    fmt: str = "openai-jsonl"
    seed: int = 0
    redact: bool = True
    csv_mapping: Path | None = None
    names_model: str | None = None  # the named-entity layer of redaction (`--names-model`)

    @property
    def options(self) -> str:
        """The options as the spec writes them, defaults left out."""
        out = [] if self.fmt == default_format(self.path) else [f"format={self.fmt}"]
        out += [f"seed={self.seed}"] if self.seed else []
        out += [] if self.redact else ["redact=off"]
        out += [f"csv-mapping={self.csv_mapping}"] if self.csv_mapping else []
        out += [f"names-model={self.names_model}"] if self.names_model else []
        return "&".join(out)


def default_format(path: Path) -> str:
    """`csv` for a `.csv` file (compressed or not), else `openai-jsonl`."""
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    return "csv" if suffixes[-1:] == [".csv"] else "openai-jsonl"


def parse_spec(rest: str) -> LogSpec:
    """The `LogSpec` of `recorded:REST`; `UserError` saying what to write when it is not one."""
    where, _, query = rest.partition("?")
    if not where.strip():
        raise UserError(
            "recorded: needs the log the cases were mined from: recorded:LOG "
            "(e.g. recorded:logs/support.jsonl, or recorded:LOG?seed=3)"
        )
    path = Path(where.strip())
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        pairs = [("", query)]
    options = dict(pairs)
    unknown = [k for k in options if k not in OPTIONS]
    if unknown or len(options) < len(pairs):
        raise UserError(
            f"recorded:{rest}: unknown or repeated option {(unknown or [query])[0]!r}; "
            f"the options are {', '.join(o + '=' for o in OPTIONS)} joined by & "
            "(e.g. recorded:LOG?seed=3&redact=off)"
        )
    fmt = options.get("format") or default_format(path)
    _check_format(fmt)
    mapping = options.get("csv-mapping")
    if mapping and fmt != "csv":
        raise UserError(f"recorded:{rest}: csv-mapping= applies to format csv only, not {fmt}")
    return LogSpec(
        path=path,
        fmt=fmt,
        seed=_seed(options.get("seed", "0"), rest),
        redact=_switch(options.get("redact", "on"), rest),
        csv_mapping=Path(mapping) if mapping else None,
        names_model=options.get("names-model") or None,
    )


def _check_format(fmt: str) -> None:
    from casemill.mining.parsers import get_format

    get_format(fmt)  # an unknown one: a UserError naming the known formats
    if fmt in NO_CALLS:
        raise UserError(
            f"a {fmt} log shows what tools returned, not the calls the agent made: it cannot "
            "be replayed as an agent. Replay a log with tool calls (openai-jsonl, otel, csv)"
        )


def _seed(value: str, rest: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UserError(
            f"recorded:{rest}: seed={value!r} is not a whole number (the --seed of the mine "
            "run; 0 by default)"
        ) from None


def _switch(value: str, rest: str) -> bool:
    if value.lower() in ON:
        return True
    if value.lower() in OFF:
        return False
    raise UserError(
        f"recorded:{rest}: redact={value!r}: write redact=off for cases mined with "
        "--no-redact (redact=on, the default, otherwise)"
    )
