"""An export carries a case faithfully or skips it with the reason: never a record its own
importer would quarantine or read as another test."""

from __future__ import annotations

from pathlib import Path

import pytest

from casemill.case.matching import EXACT
from casemill.case.model import Case
from casemill.formats import export_chapter, export_companion, import_chapter, import_companion
from casemill.formats.cases_io import load_cases
from casemill.replay import replay

EXCHANGES = (  # the seeds whose expected call exchanges an item (the audit's repro)
    "c_3f444001f69146e051b4",
    "c_5c6bab0cd5db7899d6d4",
    "c_8e200694abc9b03e7bf2",
    "c_9bc9d70f67eefe06ec7a",
)
FORMATS = [(export_chapter, import_chapter), (export_companion, import_companion)]


@pytest.fixture(scope="module")
def seeds(root: Path) -> dict[str, Case]:
    cases, bad = load_cases(root / "seeds" / "support.jsonl")
    assert not bad
    return {c.id: c for c in cases}


def _changed(case: Case, **changes: object) -> Case:
    data = case.model_dump(mode="json")
    data.pop("id")  # recomputed for the new content
    return Case.model_validate({**data, **changes})


def _calls(case: Case, rules_of: Case | None = None) -> list[tuple[str, dict]]:
    """The expected calls, without the parameters any value matches in `rules_of` (default: the
    case itself): a refund's reason and an escalation's summary, which the formats do not hold."""
    rules = (rules_of or case).expected.tool_calls
    return [
        (c.tool, {k: v for k, v in c.params.items() if r.match.get(k, EXACT).kind != "any"})
        for c, r in zip(case.expected.tool_calls, rules, strict=True)
    ]


@pytest.mark.parametrize(("export", "_import"), FORMATS)
def test_an_exchange_is_skipped_for_the_catalogue_the_format_cannot_hold(
    seeds: dict[str, Case], tmp_path: Path, export, _import
) -> None:
    cases = [seeds[i] for i in EXCHANGES]
    result = export(cases, tmp_path / "out.jsonl")
    assert result.written == 0
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8") == ""
    assert [(f.case_id, f.rule, f.field) for f in result.skipped] == [
        (i, "product catalogue", "environment.state.products") for i in EXCHANGES
    ]
    fmt = result.format
    assert result.skipped[0].message.startswith(
        f"the {fmt} format has no place for the product catalogue (products P108, P110, with "
        "their variants) this exchange case is decided on"
    )


@pytest.mark.parametrize(("export", "import_"), FORMATS)
def test_every_written_seed_reads_back_with_its_calls_and_replays(
    seeds: dict[str, Case], tmp_path: Path, export, import_
) -> None:
    out = tmp_path / "out.jsonl"
    result = export(list(seeds.values()), out)
    back = import_(out)
    assert result.written > 0
    assert (back.read, len(back.cases), len(back.quarantined)) == (
        result.written,
        result.written,
        0,
    )
    skipped = {f.case_id for f in result.skipped}
    written = [c for c in seeds.values() if c.id not in skipped]
    for original, again in zip(written, back.cases, strict=True):
        assert again.expected.outcome == original.expected.outcome
        assert _calls(again, rules_of=original) == _calls(original)
        assert replay(again).ok


def test_refunds_already_made_are_order_history_the_format_cannot_hold(
    seeds: dict[str, Case], tmp_path: Path
) -> None:
    case = seeds["c_498df65d4e37d70287e4"]  # refused: the mug was already refunded
    result = export_chapter([case], tmp_path / "out.jsonl")
    assert result.written == 0
    (finding,) = result.skipped
    assert (finding.case_id, finding.rule, finding.field) == (
        case.id,
        "order history",
        "environment.state.orders.W1021.refunds",
    )
    assert finding.message.startswith(
        "the chapter format's order has no place for the 1 refunds already made on order W1021"
    )


@pytest.mark.parametrize(("export", "_import"), FORMATS)
def test_tool_faults_are_not_dropped(
    seeds: dict[str, Case], tmp_path: Path, export, _import
) -> None:
    status = seeds["c_06af9a3b8158b1f71159"]  # one order, one get_order call
    faulty = _changed(
        status,
        environment={
            **status.environment.model_dump(mode="json"),
            "faults": [{"tool": "get_order", "kind": "timeout"}],
        },
    )
    assert export([status], tmp_path / "ok.jsonl").written == 1
    result = export([faulty], tmp_path / "out.jsonl")
    assert result.written == 0
    assert [(f.case_id, f.rule, f.field) for f in result.skipped] == [
        (faulty.id, "tool faults", "environment.faults")
    ]
    assert "(get_order timeout)" in result.skipped[0].message


@pytest.mark.parametrize(("export", "_import"), FORMATS)
def test_a_record_its_importer_would_quarantine_is_skipped(
    seeds: dict[str, Case], tmp_path: Path, export, _import
) -> None:
    """The general guard: the customer id is synthesised again on import (C1001), so a call that
    names the case's own customer id would no longer find it."""
    status = seeds["c_06af9a3b8158b1f71159"]
    lookup = _changed(
        status,
        expected={
            **status.expected.model_dump(mode="json"),
            "tool_calls": [{"tool": "get_customer", "params": {"customer_id": "C1038"}}],
        },
    )
    assert replay(lookup).ok
    result = export([lookup], tmp_path / "out.jsonl")
    assert result.written == 0
    (finding,) = result.skipped
    assert (finding.case_id, finding.rule) == (lookup.id, "round trip")
    assert finding.message == (
        f"the {result.format} importer would not read the exported record back as this case: "
        "customer 'C1038' is not in the environment"
    )


@pytest.mark.parametrize(("export", "import_"), FORMATS)
def test_a_case_written_without_its_forbidden_calls_is_named_with_them(
    seeds: dict[str, Case], export, import_, tmp_path: Path
) -> None:
    """The book's formats hold no forbidden calls (their importers forbid what the outcome's
    rule does): every case written whose read-back lost some is named with exactly those, and
    no other case is."""
    result = export(list(seeds.values()), tmp_path / "out.jsonl")
    back = import_(tmp_path / "out.jsonl")
    assert not back.quarantined and len(back.cases) == result.written

    def key(call) -> tuple:  # noqa: ANN001
        return (call.tool, call.any_write, sorted(dict(call.params).items(), key=str))

    skipped = {f.case_id for f in result.skipped}
    written = [c for c in seeds.values() if c.id not in skipped]
    lost = {}
    for case, again in zip(written, back.cases, strict=True):
        kept = [key(c) for c in again.expected.forbidden_calls]
        gone = [c for c in case.expected.forbidden_calls if key(c) not in kept]
        if gone:
            lost[case.id] = gone
    assert lost  # the seeds forbid amounts and other orders' writes, which no format holds
    assert {f.case_id for f in result.narrowed} == set(lost)
    for finding in result.narrowed:
        assert (finding.severity, finding.rule, finding.field) == (
            "warning",
            "forbidden calls",
            "expected.forbidden_calls",
        )
        gone = lost[finding.case_id]
        assert f"no place for {len(gone)} forbidden call" in finding.message
        for call in gone[:3]:
            assert (call.tool or "any write") in finding.message
