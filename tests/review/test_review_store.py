"""The queue store on SQLite and PostgreSQL: enqueue, leases, decisions, edits, bulk, undo,
optimistic concurrency and the audit log."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from review_factory import child_case, guessed_case, invalid_case
from sqlalchemy import text

from casemill.case.model import derive
from casemill.errors import UserError
from casemill.review.errors import DecisionBlocked, EditRefused, LeaseHeld, StaleWrite
from casemill.review.items import BulkResult, ItemFilter
from casemill.review.schema import MIGRATIONS, batches, make_engine, schema_version
from casemill.review.store import ReviewStore


def test_migrations_are_recorded_and_idempotent(store: ReviewStore):
    assert schema_version(store.engine) == len(MIGRATIONS)
    again = ReviewStore(store.engine)
    assert schema_version(again.engine) == len(MIGRATIONS)


def test_enqueue_is_idempotent_and_keeps_parent_and_findings(store, parent, children):
    bad = invalid_case(parent, 1)
    first = store.enqueue([*children, bad], "b1", parents={parent.id: parent})
    assert len(first.added) == 6 and first.invalid == (bad.id,)
    second = store.enqueue(children, "b1", parents={parent.id: parent})
    assert second.added == () and set(second.already_queued) == {c.id for c in children}
    assert store.count(ItemFilter(batch_id="b1")) == 6
    item = store.get(children[0].id)
    assert item.parent == parent and item.origin == "generated" and item.operator == "typos"
    assert item.intents == ("refund",) and item.valid and item.findings == () and item.version == 1
    broken = store.get(bad.id)
    assert not broken.valid and broken.findings[0].rule == "missing-id"


def test_enqueue_of_cases_all_queued_elsewhere_makes_no_batch(store, children):
    store.enqueue(children[:2], "b1")
    store.enqueue(children[2:4], "b2")
    again = store.enqueue(children[:4], "b3")
    assert (again.added, len(again.already_queued)) == ((), 4)
    assert (again.batch_exists, again.queued_in) == (False, ("b1", "b2"))
    assert [b.batch_id for b in store.batches()] == ["b1", "b2"]
    none = store.enqueue([], "b4")  # an empty file makes no batch either
    assert not none.batch_exists and [b.batch_id for b in store.batches()] == ["b1", "b2"]
    some = store.enqueue(children[3:], "b3")  # one new case: the batch is made for it
    assert some.batch_exists and some.added == (children[4].id,) and some.queued_in == ("b2",)
    assert store.batch_status("b3").total == 1
    same = store.enqueue(children[:2], "b1")  # re-enqueue into the batch holding them
    assert same.batch_exists and same.queued_in == ()


def long_case(parent):
    """A case whose intents (as mined from an odd log) and operator name are long."""
    child = child_case(parent, 7)
    intents = tuple(f"mined_intent_{i}_with_a_long_free_text_name" for i in range(20))
    step = child.provenance.operators[-1].model_copy(update={"name": "x" * 200})
    return derive(
        child,
        tags=child.tags.model_copy(update={"intents": intents}),
        provenance=child.provenance.model_copy(update={"operators": (step,)}),
    )


def test_a_case_with_long_intents_and_operator_name_is_queued(store, parent):
    case = long_case(parent)
    assert len(",".join(case.tags.intents)) > 400
    assert store.enqueue([case], "b1").added == (case.id,)
    item = store.get(case.id)
    assert item.intents == case.tags.intents and item.operator == "x" * 200
    last = case.tags.intents[-1]
    assert [i.case_id for i in store.list(ItemFilter(intent=last))] == [case.id]


def test_m004_widens_the_case_columns_of_an_older_postgresql_queue(pg_url, parent):
    engine = make_engine(pg_url)
    ReviewStore(engine)
    with engine.begin() as conn:  # the queue as migrations 1 to 3 left it
        for column, size in (("intents", 400), ("operator", 80), ("parent_id", 80)):
            conn.execute(
                text(f"ALTER TABLE review_items ALTER COLUMN {column} TYPE VARCHAR({size})")
            )
        conn.execute(text("DELETE FROM review_schema WHERE version > 3"))
    assert schema_version(engine) == 3 and column_types(engine) == {
        "intents": "character varying",
        "operator": "character varying",
        "parent_id": "character varying",
    }
    store = ReviewStore(engine)
    assert schema_version(engine) == len(MIGRATIONS)
    assert set(column_types(engine).values()) == {"text"}
    assert store.enqueue([long_case(parent)], "b1").added
    engine.dispose()


def column_types(engine) -> dict[str, str]:
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = 'review_items' "
                "AND column_name IN ('intents', 'operator', 'parent_id')"
            )
        )
        return dict(rows.all())


def test_m005_removes_batches_that_never_held_a_case(sqlite_store, children):
    sqlite_store.enqueue(children[:1], "b1")
    with sqlite_store.engine.begin() as conn:  # what enqueues made before: an empty batch
        conn.execute(batches.insert().values(batch_id="ghost", created_at="x", policy="human"))
        conn.execute(text("DELETE FROM review_schema WHERE version = 5"))
    assert [b.batch_id for b in sqlite_store.batches()] == ["b1", "ghost"]
    again = ReviewStore(sqlite_store.engine)
    assert [b.batch_id for b in again.batches()] == ["b1"]


def test_enqueue_into_a_batch_of_another_policy_is_refused(store, children):
    store.enqueue(children[:2], "human-batch")
    with pytest.raises(UserError, match="batch human-batch has the human policy, not auto"):
        store.enqueue(children[2:3], "human-batch", policy="auto")
    store.enqueue(children[3:4], "auto-batch", policy="auto")
    with pytest.raises(UserError, match="has the auto policy, not human"):
        store.enqueue(children[4:], "auto-batch")
    assert [(b.batch_id, b.total) for b in store.batches()] == [
        ("auto-batch", 1),
        ("human-batch", 2),
    ]


def test_approve_reject_and_audit(store, parent, children):
    store.enqueue(children, "b1", parents={parent.id: parent})
    item = store.get(children[0].id)
    done = store.approve(item.case_id, "ana", item.version, notes="fine")
    assert done.status == "approved" and done.reviewer == "ana" and done.version == item.version + 1
    with pytest.raises(Exception, match="needs a reason"):
        store.reject(children[1].id, "ana", 1, reason=" ")
    rej = store.reject(children[1].id, "bob", 1, reason="typo changes meaning")
    assert rej.status == "rejected" and rej.reason == "typo changes meaning"
    log = store.audit_log(case_id=item.case_id)
    assert [e.action for e in log] == ["enqueue", "approve"]
    assert log[1].actor == "ana" and log[1].before["status"] == "pending"
    assert log[1].after["status"] == "approved"


def test_stale_write_is_refused_not_lost(store, children):
    store.enqueue(children, "b1")
    seen = store.get(children[0].id)
    store.approve(seen.case_id, "ana", seen.version)
    with pytest.raises(StaleWrite, match="changed since you loaded it") as err:
        store.reject(seen.case_id, "bob", seen.version, reason="no")
    assert err.value.by == "ana"
    assert store.get(seen.case_id).status == "approved"


def test_lease_blocks_others_until_it_expires(db_url, children):
    moment = [datetime(2026, 1, 1, tzinfo=UTC)]
    engine = make_engine(db_url)
    store = ReviewStore(engine, clock=lambda: moment[0], lease_s=60)
    store.enqueue(children[:2], "b1")
    mine = store.claim_next("ana")
    assert mine.case_id == children[0].id and mine.lease_holder == "ana"
    theirs = store.claim_next("bob")
    assert theirs.case_id == children[1].id
    assert store.claim_next("ana").case_id == mine.case_id  # a held item comes back first
    with pytest.raises(LeaseHeld) as held:
        store.approve(mine.case_id, "bob", None)
    assert str(held.value) == (
        f"case {mine.case_id} is being reviewed by ana until 2026-01-01 00:01 UTC"
    )
    moment[0] += timedelta(seconds=61)
    bob_now = store.claim(mine.case_id, "bob")
    assert bob_now.lease_holder == "bob"
    # ana's lease expired and bob took it: ana's write with her old version is refused
    with pytest.raises(StaleWrite):
        store.approve(mine.case_id, "ana", mine.version + 1)
    engine.dispose()


def test_invalid_case_cannot_be_approved_but_can_be_fixed_by_edit(store, parent):
    bad = invalid_case(parent, 1)
    store.enqueue([bad], "b1", parents={parent.id: parent})
    with pytest.raises(DecisionBlocked, match="fails validation"):
        store.approve(bad.id, "ana", 1)
    data = bad.model_dump(mode="json")
    data["expected"]["tool_calls"][0]["params"]["item_ids"] = ["I1"]
    fixed = store.edit(bad.id, "ana", 1, data, approve=True)
    assert fixed.status == "approved" and fixed.valid and fixed.case_id == bad.id
    assert fixed.case.id != bad.id and fixed.edited
    assert [e.path for e in fixed.edits] == ["expected.tool_calls[0].params.item_ids[0]"]
    assert fixed.edits[0].before == "I9" and fixed.edits[0].after == "I1"


def test_invalid_edit_is_refused_and_original_kept(store, children):
    store.enqueue(children[:1], "b1")
    case = children[0]
    data = case.model_dump(mode="json")
    data["expected"]["tool_calls"][0]["tool"] = "refund_everything"
    with pytest.raises(EditRefused) as err:
        store.edit(case.id, "ana", 1, data)
    assert err.value.findings[0].rule == "unknown-tool"
    data["expected"]["outcome"] = "maybe"
    with pytest.raises(EditRefused) as err:
        store.edit(case.id, "ana", 1, json.dumps(data))
    assert err.value.findings[0].layer == "model" and "outcome" in err.value.findings[0].field
    with pytest.raises(EditRefused, match="not valid JSON"):
        store.edit(case.id, "ana", 1, "{not json")
    kept = store.get(case.id)
    assert kept.case == case and kept.version == 1 and kept.edits == ()


def test_bulk_decide_by_filter_skips_invalid_and_held(store, parent, children):
    cancel = child_case(parent, 99, operator="swap", intent="cancel")
    bad = invalid_case(parent, 2)
    store.enqueue([*children, cancel, bad], "b1", parents={parent.id: parent})
    store.claim(children[0].id, "bob")
    result = store.bulk_decide(ItemFilter(intent="refund"), "approved", "ana")
    assert set(result.changed) == {c.id for c in children[1:]}
    assert {cid for cid, _ in result.skipped} == {children[0].id, bad.id}
    assert store.get(cancel.id).status == "pending"
    rej = store.bulk_decide(ItemFilter(operator="swap"), "rejected", "ana", reason="dup")
    assert rej.changed == (cancel.id,)
    assert store.count(ItemFilter(status="approved")) == 4


def test_bulk_decide_refuses_an_empty_filter_and_takes_an_explicit_status(store, children):
    store.enqueue(children, "b1")
    for decision, reason in (("approved", None), ("rejected", "dup")):
        with pytest.raises(UserError, match=r"needs at least one filter .*status=pending\)$"):
            store.bulk_decide(ItemFilter(), decision, "ana", reason=reason)
    assert store.count(ItemFilter(status="pending")) == len(children)
    result = store.bulk_decide(ItemFilter(status="pending"), "approved", "ana")
    assert set(result.changed) == {c.id for c in children}


def test_undo_while_open_and_not_after_close(store, children):
    store.enqueue(children[:2], "b1")
    done = store.reject(children[0].id, "ana", 1, reason="bad")
    back = store.undo(done.case_id, "ana", done.version)
    assert back.status == "pending" and back.reviewer is None
    with pytest.raises(DecisionBlocked, match="no decision to undo"):
        store.undo(done.case_id, "ana", back.version)
    store.approve(children[1].id, "ana", 1)
    _close(store, "b1")
    with pytest.raises(DecisionBlocked, match="closed"):
        store.undo(children[1].id, "ana", None)
    assert [e.action for e in store.audit_log(case_id=done.case_id)] == [
        "enqueue",
        "reject",
        "undo",
    ]


def test_auto_policy_approves_only_fully_valid(store, parent, children):
    bad = invalid_case(parent, 3)
    store.enqueue([*children[:2], bad], "b1", parents={parent.id: parent}, policy="auto")
    result = store.auto_decide("b1")
    assert set(result.changed) == {children[0].id, children[1].id}
    item = store.get(children[0].id)
    assert item.auto_approved and item.reviewer == "auto"
    assert store.get(bad.id).status == "pending"
    status = store.batch_status("b1")
    assert (status.total, status.pending, status.approved, status.decided) == (3, 1, 2, False)


def test_auto_policy_refuses_a_human_batch(store, parent, children):
    """From Python as from the command line: the cases of a batch enqueued for people are not
    approved by the auto policy (the CLI refuses the policy mix at enqueue)."""
    store.enqueue(children[:2], "people", parents={parent.id: parent})
    with pytest.raises(UserError, match="batch people has the human policy: its cases wait"):
        store.auto_decide("people")
    assert {store.get(c.id).status for c in children[:2]} == {"pending"}
    assert store.auto_decide("never-made") == BulkResult((), ())


def test_filter_parse_errors_name_the_filter():
    assert ItemFilter.parse(["batch=b1", "intent=refund"]) == ItemFilter(
        batch_id="b1", intent="refund"
    )
    with pytest.raises(Exception, match="'colour=red'"):
        ItemFilter.parse(["colour=red"])
    with pytest.raises(Exception, match="status is one of"):
        ItemFilter.parse(["status=done"])


def test_auto_policy_leaves_low_confidence_labels_to_a_person(store, parent, children):
    guessed = derive(
        children[2], tags=children[2].tags.model_copy(update={"labels": ("needs_label",)})
    )
    store.enqueue([children[0], guessed], "b2", parents={parent.id: parent}, policy="auto")
    result = store.auto_decide("b2")
    assert result.changed == (children[0].id,)
    assert dict(result.skipped)[guessed.id].startswith("needs a human label")
    assert store.get(guessed.id).status == "pending"


def test_enqueue_of_an_edited_case_does_not_queue_it_again(store, parent):
    bad = invalid_case(parent, 1)
    store.enqueue([bad], "b1", parents={parent.id: parent})
    data = bad.model_dump(mode="json")
    data["expected"]["tool_calls"][0]["params"]["item_ids"] = ["I1"]
    fixed = store.edit(bad.id, "ana", 1, data, approve=True)
    again = store.enqueue([fixed.case, bad], "b2", parents={parent.id: parent})
    assert again.added == () and set(again.already_queued) == {fixed.case.id, bad.id}
    assert store.count() == 1


def test_intent_filter_is_literal_not_a_like_pattern(store, parent, children):
    store.enqueue(children, "b1", parents={parent.id: parent})
    for wild in ("%", "_", "re%"):
        assert store.count(ItemFilter(intent=wild)) == 0
        result = store.bulk_decide(ItemFilter(intent=wild), "approved", "ana")
        assert result.changed == ()
    assert store.count(ItemFilter(intent="refund")) == len(children)


def test_list_with_a_negative_offset_starts_at_the_first_item(store, children):
    store.enqueue(children, "b1")
    assert [i.case_id for i in store.list(offset=-100, limit=2)] == [c.id for c in children[:2]]


def test_a_decided_case_is_not_edited_under_its_decision(store, children):
    store.enqueue(children[:1], "b1")
    case = children[0]
    approved = store.approve(case.id, "ana", 1)
    data = case.model_dump(mode="json")
    data["expected"]["optimal_steps"] = 4
    with pytest.raises(DecisionBlocked, match="was approved by ana; undo that decision"):
        store.edit(case.id, "bob", approved.version, data)
    kept = store.get(case.id)
    assert kept.case == case and kept.edits == () and kept.reviewer == "ana"
    pending = store.undo(case.id, "bob", kept.version)
    edited = store.edit(case.id, "bob", pending.version, data)
    assert edited.status == "pending" and edited.case.expected.optimal_steps == 4


def test_bulk_approve_leaves_low_confidence_labels_to_a_person(store, parent, children):
    guessed = guessed_case(1)
    store.enqueue([children[0], guessed], "b1", parents={parent.id: parent})
    result = store.bulk_decide(ItemFilter(status="pending"), "approved", "ana")
    assert result.changed == (children[0].id,)
    assert dict(result.skipped)[guessed.id] == (
        "needs a human label (observed behaviour, may be wrong): approve it on its own"
    )
    assert store.get(guessed.id).status == "pending"
    one = store.approve(guessed.id, "ana", store.get(guessed.id).version)  # one by one it can be
    assert one.status == "approved"
    rejected = store.bulk_decide(
        ItemFilter(batch_id="b1", status="approved"), "rejected", "ana", "x"
    )
    assert set(rejected.changed) == {children[0].id, guessed.id}  # a bulk reject is not held


def test_a_batch_id_or_reviewer_too_long_is_refused_alike_on_both_databases(store, children):
    long_batch = "b" * 121
    with pytest.raises(
        UserError, match=r"^batch id 'b{40}…' is 121 characters long; give 1 to 120$"
    ):
        store.enqueue(children[:1], long_batch)
    with pytest.raises(UserError, match="batch id '  ' is 2 characters long"):
        store.enqueue(children[:1], "  ")
    assert store.batches() == [] and store.count() == 0
    store.enqueue(children[:1], "b" * 120)
    with pytest.raises(UserError, match="^reviewer 'r{40}…' is 121 characters long"):
        store.approve(children[0].id, "r" * 121, None)
    item = store.get(children[0].id)
    assert item.status == "pending" and item.version == 1


def test_new_cases_are_not_queued_into_a_closed_batch(store, children):
    store.enqueue(children[:1], "b1")
    store.approve(children[0].id, "ana", None)
    _close(store, "b1")
    with pytest.raises(
        DecisionBlocked, match=r"batch b1 was closed at .*queue new cases in another"
    ):
        store.enqueue(children[:2], "b1")
    assert store.count() == 1 and store.batch_status("b1").total == 1
    again = store.enqueue(children[:1], "b1")  # a re-run with nothing new stays a no-op
    assert again.added == () and again.already_queued == (children[0].id,)
    assert store.enqueue(children[1:2], "b2").added == (children[1].id,)


def test_a_queue_database_that_cannot_be_reached_is_a_clear_error_without_the_password():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    url = f"postgresql+psycopg://ana:s3cret@127.0.0.1:{port}/queue"
    with pytest.raises(UserError) as err:
        ReviewStore.open(url)
    message = str(err.value)
    assert message.startswith(
        f"cannot open the review queue at postgresql+psycopg://ana:***@127.0.0.1:{port}/queue: "
    )
    assert "Connection refused" in message and message.endswith(
        "check --db or CASEMILL_REVIEW_DB (is the server running, does the database exist?)"
    )
    assert "s3cret" not in message and "\n" not in message


def _close(store: ReviewStore, batch_id: str) -> None:
    """Closes `batch_id` as an export does once it is decided and exported (its approved
    cases are not exported here: these tests are about what a closed batch refuses)."""
    with store.engine.begin() as conn:
        conn.execute(
            batches.update()
            .where(batches.c.batch_id == batch_id)
            .values(closed_at="2026-11-28T00:00:00+00:00")
        )


def test_the_same_case_twice_in_one_enqueue_is_queued_once(store, children):
    """A file holding one case twice (`tests/fixtures/mixed.jsonl` does) queues it once and
    counts the second copy as already queued in this batch, instead of failing after the
    transaction committed."""
    result = store.enqueue([children[0], children[1], children[0]], "b1")
    assert result.added == (children[0].id, children[1].id)
    assert result.already_queued == (children[0].id,)
    assert (result.queued_in, result.batch_exists) == ((), True)
    assert store.count(ItemFilter(batch_id="b1")) == 2
    assert [e.action for e in store.audit_log(case_id=children[0].id)] == ["enqueue"]
