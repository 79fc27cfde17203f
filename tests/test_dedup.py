"""Near-duplicate detection: the signature is the hash of its definition (whatever parts of the
cases are remembered), shingles are character 3-grams, and variants are kept or dropped by the
signature-and-text rule."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from casemill.case.ids import canonical_json
from casemill.case.model import Case, Environment, derive
from casemill.dedup import NearDuplicateIndex, case_signature, shingles
from tests.conftest import ROOT
from tests.generators.conftest import run_op


def _signature_by_definition(case: Case) -> str:
    e = case.expected
    sig = {
        "domain": case.domain,
        "outcome": e.outcome,
        "calls": sorted(canonical_json(c.model_dump(mode="json")) for c in e.tool_calls),
        "forbidden": sorted(canonical_json(c.model_dump(mode="json")) for c in e.forbidden_calls),
        "faults": [f.model_dump(mode="json") for f in case.environment.faults],
        "state": case.environment.state,
    }
    return hashlib.sha256(canonical_json(sig).encode()).hexdigest()[:16]


def _seeds() -> list[Case]:
    lines = (ROOT / "seeds" / "support.jsonl").read_text(encoding="utf-8").splitlines()
    return [Case.model_validate(json.loads(line)) for line in lines if line.strip()]


def test_signature_is_the_hash_of_its_definition_for_seeds_and_variants():
    ops = [
        "keyboard_typo",
        "swap_order_id",
        "flip_not_delivered",
        "inject_customer",
        "fault_lookup_transient",
        "blend_new_order",
    ]
    cases = _seeds()[:12]
    for seed_case in list(cases):
        for name in ops:
            cases.extend(run_op(name, seed_case, 1))
    assert len(cases) > 30
    for case in cases:
        assert case_signature(case) == _signature_by_definition(case)


def test_signature_of_a_state_that_is_not_its_own_dump():
    case = _seeds()[0]
    state = {**case.environment.state, "extra": (1, 2.0), "flag": None}
    data = case.model_dump(mode="json", exclude={"id", "environment"})
    odd = Case.model_validate({**data, "environment": Environment(state=state)})
    assert odd.environment.state["extra"] == (1, 2.0)
    assert case_signature(odd) == _signature_by_definition(odd)
    assert case_signature(odd) == case_signature(
        derive(case, environment={"state": {**case.environment.state, "extra": [1, 2]}})
    )


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30) | st.text(alphabet="ab cé", max_size=12))
def test_shingles_are_the_character_trigrams(text):
    want = (
        {text.encode()}
        if len(text) <= 3
        else {text[i : i + 3].encode() for i in range(len(text) - 2)}
    )
    assert shingles(text) == want


def test_same_words_are_duplicates_only_with_the_same_signature():
    seed_case, faulted = next(
        (c, out[0]) for c in _seeds() if (out := run_op("fault_lookup_transient", c, 1))
    )
    index = NearDuplicateIndex()
    index.add(seed_case)
    e = seed_case.expected
    reworded = derive(
        seed_case, expected=e.model_copy(update={"reply_excludes": (*e.reply_excludes, "as an AI")})
    )
    assert reworded.id != seed_case.id
    assert index.check_and_add(reworded) == seed_case.id  # same words, same signature
    assert index.check_and_add(faulted) is None  # same words, other faults
    assert index.check_and_add(faulted) == faulted.id


def test_a_threshold_of_one_keeps_all_but_the_same_text():
    seed = _seeds()[0]
    recased = run_op("casing", seed, 1)[0]  # the same words: case_text folds the case
    typo = run_op("keyboard_typo", seed, 1)[0]
    for threshold in (0.99, 1.0):
        index = NearDuplicateIndex(threshold=threshold)
        assert index.check_and_add(seed) is None
        assert index.check_and_add(recased) == seed.id
        assert index.check_and_add(typo) is None


def test_a_threshold_of_one_never_takes_a_different_text_for_the_same():
    # A long tool result makes two typos a Jaccard of about 0.98, which MinHash's 128 values
    # can estimate as 1.0: '1: identical text only' must compare the texts themselves.
    seed = next(s for s in _seeds() if "W1067 is being shipped" in s.customer_text)
    turns = [
        t.model_copy(update={"content": t.content.replace("need", "neeg").replace("being", "bing")})
        if "W1067 is being shipped" in t.content
        else t
        for t in seed.conversation
    ]
    typo = derive(seed, conversation=turns)
    index = NearDuplicateIndex(threshold=1.0, fold_case=False)
    assert index.check_and_add(seed) is None
    assert index.check_and_add(typo) is None
    same_text = derive(typo, expected=typo.expected.model_copy(update={"reference_reply": "ok"}))
    assert same_text.id != typo.id and index.check_and_add(same_text) == typo.id
