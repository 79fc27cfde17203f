"""The project's exceptions: one base, a few subclasses.

`UserError` (and its subclasses) carry a message written for the person at the keyboard; the CLI
prints it as is and exits non-zero. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class CasemillError(Exception):
    """Base of every error Casemill raises on purpose."""


class UserError(CasemillError):
    """Something the user can fix; the message says what and how."""


class RecordError(UserError):
    """One bad record in an input file: names the file, the line and the field."""

    def __init__(self, file: str, line: int | None, field: str | None, message: str):
        self.file = file
        self.line = line
        self.field = field
        self.message = message
        where = file if line is None else f"{file}:{line}"
        at = f" field '{field}'" if field else ""
        super().__init__(f"{where}:{at} {message}".replace(": ", ": ", 1))

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "field": self.field, "message": self.message}


class EndpointNotConfigured(UserError):
    """An LLM-backed feature was asked for but no OpenAI-compatible endpoint is configured."""
