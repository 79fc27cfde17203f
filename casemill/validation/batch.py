"""The batch layer: a Great Expectations suite over a whole set of cases.

Row expectations (each failing row is mapped back to its file and line): unique ids, a
non-empty conversation or user scenario, allowed categories / outcomes / difficulties / intents,
text length bounds. Table expectations, one row a category: the share of cases that expect no
write call stays within configurable bounds (a category where every case expects no write lets
an agent that never acts score perfectly; one with none never tests restraint).

The suite needs a few scalars a case, not the case: `BatchColumns` collects them as the cases
are read (about 200 bytes a case), so a file of any size is checked without holding its cases.

Great Expectations takes seconds to import, so it is imported here only when a batch is checked,
with an ephemeral context and its progress bars off.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from casemill.case.model import CATEGORIES, OUTCOMES, Case
from casemill.domains.support.policy import INTENT_KINDS
from casemill.validation.findings import Finding

log = logging.getLogger(__name__)

DIFFICULTIES = ("easy", "medium", "hard")


class BatchRules(BaseModel):
    """Bounds of the batch suite; every one can be changed by the caller."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    categories: tuple[str, ...] = CATEGORIES
    outcomes: tuple[str, ...] = OUTCOMES
    difficulties: tuple[str, ...] = DIFFICULTIES
    intents: dict[str, tuple[str, ...]] = Field(
        default_factory=lambda: {"support": INTENT_KINDS},
        description="allowed intents per domain; domains not named here are not checked",
    )
    min_text_chars: int = Field(default=2, ge=0, description="longest customer text or scenario")
    max_turn_chars: int = Field(default=20_000, ge=1)
    max_case_chars: int = Field(default=100_000, ge=1)
    no_write_share: dict[str, tuple[float, float]] = Field(
        default_factory=lambda: {
            "capability": (0.0, 0.7),
            "robustness": (0.0, 0.9),
            "adversarial": (0.0, 1.0),
            "efficiency": (0.0, 0.9),
        },
        description="category -> (min, max) share of cases that expect no write call",
    )
    min_category_cases: int = Field(
        default=20, ge=1, description="categories with fewer cases skip the share check"
    )


@dataclass(frozen=True)
class Row:
    """Where one case of the batch came from."""

    case: Case
    file: str | None
    line: int | None


COLUMNS = (
    "id",
    "domain",
    "has_dialogue",
    "category",
    "outcome",
    "difficulty",
    "longest_text",
    "total_chars",
    "no_write",
)
_NUMBERS = {"longest_text": "q", "total_chars": "q", "no_write": "d"}
_SHARED = frozenset({"domain", "category", "outcome", "difficulty"})
_NO_LINE = -1


class BatchColumns:
    """What the suite needs of each case, and where the case is: a few scalars a case, in
    columns (strings repeated across cases held once, numbers in arrays), so that a batch of
    any size is checked without keeping its cases. `add` cases as they are read, then pass
    the columns to `batch_findings`."""

    def __init__(self) -> None:
        self.columns: dict[str, Any] = {
            name: array(_NUMBERS[name]) if name in _NUMBERS else [] for name in COLUMNS
        }
        self.files: list[str | None] = []
        self.lines = array("q")
        self.intent_rows = array("q")
        self.intent_names: list[str] = []
        self._strings: dict[str, str] = {}
        self._write_tools: dict[str, frozenset[str] | None] = {}

    @classmethod
    def of(cls, rows: Iterable[Row]) -> BatchColumns:
        columns = cls()
        for row in rows:
            columns.add(row.case, row.file, row.line)
        return columns

    def _shared(self, text: str) -> str:
        return self._strings.setdefault(text, text)

    def add(self, case: Case, file: str | None, line: int | None) -> None:
        """Append one case's row (and its intents) to the columns."""
        if case.domain not in self._write_tools:
            self._write_tools[case.domain] = _write_tools(case.domain)
        values = _row(case, self._write_tools[case.domain])
        for name in COLUMNS:
            value = values[name]
            self.columns[name].append(self._shared(value) if name in _SHARED else value)
        index = len(self.lines)
        for intent in case.tags.intents:
            self.intent_rows.append(index)
            self.intent_names.append(self._shared(intent))
        self.files.append(file if file is None else self._shared(file))
        self.lines.append(_NO_LINE if line is None else line)

    def __len__(self) -> int:
        return len(self.lines)

    def case_id(self, index: int) -> str:
        return self.columns["id"][index]

    def place(self, index: int) -> tuple[str | None, int | None]:
        """The file and line of row `index`."""
        line = self.lines[index]
        return self.files[index], None if line == _NO_LINE else line


def dialogue_texts(case: Case) -> list[str]:
    """The texts a customer-facing bound applies to: every turn but system ones, and the user
    scenario."""
    texts = [t.content for t in case.conversation if t.role != "system"]
    if case.user_scenario:
        texts.append(case.user_scenario)
    return texts


def text_lengths(case: Case) -> tuple[int, int]:
    """(the longest of `dialogue_texts`, all the text of the case, system turns too): what
    `max_turn_chars` and `max_case_chars` bound (`casemill.validation.sizes` checks them a case
    at a time)."""
    lengths = [len(t) for t in dialogue_texts(case)] or [0]
    system = sum(len(t.content) for t in case.conversation if t.role == "system")
    return max(lengths), sum(lengths) + system


def _row(case: Case, write_tools: frozenset[str] | None) -> dict[str, Any]:
    longest, total = text_lengths(case)
    return {
        "id": case.id,
        "domain": case.domain,
        "has_dialogue": any(t.strip() for t in dialogue_texts(case)),
        "category": case.tags.category,
        "outcome": case.expected.outcome,
        "difficulty": case.tags.difficulty,
        "longest_text": longest,
        "total_chars": total,
        # 1.0 / 0.0, or NaN (left out of the share) when the domain's write tools are unknown
        "no_write": float("nan")
        if write_tools is None
        else float(not any(c.tool in write_tools for c in case.expected.tool_calls)),
    }


def _write_tools(domain: str) -> frozenset[str] | None:
    """The domain's write tools, or None when it does not know them (a `generic:` domain has
    tool names only): its cases cannot be told to expect a write or not."""
    from casemill.domains import get_domain
    from casemill.errors import UserError

    try:
        return get_domain(domain).write_tools or None
    except UserError:
        return None


def build_frames(rows: Sequence[Row] | BatchColumns, rules: BatchRules) -> dict[str, Any]:
    """The pandas frames the suite runs on: one row a case, one row an intent, one a category."""
    import numpy as np
    import pandas as pd

    columns = rows if isinstance(rows, BatchColumns) else BatchColumns.of(rows)
    data = {name: values for name, values in columns.columns.items() if name not in _NUMBERS}
    for name, code in _NUMBERS.items():  # the dtypes a frame of one dict a case had
        data[name] = np.array(columns.columns[name], dtype="int64" if code == "q" else "float64")
    cases = pd.DataFrame(data, columns=list(COLUMNS)) if len(columns) else pd.DataFrame()
    domains = columns.columns["domain"]
    intents = [
        {"row": row, "intent": name}
        for row, name in zip(columns.intent_rows, columns.intent_names, strict=True)
        if domains[row] in rules.intents
    ]
    shares = []
    if len(cases):
        grouped = cases.groupby("category")["no_write"].agg(["mean", "count"])
        for category, (mean, count) in grouped.iterrows():
            low, high = rules.no_write_share.get(str(category), (0.0, 1.0))
            if count >= rules.min_category_cases:
                shares.append(
                    {
                        "category": category,
                        "share": float(mean),
                        "cases": int(count),
                        "low": low,
                        "high": high,
                    }
                )
    return {
        "cases": cases,
        "intents": pd.DataFrame.from_records(intents, columns=["row", "intent"]),
        "shares": pd.DataFrame.from_records(
            shares, columns=["category", "share", "cases", "low", "high"]
        ),
    }


def _suites(rules: BatchRules, gxe: Any) -> dict[str, list[Any]]:
    allowed_intents = sorted({i for values in rules.intents.values() for i in values})
    return {
        "cases": [
            gxe.ExpectColumnValuesToBeUnique(column="id"),
            gxe.ExpectColumnValuesToBeInSet(column="has_dialogue", value_set=[True]),
            gxe.ExpectColumnValuesToBeInSet(column="category", value_set=list(rules.categories)),
            gxe.ExpectColumnValuesToBeInSet(column="outcome", value_set=list(rules.outcomes)),
            gxe.ExpectColumnValuesToBeInSet(
                column="difficulty", value_set=list(rules.difficulties)
            ),
            gxe.ExpectColumnValuesToBeBetween(
                column="longest_text",
                min_value=rules.min_text_chars,
                max_value=rules.max_turn_chars,
            ),
            gxe.ExpectColumnValuesToBeBetween(column="total_chars", max_value=rules.max_case_chars),
        ],
        "intents": [gxe.ExpectColumnValuesToBeInSet(column="intent", value_set=allowed_intents)],
        "shares": [
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="share", column_B="low", or_equal=True
            ),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="high", column_B="share", or_equal=True
            ),
        ],
    }


# (frame, column) -> (rule, case field, message template)
_EXPLAIN = {
    ("cases", "id"): ("unique-id", "id", "id {value} appears more than once in the batch"),
    ("cases", "has_dialogue"): (
        "no-dialogue",
        "conversation",
        "no customer text and no user_scenario",
    ),
    ("cases", "category"): (
        "allowed-category",
        "tags.category",
        "category {value!r} is not one of {allowed}",
    ),
    ("cases", "outcome"): (
        "allowed-outcome",
        "expected.outcome",
        "outcome {value!r} is not one of {allowed}",
    ),
    ("cases", "difficulty"): (
        "allowed-difficulty",
        "tags.difficulty",
        "difficulty {value!r} is not one of {allowed}",
    ),
    ("cases", "longest_text"): (
        "text-length",
        "conversation",
        "longest text is {value:,} {characters}, outside {allowed}",
    ),
    ("cases", "total_chars"): (
        "text-length",
        "conversation",
        "the case holds {value:,} {characters} of text, over {allowed}",
    ),
    ("intents", "intent"): (
        "allowed-intent",
        "tags.intents",
        "intent {value!r} is not one of {allowed}",
    ),
}


def _allowed(config: Any) -> str:
    kwargs = config.kwargs
    if "value_set" in kwargs:
        return ", ".join(map(str, kwargs["value_set"]))
    return f"[{_number(kwargs.get('min_value'))}, {_number(kwargs.get('max_value'))}]"


def _number(value: Any) -> str:
    """A bound as written in a message: 20,000 (not 20000.0); None (no bound) as it is."""
    if isinstance(value, int | float) and float(value).is_integer():
        return f"{int(value):,}"
    return str(value) if value is None else f"{value:,}"


def run_suite(frames: dict[str, Any], rules: BatchRules) -> dict[str, list[tuple[Any, list[int]]]]:
    """Validate each frame with its expectations; returns frame -> [(config, failing index)]."""
    import great_expectations as gx
    import great_expectations.expectations as gxe
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    source = context.data_sources.add_pandas("casemill")
    failed: dict[str, list[tuple[Any, list[int]]]] = {}
    for name, expectations in _suites(rules, gxe).items():
        frame = frames[name]
        if frame.empty:
            continue
        definition = source.add_dataframe_asset(name).add_batch_definition_whole_dataframe("all")
        batch = definition.get_batch(batch_parameters={"dataframe": frame})
        suite = gx.ExpectationSuite(name=f"casemill-{name}", expectations=expectations)
        result = batch.validate(suite, result_format={"result_format": "COMPLETE"})
        for item in result.results:
            if not item.success:
                index = list(item.result.get("unexpected_index_list") or [])
                failed.setdefault(name, []).append((item.expectation_config, index))
    return failed


def batch_findings(
    rows: Sequence[Row] | BatchColumns, rules: BatchRules | None = None
) -> list[Finding]:
    """Findings of the batch suite, each located at its case's file and line where it has one.
    `rows`: the cases with their places, or their `BatchColumns` (all the suite needs)."""
    rules = rules or BatchRules()
    columns = rows if isinstance(rows, BatchColumns) else BatchColumns.of(rows)
    if not len(columns):
        return []
    frames = build_frames(columns, rules)
    failed = run_suite(frames, rules)
    out: list[Finding] = []
    for name, results in failed.items():
        frame = frames[name]
        for config, index in results:
            if name == "shares":
                out += _share_findings(frame, index, columns)
                continue
            column = config.kwargs["column"]
            rule, where, template = _EXPLAIN[(name, column)]
            for position in index:
                value = frame.at[position, column]
                row = int(frame.at[position, "row"]) if name == "intents" else position
                message = template.format(
                    value=value,
                    allowed=_allowed(config),
                    characters="character" if value == 1 else "characters",
                )
                file, line = columns.place(row)
                out.append(Finding("batch", rule, message, where, file, line, columns.case_id(row)))
    return sorted(out, key=lambda f: (f.file or "", f.line or 0, f.rule))


def _share_findings(frame: Any, index: list[int], columns: BatchColumns) -> list[Finding]:
    out = []
    for position in sorted(set(index)):
        rec = frame.loc[position]
        message = (
            f"{rec['share']:.0%} of the {rec['cases']} '{rec['category']}' cases expect no write "
            f"call; allowed {rec['low']:.0%}-{rec['high']:.0%} (BatchRules.no_write_share)"
        )
        first_file, _ = columns.place(0)
        out.append(Finding("batch", "no-write-share", message, "tags.category", first_file, None))
    return out
