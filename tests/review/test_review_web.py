"""The web app over HTTP (Starlette's test client): sign-in, 401 without a session, 403 without
the CSRF token, escaping of case content, decisions, expected-call edits, bulk actions."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient
from review_factory import GUESS_NOTE, SYSTEM, child_case, guessed_case, invalid_case

from casemill.case.model import Turn
from casemill.review import auth
from casemill.review.items import ItemFilter
from casemill.review.web import create_app
from casemill.review.web_context import COOKIE

XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'


@pytest.fixture
def client(sqlite_store, parent, children):
    sqlite_store.enqueue(children, "b1", parents={parent.id: parent})
    decided: list[str] = []
    app = create_app(sqlite_store, on_batch_decided=decided.append)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        c.decided = decided
        yield c


def sign_in(client, store, name: str = "ana") -> str:
    token = auth.create_token(store, name)
    r = client.post("/login", data={"token": token}, follow_redirects=False)
    assert r.status_code == 303 and COOKIE in r.cookies
    page = client.get("/").text
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def test_token_is_stored_only_as_a_hash(sqlite_store):
    token = auth.create_token(sqlite_store, "ana")
    with sqlite_store.engine.connect() as conn:
        dump = "\n".join(str(r) for r in conn.exec_driver_sql("SELECT * FROM review_tokens"))
    assert token not in dump and auth.reviewer_for_token(sqlite_store, token) == "ana"
    assert auth.revoke_tokens(sqlite_store, "ana") == 1
    assert auth.reviewer_for_token(sqlite_store, token) is None


def test_login_sets_strict_httponly_cookie_and_headers(client, sqlite_store):
    bad = client.post("/login", data={"token": "nope"})
    assert bad.status_code == 401 and "Unknown or revoked token" in bad.text
    token = auth.create_token(sqlite_store, "ana")
    r = client.post("/login", data={"token": token}, follow_redirects=False)
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert token not in r.headers["set-cookie"]
    page = client.get("/")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"


def test_without_session_401_without_csrf_403_and_nothing_changes(client, sqlite_store, children):
    target = children[0].id
    r = client.post(f"/case/{target}/decide", data={"action": "approve", "version": "1"})
    assert r.status_code == 401
    assert client.get("/", follow_redirects=False).headers["location"] == "/login"
    assert client.get("/api/status", follow_redirects=False).status_code == 401
    csrf = sign_in(client, sqlite_store)
    r = client.post(f"/case/{target}/decide", data={"action": "approve", "version": "1"})
    assert r.status_code == 403
    r = client.post(
        f"/case/{target}/decide", data={"action": "approve", "version": "1", "csrf": "x" + csrf}
    )
    assert r.status_code == 403
    r = client.post("/bulk", data={"decision": "approve"})
    assert r.status_code == 403
    evil = {"origin": "http://evil.example"}
    r = client.post(
        f"/case/{target}/decide",
        data={"action": "approve", "version": "1", "csrf": csrf},
        headers=evil,
    )
    assert r.status_code == 403 and "cross-site" in r.text
    assert client.post("/login", data={"token": "x"}, headers=evil).status_code == 403
    assert sqlite_store.count(ItemFilter(status="pending")) == len(children)
    assert [e.action for e in sqlite_store.audit_log(case_id=target)] == ["enqueue"]


def test_case_content_is_escaped(client, sqlite_store, parent):
    evil = child_case(parent, 7, text="please refund W1001 " + XSS)
    evil = evil.model_copy(
        update={
            "conversation": (
                Turn(role="system", content=SYSTEM),
                Turn(role="customer", content="refund W1001 mug cracked " + XSS),
            )
        }
    )
    evil = type(evil).model_validate({**evil.model_dump(mode="json"), "id": ""})
    sqlite_store.enqueue([evil], "xss", parents={parent.id: parent})
    sign_in(client, sqlite_store)
    page = client.get(f"/case/{evil.id}").text
    assert "<script>window.__pwned" not in page and 'onerror="window' not in page
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    queue = client.get("/?batch=xss").text
    assert "<script>window" not in queue


def test_approve_moves_to_next_and_resumes_when_batch_done(client, sqlite_store, children):
    csrf = sign_in(client, sqlite_store)
    r = client.get("/next?batch=b1", follow_redirects=False)
    first = r.headers["location"].split("?")[0].rsplit("/", 1)[1]
    assert first == children[0].id
    for n, case in enumerate(children):
        item = sqlite_store.get(case.id)
        r = client.post(
            f"/case/{case.id}/decide?batch=b1",
            data={"action": "approve", "version": str(item.version), "csrf": csrf},
            follow_redirects=False,
        )
        assert r.status_code == 303 and r.headers["location"].startswith("/next?batch=b1")
        if n < len(children) - 1:
            assert client.decided == []
    assert sqlite_store.batch_status("b1").approved == len(children)
    import time

    for _ in range(50):
        if client.decided:
            break
        time.sleep(0.02)
    assert client.decided == ["b1"]
    r = client.get("/next?batch=b1", follow_redirects=False)
    assert "notice=empty" in r.headers["location"]


def test_stale_version_gets_409_and_keeps_the_first_decision(client, sqlite_store, children):
    csrf = sign_in(client, sqlite_store)
    case_id = children[1].id
    sqlite_store.reject(case_id, "bob", 1, reason="dup")
    r = client.post(
        f"/case/{case_id}/decide", data={"action": "approve", "version": "1", "csrf": csrf}
    )
    assert r.status_code == 409 and "changed since you loaded it" in r.text
    assert sqlite_store.get(case_id).status == "rejected"


def test_version_0_is_stale_not_a_write_without_a_version(client, sqlite_store, children):
    csrf = sign_in(client, sqlite_store)
    case_id = children[1].id
    r = client.post(
        f"/case/{case_id}/decide", data={"action": "approve", "version": "0", "csrf": csrf}
    )
    assert r.status_code == 409 and "changed since you loaded it" in r.text
    assert sqlite_store.get(case_id).status == "pending"


def test_edit_calls_invalid_refused_valid_saved(client, sqlite_store, children):
    csrf = sign_in(client, sqlite_store)
    case = children[2]
    base = {"csrf": csrf, "version": "1", "tool_0": "refund_items"}
    r = client.post(
        f"/case/{case.id}/calls",
        data={**base, "params_0": '{"order_id": "W1001", "item_ids": ["I1"], "reason": "because"}'},
    )
    assert r.status_code == 422 and "is not one of" in r.text
    r = client.post(f"/case/{case.id}/calls", data={**base, "params_0": "{oops"})
    assert r.status_code == 422 and "not valid JSON" in r.text
    r = client.post(
        f"/case/{case.id}/calls",
        data={**base, "params_0": '{"order_id": "W1001", "item_ids": ["I7"], "reason": "damaged"}'},
    )
    assert r.status_code == 422 and "has no item" in r.text
    assert sqlite_store.get(case.id).case == case  # the original is kept
    version = sqlite_store.get(case.id).version
    r = client.post(
        f"/case/{case.id}/calls",
        data={
            **base,
            "version": str(version),
            "params_0": '{"order_id": "W1001", "item_ids": ["I1"], "reason": "defective"}',
        },
        follow_redirects=False,
    )
    assert r.status_code == 303
    item = sqlite_store.get(case.id)
    assert item.case.expected.tool_calls[0].params["reason"] == "defective" and item.edited
    assert item.case.expected.tool_calls[0].match["order_id"].kind == "id"  # rules kept


def test_edit_the_outcome_and_the_reply_phrases_with_the_calls(client, sqlite_store, children):
    """A guessed label is fixed on the web as in the terminal: here the refund becomes a
    clarifying question (no call, outcome clarify, phrases a line each)."""
    csrf = sign_in(client, sqlite_store)
    case = children[2]
    page = client.get(f"/case/{case.id}").text
    assert '<select name="outcome" id="outcome">' in page
    phrases = "\n".join(case.expected.reply_contains)
    assert f'id="reply_contains" rows="2" spellcheck="false">{phrases}</textarea>' in page
    version = str(sqlite_store.get(case.id).version)  # (opening the page took the lease)
    form = {"csrf": csrf, "version": version, "tool_0": "refund_items", "delete_0": "1"}
    r = client.post(f"/case/{case.id}/calls", data={**form, "outcome": "shrug"})
    assert r.status_code == 422 and "outcome &#39;shrug&#39; is not one of resolve, " in r.text
    assert sqlite_store.get(case.id).case == case
    form |= {"outcome": "clarify", "reply_contains": "which item\n\n  order W1001 ",
             "reply_excludes": "refunded"}  # fmt: skip
    r = client.post(f"/case/{case.id}/calls", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text
    expected = sqlite_store.get(case.id).case.expected
    assert (expected.tool_calls, expected.outcome) == ((), "clarify")
    assert expected.reply_contains == ("which item", "order W1001")
    assert expected.reply_excludes == ("refunded",)


def test_bulk_approve_by_filter_skips_invalid(client, sqlite_store, parent, children):
    bad = invalid_case(parent, 4)
    sqlite_store.enqueue([bad], "b2", parents={parent.id: parent})
    csrf = sign_in(client, sqlite_store)
    r = client.post(
        "/bulk",
        data={"csrf": csrf, "decision": "approve", "operator": "typos"},
        follow_redirects=False,
    )
    assert r.status_code == 303 and "notice=bulk" in r.headers["location"]
    assert sqlite_store.count(ItemFilter(status="approved")) == len(children)
    assert sqlite_store.get(bad.id).status == "pending"
    page = client.get(r.headers["location"]).text
    assert f"Bulk: {len(children)} approved, 0 skipped" in page


def test_bulk_without_a_filter_is_refused_with_the_rule(client, sqlite_store, children):
    """As `casemill review approve` without --filter: nothing is decided; status=pending (every
    pending case) must be asked for by name."""
    csrf = sign_in(client, sqlite_store)
    assert (
        'id="bulk-approve" data-confirm="Approve every valid pending case matching this filter?" disabled'
        in client.get("/").text
    )
    for data in ({"decision": "approve"}, {"decision": "reject", "reason": "dup"}):
        r = client.post("/bulk", data={"csrf": csrf, **data}, follow_redirects=False)
        assert r.status_code == 422
        assert (
            "a bulk decision needs at least one filter (for everything pending: status=pending)"
            in r.text
        )
    assert sqlite_store.count(ItemFilter(status="pending")) == len(children)
    r = client.post(
        "/bulk",
        data={"csrf": csrf, "decision": "approve", "status": "pending"},
        follow_redirects=False,
    )
    assert r.status_code == 303 and "notice=bulk" in r.headers["location"]
    assert sqlite_store.count(ItemFilter(status="approved")) == len(children)


def test_server_restart_keeps_decisions_and_sessions(tmp_path, parent, children):
    from casemill.review.schema import make_engine
    from casemill.review.store import ReviewStore

    url = f"sqlite:///{tmp_path / 'restart.db'}"
    first = ReviewStore(make_engine(url))
    first.enqueue(children[:2], "b1", parents={parent.id: parent})
    with TestClient(create_app(first), base_url="http://127.0.0.1") as c1:
        csrf = sign_in(c1, first)
        r = c1.post(
            f"/case/{children[0].id}/decide",
            data={"action": "approve", "version": "1", "csrf": csrf},
            follow_redirects=False,
        )
        assert r.status_code == 303
        cookie = c1.cookies.get(COOKIE)
    first.engine.dispose()
    second = ReviewStore(make_engine(url))  # a new process would open the same database
    with TestClient(create_app(second), base_url="http://127.0.0.1") as c2:
        c2.cookies.set(COOKIE, cookie)
        assert "signed in as" in c2.get("/").text
        r = c2.post(
            f"/case/{children[1].id}/decide",
            data={"action": "reject", "reason": "dup", "version": "1", "csrf": csrf},
            follow_redirects=False,
        )
        assert r.status_code == 303
    assert (
        second.get(children[0].id).status == "approved"
        and second.get(children[0].id).reviewer == "ana"
    )
    assert second.get(children[1].id).status == "rejected"
    second.engine.dispose()


def test_bad_input_is_a_clear_4xx_never_a_500(client, sqlite_store, children):
    csrf = sign_in(client, sqlite_store)
    case = children[0]
    r = client.get("/case/c_nope")
    assert r.status_code == 404 and "no case c_nope in the review queue" in r.text
    for path in ("/case/c_nope/decide", "/case/c_nope/calls"):
        r = client.post(path, data={"csrf": csrf, "action": "approve", "version": "1"})
        assert r.status_code == 404 and "no case c_nope" in r.text
    r = client.post(
        f"/case/{case.id}/decide", data={"csrf": csrf, "action": "approve", "version": "abc"}
    )
    assert r.status_code == 400 and "version must be a whole number" in r.text
    r = client.post(
        f"/case/{case.id}/decide",
        data={"csrf": csrf, "action": "reject", "version": "1", "reason": " "},
    )
    assert r.status_code == 422 and "needs a reason" in r.text
    call = case.expected.tool_calls[0]
    r = client.post(
        f"/case/{case.id}/calls",
        data={
            "csrf": csrf,
            "version": "1",
            "tool_0": call.tool,
            "params_0": json.dumps(call.params),
        },
    )
    assert r.status_code == 422 and "changes nothing" in r.text
    item = sqlite_store.get(case.id)
    assert item.status == "pending" and item.case == case


def test_queue_page_number_below_zero_is_the_first_page(client, sqlite_store, children):
    sign_in(client, sqlite_store)
    r = client.get("/?page=-3")
    assert r.status_code == 200 and children[0].id in r.text


def test_a_low_confidence_label_is_flagged_on_the_case_and_in_the_queue(client, sqlite_store):
    guess = guessed_case(1)
    sqlite_store.enqueue([guess], "mined")
    sign_in(client, sqlite_store)
    page = client.get(f"/case/{guess.id}").text
    note = re.search(r'<p class="warn" id="label-note">([^<]*)</p>', page)
    assert note.group(1) == (
        f"low-confidence label, check the expected behaviour yourself: {GUESS_NOTE}"
    )
    assert '<span class="flag bad">NEEDS LABEL</span>' in page
    assert "no parent" not in page and "not known to the queue" not in page
    row = re.search(
        rf'<tr class="row[^"]*" data-href="/case/{guess.id}.*?</tr>',
        client.get("/?batch=mined").text,
        re.S,
    )
    assert '<span class="bad">needs label</span>' in row.group(0)


def test_bulk_approve_skips_a_low_confidence_label_and_says_why(client, sqlite_store, children):
    guess = guessed_case(1)
    sqlite_store.enqueue([guess], "mined")
    csrf = sign_in(client, sqlite_store)
    r = client.post("/bulk", data={"csrf": csrf, "decision": "approve", "status": "pending"})
    assert r.status_code == 200
    assert sqlite_store.get(guess.id).status == "pending"
    assert sqlite_store.count(ItemFilter(status="approved")) == len(children)
    assert (
        f"Bulk: {len(children)} approved, 1 skipped (failing validation, needing a human label, or held by "
        "another reviewer)." in r.text
    )


def test_a_refused_edit_keeps_the_new_call_and_the_removals_typed(client, sqlite_store, children):
    csrf = sign_in(client, sqlite_store)
    case = children[2]
    form = {
        "csrf": csrf,
        "version": "1",
        "tool_0": "refund_items",
        "params_0": json.dumps(case.expected.tool_calls[0].params),
        "delete_0": "1",
        "tool_new": "cancel_order",
        "params_new": '{"order_id": "W1001"',
    }
    r = client.post(f"/case/{case.id}/calls", data=form)
    assert r.status_code == 422 and "new call (cancel_order): params are not valid JSON" in r.text
    new_tool = re.search(r'<select name="tool_new" id="tool_new">(.*?)</select>', r.text, re.S)
    assert re.findall(r"<option selected>([^<]*)</option>", new_tool.group(1)) == ["cancel_order"]
    assert re.search(
        r'<input type="checkbox" name="delete_0" id="delete_0" value="1" checked>', r.text
    )
    assert "{&#34;order_id&#34;: &#34;W1001&#34;</textarea>" in r.text
    assert sqlite_store.get(case.id).case == case


def test_queue_pages_go_both_ways_and_a_bad_page_number_is_not_an_error(
    client, sqlite_store, parent
):
    many = [child_case(parent, n) for n in range(100, 345)]  # 5 children + 245: three pages
    sqlite_store.enqueue(many, "big", parents={parent.id: parent})
    sign_in(client, sqlite_store)
    middle = client.get("/?batch=big&page=1").text
    assert "245 cases, page 2 of 3" in middle
    assert 'href="/?batch=big&amp;page=0" id="prev-page"' in middle
    assert 'href="/?batch=big&amp;page=2" id="next-page"' in middle
    last = client.get("/?batch=big&page=2").text
    assert "page 3 of 3" in last and "next-page" not in last and many[-1].id in last
    first = client.get("/?batch=big").text
    assert "page 1 of 3" in first and "prev-page" not in first
    for bad in ("abc", "1.5", "99"):
        r = client.get(f"/?batch=big&page={bad}")
        assert r.status_code == 200 and "cases, page" in r.text
    assert "page 3 of 3" in client.get("/?batch=big&page=99").text  # past the end: the last
    assert "page 1 of 3" in client.get("/?batch=big&page=abc").text


def test_the_case_after_a_decision_offers_to_undo_it(client, sqlite_store, children):
    csrf = sign_in(client, sqlite_store)
    first = children[0].id
    item = sqlite_store.get(first)
    r = client.post(
        f"/case/{first}/decide?status=pending&batch=b1",
        data={"action": "approve", "version": str(item.version), "csrf": csrf},
    )
    assert r.status_code == 200 and f"/case/{children[1].id}?" in str(r.url)
    form = re.search(r'<form [^>]*id="undo-last-form".*?</form>', r.text, re.S).group(0)
    assert f'action="/case/{first}/decide?status=pending&amp;batch=b1"' in form
    version = re.search(r'name="version" value="(\d+)"', form).group(1)
    assert int(version) == sqlite_store.get(first).version
    r = client.post(
        f"/case/{first}/decide?status=pending&batch=b1",
        data={"action": "undo", "version": version, "csrf": csrf},
    )
    assert r.status_code == 200 and "Decision undone" in r.text
    assert sqlite_store.get(first).status == "pending"
    # only your own decision, only while it stands
    sqlite_store.reject(children[2].id, "bob", None, reason="dup")
    page = client.get(f"/case/{children[1].id}?last={children[2].id}").text
    assert "undo-last-form" not in page
    page = client.get(f"/case/{children[1].id}?last={first}").text  # pending again
    assert "undo-last-form" not in page


def test_bulk_confirmations_name_the_status_they_decide(client, sqlite_store):
    sign_in(client, sqlite_store)
    page = client.get("/?status=approved&batch=b1").text
    assert 'data-confirm="Reject every approved case matching status=approved batch_id=b1?"' in page
    page = client.get("/?operator=typos").text
    assert 'data-confirm="Approve every valid pending case matching operator=typos?"' in page


def test_bulk_reject_notice_gives_only_the_reason_a_reject_is_skipped(client, sqlite_store):
    csrf = sign_in(client, sqlite_store)
    r = client.post(
        "/bulk", data={"csrf": csrf, "decision": "reject", "batch": "b1", "reason": "dup"}
    )
    assert "Bulk: 5 rejected, 0 skipped (held by another reviewer)." in r.text
