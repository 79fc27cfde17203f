"""A gate file: the TOML rules a run must satisfy to ship, parsed and checked for mistakes a
user can fix (each error names the file, the rule's line and the field). What the rules mean,
and how a run is checked against them, is in `casemill.evaluation.gate`."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from casemill.case.model import Case, Category, Difficulty, Origin, Outcome
from casemill.errors import UserError
from casemill.evaluation.scoring.registry import METRICS, pass_k_of, spec

WHERE_KEYS = (
    "origin",
    "operator",
    "category",
    "intent",
    "outcome",
    "difficulty",
    "label",
    "domain",
)


# The `where` keys whose values come from a closed list: a value outside it is a typo that would
# select no case (and an empty slice passes), so it is refused when the gate is read.
CLOSED_VALUES: dict[str, tuple[str, ...]] = {
    "origin": get_args(Origin),
    "category": get_args(Category),
    "outcome": get_args(Outcome),
    "difficulty": get_args(Difficulty),
}


class Rule(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str = "threshold"  # or a gate check a package declares (gate_checks.known_kind)
    name: str = ""
    metric: str
    # strict: a quoted bound (min = "0.9") is a mistake in the file, not a number to convert
    min: float | None = Field(default=None, strict=True)
    max: float | None = Field(default=None, strict=True)
    where: dict[str, str | list[str]] = Field(default_factory=dict)
    min_cases: int = Field(default=0, ge=0)
    args: dict[str, Any] = Field(default_factory=dict)  # for a gate check a package provides

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        from casemill.evaluation.gate_checks import known_kind

        return known_kind(value)

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, value: str) -> str:
        if pass_k_of(value) == 0:
            raise ValueError(f"{value!r}: k counts the trials that must all succeed, at least 1")
        if spec(value) is None:
            known = ", ".join(sorted(METRICS))
            raise ValueError(
                f"unknown metric {value!r}; known: {known}, judge_<criterion>, pass^<k> "
                '(for example "pass^3")'
            )
        return value

    @field_validator("min", "max")
    @classmethod
    def _reachable_bound(cls, value: float | None, info: ValidationInfo) -> float | None:
        """A bound no value can meet is a mistake in the file, not a rule that always fails: a
        ratio's bound outside 0..1 (`min = 95` meant as a percentage), a negative bound on a
        count, time, token or cost metric, `max` below `min`."""
        if value is None:
            return value
        found = spec(info.data.get("metric") or "")
        if found is not None and found.unit == "ratio" and not 0 <= value <= 1:
            raise ValueError(f"{found.name} is a ratio from 0 to 1; {value:g} is outside it")
        if found is not None and value < 0:  # counts, seconds, tokens, cost
            raise ValueError(f"{found.name} is never negative; {value:g} is below 0")
        low = info.data.get("min")
        if info.field_name == "max" and low is not None and value < low:
            raise ValueError(f"'max' {value:g} is below 'min' {low:g}: no value can pass")
        return value

    @field_validator("where")
    @classmethod
    def _known_keys(cls, value: dict) -> dict:
        unknown = sorted(set(value) - set(WHERE_KEYS))
        if unknown:
            raise ValueError(f"unknown 'where' keys {unknown}; use: {', '.join(WHERE_KEYS)}")
        empty = sorted(key for key, wanted in value.items() if wanted == [])
        if empty:
            raise ValueError(f"'where' {empty[0]} is an empty list, which selects no case")
        for key, allowed in CLOSED_VALUES.items():
            bad = sorted(wanted(value[key]) - set(allowed)) if key in value else []
            if bad:
                shown = ", ".join(repr(b) for b in bad)
                raise ValueError(f"unknown {key} {shown}; known: {', '.join(allowed)}")
        return value

    @model_validator(mode="after")
    def _check(self) -> Rule:
        if self.kind == "threshold" and self.min is None and self.max is None:
            raise ValueError("a threshold rule needs 'min' or 'max'")
        if self.kind == "no_regression" and (self.min is not None or self.max is not None):
            raise ValueError("a no_regression rule takes no 'min' or 'max'")
        if self.args and self.kind in ("threshold", "no_regression"):
            raise ValueError(f"a {self.kind} rule takes no 'args' (a check a package adds does)")
        return self

    def label(self, index: int) -> str:
        if self.name:
            return self.name
        bounds = []
        if self.min is not None:
            bounds.append(f">= {self.min:g}")
        if self.max is not None:
            bounds.append(f"<= {self.max:g}")
        what = "no regression" if self.kind == "no_regression" else " and ".join(bounds)
        if self.kind not in ("threshold", "no_regression"):
            what = " ".join([self.kind, *bounds])
        return f"rule {index + 1}: {self.metric} {what}{self.slice_text()}"

    def slice_text(self) -> str:
        if not self.where:
            return ""
        parts = []
        for key, value in self.where.items():
            values = value if isinstance(value, list) else [value]
            parts.append(f"{key} in [{', '.join(values)}]")
        return " where " + " and ".join(parts)

    def selects(self, case: Case | None) -> bool:
        if not self.where:
            return True
        if case is None:
            return False
        return all(case_values(case, key) & wanted(value) for key, value in self.where.items())


def wanted(value: str | list[str]) -> set[str]:
    return set(value) if isinstance(value, list) else {value}


def case_values(case: Case, key: str) -> set[str]:
    ops = case.provenance.operators
    return {
        "origin": lambda: {case.provenance.origin},
        "operator": lambda: {ops[-1].name if ops else "(none)"},
        "category": lambda: {case.tags.category},
        "intent": lambda: set(case.tags.intents),
        "outcome": lambda: {case.expected.outcome},
        "difficulty": lambda: {case.tags.difficulty},
        "label": lambda: set(case.tags.labels),
        "domain": lambda: {case.domain},
    }[key]()


class Gate(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = ""
    rules: tuple[Rule, ...] = ()
    lines: tuple[int, ...] = Field(default=(), description="the line of each rule's metric")


def _rule_lines(text: str) -> list[int]:
    return [
        i
        for i, line in enumerate(text.splitlines(), start=1)
        if re.match(r"\s*\[\[\s*rule\s*\]\]", line)
    ]


def _field_line(text: str, start: int, field: str) -> int:
    lines = text.splitlines()
    for number in range(start, len(lines) + 1):
        if number > start and re.match(r"\s*\[", lines[number - 1]):
            break
        if re.match(rf"\s*{re.escape(field)}\s*=", lines[number - 1]):
            return number
    return start


def parse_gate(text: str, source: str = "<gate>") -> Gate:
    """A gate from TOML text; a mistake raises `UserError` naming the file, line and field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{source}: not valid TOML: {exc}") from exc
    unknown = sorted(set(data) - {"rule"})
    if unknown:
        raise UserError(
            f"{source}: unknown top-level keys {unknown}; a gate is a list of [[rule]] tables"
        )
    raw_rules = data.get("rule", [])
    if isinstance(raw_rules, dict):
        raise UserError(
            f"{source}: 'rule' is a single table ([rule]); write each rule as [[rule]], with two "
            "brackets"
        )
    if not isinstance(raw_rules, list) or not raw_rules:
        raise UserError(f"{source}: no rules; add [[rule]] tables (see gates/default.toml)")
    starts = _rule_lines(text)
    rules, lines = [], []
    for index, raw in enumerate(raw_rules):
        start = starts[index] if index < len(starts) else 1
        try:
            rules.append(Rule.model_validate(raw))
            lines.append(_field_line(text, start, "metric"))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(rule)"
            line = _field_line(text, start, str(err["loc"][0])) if err["loc"] else start
            message = err["msg"].removeprefix("Value error, ")
            raise UserError(
                f"{source}:{line}: rule {index + 1}, field '{field}': {message}"
            ) from exc
        _unique_name(rules, source, _field_line(text, start, "name"))
    return Gate(source=source, rules=tuple(rules), lines=tuple(lines))


def _unique_name(rules: list[Rule], source: str, line: int) -> None:
    """The last rule's name, if it has one, is not an earlier rule's: a failure is reported by
    rule name, and two rules of one name could not be told apart."""
    name = rules[-1].name
    earlier = [i for i, r in enumerate(rules[:-1]) if name and r.name == name]
    if earlier:
        raise UserError(
            f"{source}:{line}: rule {len(rules)}, field 'name': {name!r} already names rule "
            f"{earlier[0] + 1}; give each rule its own name (failures are reported by name)"
        )


def load_gate(path: str | Path) -> Gate:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot read the gate file ({exc.strerror})") from exc
    return parse_gate(text, str(path))
