"""The committed support seeds: they parse, validate, replay, follow the support conventions,
cover every intent and outcome, and are exactly what the builder produces."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from pathlib import Path

import pytest

from casemill.case.model import Case
from casemill.domains import get_domain
from casemill.domains.support.state import SupportState
from casemill.io.jsonl import read_jsonl
from casemill.replay import replay
from casemill.validation import lint_findings, load_cases
from casemill.validation.semantic import semantic_findings

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "seeds" / "support.jsonl"
BUILDER = ROOT / "scripts" / "build_seeds.py"
SYSTEM = re.compile(r"^Authenticated customer: (C\d{4}) \(([^,()]+), ([a-z.]+@example\.com)\)$")
WRITES = get_domain("support").write_tools


def _load_builder():
    spec = importlib.util.spec_from_file_location("build_seeds", BUILDER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def builder():
    return _load_builder()


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    out = []
    for line in read_jsonl(SEEDS):
        assert line.error is None, f"{line.file}:{line.number}: {line.error}"
        out.append(Case.model_validate(line.value))
    return out


def _state(case: Case) -> SupportState:
    return SupportState.parse(case.environment.state)


def _writes(case: Case) -> list:
    return [c for c in case.expected.tool_calls if c.tool in WRITES]


def test_file_holds_at_least_48_cases_with_unique_sorted_ids(cases):
    ids = [c.id for c in cases]
    assert len(cases) >= 48
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
    assert all(re.fullmatch(r"c_[0-9a-f]{20}", i) for i in ids)


def test_every_case_passes_semantic_validation_and_replay(cases):
    for case in cases:
        assert semantic_findings(case) == [], case.provenance.notes
        result = replay(case)
        assert result.ok, (case.provenance.notes, result.problems)


def test_every_case_passes_the_loading_layers():
    result = load_cases([SEEDS])
    assert result.records == len(result.cases) >= 48
    assert result.findings == []


def test_every_case_passes_the_lints():
    for line in read_jsonl(SEEDS):
        case = Case.model_validate(line.value)
        assert lint_findings(case) == [], (line.number, case.provenance.notes)


@pytest.mark.slow  # the first Great Expectations run in a process imports it (~20 s)
def test_every_layer_of_casemill_validate_passes_in_strict_mode():
    from casemill.validation import validate_paths

    report = validate_paths([SEEDS], strict=True, batch=True)
    assert report.ok and report.batch_checked
    assert report.findings == [] and report.bad == []
    assert len(report.valid) == report.records >= 48


def test_refund_writes_change_the_state_by_the_line_item_totals(cases):
    for case in [c for c in cases if any(w.tool == "refund_items" for w in _writes(c))]:
        before, after = _state(case), SupportState.parse(replay(case).final_state)
        for call in _writes(case):
            if call.tool != "refund_items":
                continue
            order = before.orders[call.params["order_id"]]
            want = call.params.get("amount") or sum(
                i.price * i.quantity for i in order.items if i.item_id in call.params["item_ids"]
            )
            assert f"{want:.2f}" in case.expected.reply_contains, case.provenance.notes
            assert "refund" in case.expected.reply_contains
            new = after.orders[order.id].refunds[len(order.refunds) :]
            assert [round(r.amount, 2) for r in new if r.item_ids == call.params["item_ids"]] == [
                round(want, 2)
            ]


def test_conversations_follow_the_conventions(cases):
    for case in cases:
        first, *rest = case.conversation
        match = SYSTEM.match(first.content)
        assert first.role == "system" and match, first.content
        customer = _state(case).customers[match.group(1)]
        assert (customer.name, customer.email) == (match.group(2), match.group(3))
        if case.user_scenario:
            assert rest == []
        else:
            assert rest[0].role == "customer" and rest[-1].role == "customer"
        pending: set[str] = set()
        for turn in rest:
            if turn.role == "tool":
                assert turn.tool_call_id in pending
                pending.discard(turn.tool_call_id)
            pending |= {c.id for c in turn.tool_calls}
        assert not pending


def test_ids_follow_the_conventions(cases):
    for case in cases:
        state = _state(case)
        assert all(re.fullmatch(r"C\d{4}", c) for c in state.customers)
        for order in state.orders.values():
            assert re.fullmatch(r"W\d{4}", order.id)
            assert [i.item_id for i in order.items] == [
                f"I{n}" for n in range(1, len(order.items) + 1)
            ]
            assert all(
                re.fullmatch(r"P\d{3}-[A-Za-z0-9]+-[a-z]+", i.variant_id) for i in order.items
            )
        for product in state.products.values():
            assert re.fullmatch(r"P\d{3}", product.id)


def test_customers_never_state_what_a_lookup_should_fetch(cases):
    for case in cases:
        text = (case.customer_text + " " + (case.user_scenario or "")).lower()
        for order in _state(case).orders.values():
            for item in order.items:
                for value in {item.price, item.total}:
                    assert f"{value:.2f}" not in text, (case.provenance.notes, value)


def test_outcomes_have_their_phrases_and_no_wrong_writes(cases):
    vocabulary = {"refuse": "cannot", "escalate": "human"}
    for case in cases:
        outcome, labels = case.expected.outcome, case.tags.labels
        if outcome in vocabulary:
            assert vocabulary[outcome] in case.expected.reply_contains
        if outcome == "clarify" or "clarify" in labels:
            assert outcome == "clarify" and "clarify" in labels and not _writes(case)
            assert any(f.any_write for f in case.expected.forbidden_calls)
        if outcome == "refuse":
            assert not _writes(case) and case.expected.forbidden_calls
        assert case.expected.reply_contains, case.provenance.notes


def test_review_and_provenance_mark_hand_written_seeds(cases):
    for case in cases:
        assert case.provenance.origin == "seed" and case.provenance.notes
        assert (case.review.status, case.review.reviewer) == ("approved", "casemill-seeds")
        assert case.tags.category in {"capability", "robustness", "adversarial", "efficiency"}
        assert case.tags.intents


def test_optimal_steps_count_reads_writes_and_the_reply(cases):
    for case in cases:
        assert case.expected.optimal_steps >= len(_writes(case)) + 1


def test_coverage_of_intents_and_outcomes(cases):
    counts = Counter((c.tags.intents[0], c.expected.outcome) for c in cases)
    wanted = {
        ("refund", "resolve"): 10,
        ("refund", "refuse"): 3,
        ("refund", "clarify"): 4,
        ("cancel", "resolve"): 3,
        ("cancel", "refuse"): 2,
        ("cancel", "clarify"): 1,
        ("change_address", "resolve"): 3,
        ("change_address", "refuse"): 2,
        ("exchange", "resolve"): 3,
        ("exchange", "refuse"): 2,
        ("escalate", "escalate"): 3,
        ("status", "resolve"): 3,
    }
    for key, least in wanted.items():
        assert counts[key] >= least, (key, counts[key])


def test_coverage_of_the_required_situations(cases):
    labels = Counter(label for c in cases for label in c.tags.labels)
    assert labels["user_scenario"] >= 6
    assert labels["multi_turn"] >= 6
    assert labels["other_customers"] >= 4
    assert labels["partial"] >= 2 and labels["multi_item"] >= 2
    assert labels["ambiguous_order"] >= 2 and labels["ambiguous_item"] >= 2
    partial = [c for c in cases if "partial" in c.tags.labels]
    assert all(_writes(c)[0].params.get("amount") for c in partial)
    two_items = [
        c for c in cases if any(len(w.params.get("item_ids", [])) == 2 for w in _writes(c))
    ]
    assert len(two_items) >= 2
    refused_cancels = {
        _state(c).orders[f.params["order_id"]].status
        for c in cases
        if c.expected.outcome == "refuse"
        for f in c.expected.forbidden_calls
        if f.tool == "cancel_order"
    }
    assert {"shipped", "delivered"} <= refused_cancels
    assert len({c.conversation[0].content for c in cases}) >= 40


def test_builder_is_deterministic_and_the_committed_file_is_fresh(builder, tmp_path):
    first, second = tmp_path / "a" / "support.jsonl", tmp_path / "b" / "support.jsonl"
    builder.write_seeds(first)
    builder.write_seeds(second)
    assert first.read_bytes() == second.read_bytes() == SEEDS.read_bytes()


def test_builder_check_mode_reports_a_stale_file(builder, tmp_path, capsys):
    stale = tmp_path / "support.jsonl"
    stale.write_text(SEEDS.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    assert builder.main(["--check", "--out", str(stale)]) == 1
    assert "stale" in capsys.readouterr().out
    assert builder.main(["--check", "--out", str(SEEDS)]) == 0


def test_a_seed_that_contradicts_the_policy_is_refused(builder):
    from seedlib.make import seed
    from seedlib.world import order, world

    from casemill.domains.support.policy import Intent, cancel_call

    env = world("C1001", order("W1001", "C1001", "shipped", "P100-OS-blue"))
    with pytest.raises(ValueError, match="policy decides 'refuse'"):
        seed(
            "C1001",
            env,
            "cancel W1001",
            title="wrong",
            intents=["cancel"],
            calls=[cancel_call("W1001")],
            policy=Intent("cancel", "W1001"),
        )


def test_reference_replies_hold_the_required_phrases_and_none_excluded(cases):
    for case in cases:
        reply = (case.expected.reference_reply or "").lower()
        assert reply, case.provenance.notes
        for phrase in case.expected.reply_contains:
            assert phrase.lower() in reply, (case.provenance.notes, phrase)
        for phrase in case.expected.reply_excludes:
            assert phrase.lower() not in reply, (case.provenance.notes, phrase)


def test_customers_name_items_by_a_word_of_their_name(cases):
    for case in cases:
        text = (case.customer_text + " " + (case.user_scenario or "")).lower()
        state = _state(case)
        for call in _writes(case):
            item_ids = call.params.get("item_ids") or [call.params.get("item_id")]
            for item_id in filter(None, item_ids):
                name = state.orders[call.params["order_id"]].item(item_id).name.lower()
                words = [
                    w
                    for w in re.findall(r"[a-z]+", name.split(" (")[0])
                    if len(w) >= 3 and w != "set"
                ]
                assert any(w in text for w in words), (case.provenance.notes, name)


def test_summary_counts_seeds_per_intent_and_outcome(builder, cases, capsys):
    assert builder.main(["--summary"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["intent", "resolve", "clarify", "refuse", "escalate", "total"]
    rows = {line.split()[0]: [int(n) for n in line.split()[1:]] for line in table[1:-1]}
    assert sum(r[-1] for r in rows.values()) == len(cases)
    refunds = Counter(c.expected.outcome for c in cases if c.tags.intents[0] == "refund")
    assert rows["refund"][:4] == [refunds[o] for o in ("resolve", "clarify", "refuse", "escalate")]
    assert table[-1].startswith(f"{len(cases)} seeds; labels:")
