"""A validation finding: what is wrong, where (file, line, field), by which rule and layer."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Layer = Literal["json", "model", "schema", "semantic", "batch", "lint"]
Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    layer: Layer
    rule: str
    message: str
    field: str | None = None
    file: str | None = None
    line: int | None = None
    case_id: str | None = None
    severity: Severity = "error"

    def located(self, file: str | None, line: int | None) -> Finding:
        return Finding(**{**asdict(self), "file": file, "line": line})

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        where = ":".join(str(x) for x in (self.file, self.line) if x is not None)
        at = f" field '{self.field}'" if self.field else ""
        tag = "warning" if self.severity == "warning" else "error"
        return f"{where or '<input>'}:{at} {tag} [{self.layer}/{self.rule}] {self.message}"
