"""Invariant noise: same seed same output, protected slots untouched, expected unchanged,
every output valid."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casemill.case.model import Case
from casemill.generators import apply_operator, get_operator
from casemill.generators.slots import (
    case_literals,
    case_protector,
    protected_pattern,
    rewrite_unprotected,
)
from tests.generators.conftest import cases, checked_outputs

NOISE = [
    "keyboard_typo",
    "ocr_noise",
    "char_noise",
    "spelling_noise",
    "slang",
    "paraphrase",
    "filler",
    "casing",
]
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _slots(case):
    pattern = protected_pattern(case_literals(case))
    return Counter(
        m for t in case.conversation if t.role == "customer" for m in pattern.findall(t.content)
    )


@SETTINGS
@given(case=cases(), name=st.sampled_from(NOISE), seed=st.integers(0, 2**31))
def test_noise_keeps_expected_and_slots_and_is_deterministic(case, name, seed):
    for new in checked_outputs(name, case, seed):
        assert new.expected == case.expected
        assert new.environment == case.environment
        before, after = _slots(case), _slots(new)
        assert all(after[slot] >= n for slot, n in before.items()), (before, after)


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,.'", min_size=1, max_size=40)
slots = st.sampled_from(
    [
        "W1234",
        "#W1001",
        "14.50",
        "$120.00",
        "ana.diaz@example.com",
        "mug",
        "Ceramic mug 12oz",
        "Springfield",
        "cracked",
        "not",
    ]
)


@SETTINGS
@given(
    parts=st.lists(st.tuples(words, slots), min_size=1, max_size=5),
    name=st.sampled_from(NOISE[:4]),
    seed=st.integers(0, 2**31),
)
def test_rewrite_never_alters_a_protected_slot(parts, name, seed):
    text = " ".join(f"{w} {s}" for w, s in parts)
    pattern = protected_pattern(["Ceramic mug 12oz", "mug", "Springfield", "cracked", "not"])
    from casemill.generators.framework import candidate_rng
    from casemill.generators.noise import _augmenter, _nlpaug

    kind = {
        "keyboard_typo": "keyboard",
        "ocr_noise": "ocr",
        "char_noise": "char",
        "spelling_noise": "spelling",
    }[name]
    aug = _augmenter(kind, 0.5, "swap" if kind == "char" else "")
    new = rewrite_unprotected(text, pattern, _nlpaug(aug, candidate_rng(seed, "t", name, 0)))
    assert Counter(pattern.findall(new)) >= Counter(pattern.findall(text))
    for _, slot in parts:
        assert slot in new


@pytest.mark.slow
def test_spelling_noise_does_not_depend_on_the_hash_seed(refund_case):
    code = (
        "import sys, json\n"
        "from tests.generators.conftest import support_case\n"
        "from casemill.generators import apply_operator, get_operator\n"
        "c = support_case('refund', 'delivered', second_item=True)\n"
        "out = apply_operator(get_operator('spelling_noise'), c, seed=1, index=0, "
        "args={'p': 0.6})\n"
        "print(out[0].conversation[1].content)\n"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": h},
        ).stdout
        for h in ("1", "2")
    }
    assert len(runs) == 1
    assert runs.pop().strip() != refund_case.conversation[1].content


def test_noise_edits_text_and_changes_category_to_robustness(refund_case):
    out = apply_operator(
        get_operator("keyboard_typo"), refund_case, seed=3, index=0, args={"p": 0.5}
    )[0]
    assert out.customer_text != refund_case.customer_text
    assert out.tags.category == "robustness"
    assert "W1001" in out.customer_text and "mug" in out.customer_text


def test_filler_goes_between_clauses_never_inside_an_address():
    """Street, city and zip are protected each; the comma between them is not a clause end."""
    from tests.generators.conftest import support_case

    case = support_case("change_address", "pending")
    for seed in range(12):
        (out,) = apply_operator(
            get_operator("filler"), case, seed=seed, index=0, args={"inserts": 4}
        )
        assert "12 Oak St, Springfield 62701" in out.customer_text, out.customer_text


def test_case_protector_is_shared_per_case_and_finds_the_spans_of_its_literals(refund_case):
    protector = case_protector(refund_case)
    assert case_protector(refund_case) is protector
    fresh = protected_pattern(case_literals(refund_case))
    for turn in refund_case.conversation:
        spans = protector.spans(turn.content)
        assert spans == fresh.spans(turn.content)
        spans.clear()  # callers get their own list
        assert protector.spans(turn.content) == fresh.spans(turn.content)


def _calendar_case(text: str) -> Case:
    """A case of a domain Casemill has no pack for: tool names only, no state."""
    return Case.model_validate(
        {
            "domain": "generic:calendar",
            "conversation": [{"role": "customer", "content": text}],
            "expected": {
                "tool_calls": [
                    {
                        "tool": "reschedule_meeting",
                        "params": {"meeting_id": "M-4411", "start": "Thursday 10:00"},
                    }
                ],
                "forbidden_calls": [{"tool": "delete_meeting", "params": {"meeting_id": "M-4411"}}],
                "outcome": "resolve",
                "reply_contains": ["Thursday"],
                "optimal_steps": 1,
            },
            "tags": {"category": "capability", "intents": ["reschedule"]},
            "provenance": {"origin": "seed"},
        }
    )


@pytest.mark.parametrize("name", NOISE)
def test_noise_applies_to_a_case_of_a_generic_domain(name):
    case = _calendar_case(
        "Please would you move my weekly meeting with the design team to "
        "Thursday 10am, meeting id M-4411, thank you so much for helping"
    )
    outs = [new for seed in range(4) for new in checked_outputs(name, case, seed)]
    assert outs, f"{name} made nothing of a generic case"
    for new in outs:
        assert new.expected == case.expected and new.domain == case.domain
        assert "M-4411" in new.customer_text and "Thursday" in new.customer_text
    assert any(new.customer_text != case.customer_text for new in outs)


@pytest.mark.parametrize("name", NOISE)
def test_noise_keeps_the_values_of_a_generic_cases_records(name):
    """Outside the support domain the environment's records are unknown to the pack: the names
    and values they hold (an attendee, a room) are protected in the customer's text too."""
    case = _calendar_case(
        "Hi, this is Dana Whitfield. Please move my weekly meeting in the Orchid room to "
        "Thursday 10am, meeting id M-4411, thank you so much for helping me with this"
    )
    state = {"meetings": {"M-4411": {"organiser": "Dana Whitfield", "room": "Orchid"}}}
    case = Case.model_validate(
        {**case.model_dump(mode="json"), "id": "", "environment": {"state": state}}
    )
    outs = [new for seed in range(6) for new in checked_outputs(name, case, seed)]
    assert outs, f"{name} made nothing of a generic case"
    for new in outs:
        assert "Dana Whitfield" in new.customer_text and "Orchid" in new.customer_text


def test_expand_says_only_noise_applies_to_a_domain_without_a_contract():
    from casemill.generators import ExpandConfig, expand

    case = _calendar_case("Please move my meeting to Thursday 10am, meeting id M-4411.")
    result = expand([case], ExpandConfig(chains=("keyboard_typo", "swap_order_id")), 0)
    assert {c.provenance.operators[-1].name for c in result.candidates} == {"keyboard_typo"}
    assert result.summary.messages == [
        "seeds of domains without a contract (generic:calendar): only the noise operators "
        "apply to them, to their customer turns or scenario (the others need a pack's "
        "contract: docs/domains.md)"
    ]


def test_a_number_keeps_its_unit_and_a_time_its_half_of_the_day():
    from casemill.generators.slots import protected_pattern

    found = protected_pattern([]).findall("leave after 8am, back by 9 pm or 10 p.m., a 12oz cup")
    assert found == ["8am", "9 pm", "10 p.m.", "12oz"]
