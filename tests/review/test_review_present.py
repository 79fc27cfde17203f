"""What a reviewer sees: changes ordered input-first, calls and tags diffed whole, added turns
as `role: content`, word diffs for long texts, the parent's label when it changed."""

from __future__ import annotations

from review_factory import GUESS_NOTE, SYSTEM, child_case, guessed_case, seed_case

from casemill.case.model import Case
from casemill.domains.support.policy import cancel_call
from casemill.review.diff import json_changes, side_by_side, word_diff
from casemill.review.present import first_change, item_view


def test_json_changes_and_word_diff():
    changes = json_changes({"a": {"b": [1, 2]}, "c": "x"}, {"a": {"b": [1, 3, 4]}, "c": "x"})
    assert [(c.path, c.before, c.after, c.kind) for c in changes] == [
        ("a.b[1]", 2, 3, "changed"),
        ("a.b[2]", None, 4, "added"),
    ]
    assert word_diff("the mug is cracked", "the mug is intact") == [
        ("=", "the mug is "),
        ("-", "cracked"),
        ("+", "intact"),
    ]


def test_side_by_side_folds_long_equal_runs():
    left = [f"line {i}" for i in range(30)]
    right = left[:15] + ["changed"] + left[16:]
    rows = side_by_side(left, right, context=2)
    tags = [r.tag for r in rows]
    assert tags.count("fold") == 2 and tags.count("replace") == 1
    changed = next(r for r in rows if r.tag == "replace")
    assert (changed.left_no, changed.left, changed.right_no, changed.right) == (
        16,
        "line 15",
        16,
        "changed",
    )


def test_item_view_orders_input_before_label(sqlite_store):
    parent = seed_case()
    data = child_case(parent, 1, operator="flip").model_dump(mode="json")
    data["id"] = ""
    data["conversation"].append({"role": "assistant", "content": "Let me check."})
    data["conversation"].append({"role": "customer", "content": "Actually cancel W1001 instead."})
    data["environment"]["state"]["orders"]["W1001"]["status"] = "pending"
    data["expected"] = {
        "tool_calls": [cancel_call("W1001").model_dump(mode="json")],
        "outcome": "resolve",
        "reply_contains": ["cancelled"],
        "optimal_steps": 3,
    }
    data["tags"]["intents"] = ["cancel"]
    child = Case.model_validate(data)
    sqlite_store.enqueue([child], "b", parents={parent.id: parent})
    item = sqlite_store.get(child.id)
    view = item_view(item)
    paths = [c.path for c in view.changes]
    assert paths[:4] == [
        "conversation[1].content",
        "conversation[2]",
        "conversation[3]",
        "environment.state.orders.W1001.status",
    ]
    assert "expected.tool_calls[0]" in paths and "tags.intents" in paths
    assert paths.index("expected.reply_contains") > paths.index(
        "environment.state.orders.W1001.status"
    )
    added = next(c for c in view.changes if c.path == "conversation[3]")
    assert added.after == "customer: Actually cancel W1001 instead." and added.kind == "added"
    call = next(c for c in view.changes if c.path == "expected.tool_calls[0]")
    assert "cancel_order" in call.after and "refund_items" in call.before  # whole calls
    assert view.parent_label == "refund -> resolve (refund_items)"
    assert view.headline.startswith("cancel -> resolve (cancel_order)")
    assert "expected changed" in view.flags
    assert first_change(item).startswith("conversation[1].content: -")


def test_item_without_parent_shows_customer_text(sqlite_store):
    case = Case.model_validate(
        {
            **seed_case().model_dump(mode="json"),
            "id": "",
            "conversation": [
                {"role": "system", "content": SYSTEM},
                {"role": "customer", "content": "Refund the cracked mug from W1001"},
            ],
        }
    )
    sqlite_store.enqueue([case], "b")
    item = sqlite_store.get(case.id)
    assert (
        item_view(item).changes == () and first_change(item) == "Refund the cracked mug from W1001"
    )


def test_a_low_confidence_label_is_flagged_with_its_reason_and_no_parent_is_expected(
    sqlite_store,
):
    guess = guessed_case(1)
    sure = Case.model_validate(
        {
            **guessed_case(2).model_dump(mode="json"),
            "id": "",
            "tags": {"category": "capability", "intents": ["refund"], "labels": ["mined"]},
            "provenance": {"origin": "mined", "label_confidence": "high"},
        }
    )
    sqlite_store.enqueue([guess, sure], "b")
    view = item_view(sqlite_store.get(guess.id))
    assert view.flags == ("NEEDS LABEL",)  # a mined case has no parent by nature
    assert view.label_note == (
        f"low-confidence label, check the expected behaviour yourself: {GUESS_NOTE}"
    )
    plain = item_view(sqlite_store.get(sure.id))
    assert plain.flags == () and plain.label_note is None


def test_a_field_moved_off_its_default_is_a_change_from_the_default(sqlite_store):
    from casemill.case.model import derive

    parent = seed_case()  # category capability (the default), difficulty easy
    child = derive(  # off the default category, onto the default difficulty (medium)
        child_case(parent, 1),
        tags=parent.tags.model_copy(update={"category": "robustness", "difficulty": "medium"}),
    )
    sqlite_store.enqueue([child], "b1", parents={parent.id: parent})
    changes = {c.path: c for c in item_view(sqlite_store.get(child.id)).changes}
    category, difficulty = changes["tags.category"], changes["tags.difficulty"]
    assert (category.kind, category.before, category.after) == (
        "changed",
        "capability",
        "robustness",
    )
    assert (difficulty.kind, difficulty.before, difficulty.after) == ("changed", "easy", "medium")
