"""The web review in a real browser (Playwright driving Debian's Chromium): sign in, approve by
keyboard, edit an expected call (an invalid edit refused with the message shown), bulk-approve a
filter, a script payload rendered as text and not run, requests without a session (401) or
without the CSRF token (403) refused, a sign-in posted from another origin refused."""

from __future__ import annotations

import socket
import threading
import time
import zlib

import pytest
from review_factory import SYSTEM, child_case, seed_case

from casemill.case.model import Case, Turn
from casemill.review import auth
from casemill.review.items import ItemFilter
from casemill.review.schema import make_engine
from casemill.review.store import ReviewStore
from casemill.review.web import create_app

PAYLOAD = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    import uvicorn

    path = tmp_path_factory.mktemp("browser") / "review.db"
    engine = make_engine(f"sqlite:///{path}")
    store = ReviewStore(engine)
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(store), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("review app did not start")
        time.sleep(0.05)
    yield store, f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    engine.dispose()


@pytest.fixture
def page(browser, served):
    context = browser.new_context()
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


def sign_in(page, served, name: str = "ana") -> None:
    store, base = served
    page.goto(base + "/")
    assert page.url.endswith("/login")
    page.fill("#token", auth.create_token(store, name))
    page.click("#signin")
    page.wait_for_url(base + "/")
    assert page.locator(".who b").inner_text() == name


def batch(store: ReviewStore, name: str, n: int = 3, operator: str = "typos") -> list[Case]:
    parent = seed_case()
    base = zlib.crc32(name.encode()) % 100_000 * 10
    cases = [child_case(parent, base + i, operator=operator) for i in range(n)]
    store.enqueue(cases, name, parents={parent.id: parent})
    return cases


def test_sign_in_and_approve_by_keyboard(page, served):
    store, base = served
    cases = batch(store, "kbd")
    sign_in(page, served)
    page.goto(f"{base}/next?batch=kbd")
    page.wait_for_url(f"**/case/{cases[0].id}*")
    page.keyboard.press("a")
    page.wait_for_url(f"**/case/{cases[1].id}*")
    assert page.locator("#notice").inner_text() == "Approved."
    assert store.get(cases[0].id).status == "approved" and store.get(cases[0].id).reviewer == "ana"
    page.keyboard.press("r")
    assert page.evaluate("document.activeElement.id") == "reject-reason"
    page.keyboard.type("wording changes the meaning")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/case/{cases[2].id}*")
    assert store.get(cases[1].id).reason == "wording changes the meaning"
    page.keyboard.press("k")
    page.wait_for_url(f"**/case/{cases[1].id}*")
    page.keyboard.press("u")
    page.wait_for_selector("#approve")
    assert store.get(cases[1].id).status == "pending"


def test_u_on_the_next_pending_case_undoes_the_decision_just_made(page, served):
    store, base = served
    cases = batch(store, "undo-last")
    sign_in(page, served)
    page.goto(f"{base}/next?batch=undo-last&status=pending")
    page.wait_for_url(f"**/case/{cases[0].id}*")
    page.keyboard.press("a")
    page.wait_for_url(f"**/case/{cases[1].id}*")
    assert page.locator("#undo-last-form span").inner_text() == f"you approved {cases[0].id}"
    assert page.locator("#prev").count() == 0  # the status=pending walk has no way back
    page.keyboard.press("u")
    page.wait_for_url(f"**/case/{cases[0].id}*notice=undone*")
    assert store.get(cases[0].id).status == "pending"
    assert page.locator("#status").inner_text() == "pending"


def test_choosing_a_filter_applies_it_and_enables_the_bulk_buttons(page, served):
    store, base = served
    batch(store, "pick", n=2)
    sign_in(page, served)
    page.goto(f"{base}/")
    assert page.locator("#bulk-approve").is_disabled()
    page.select_option("#filters select[name=batch]", "pick")
    page.wait_for_url("**/?*batch=pick*")
    assert page.locator(".count").inner_text() == "2 cases"
    assert page.locator("#bulk-approve").is_enabled()


def test_edit_expected_call_invalid_refused_then_valid(page, served):
    store, base = served
    case = batch(store, "edit", n=1)[0]
    sign_in(page, served)
    page.goto(f"{base}/case/{case.id}")
    page.keyboard.press("e")
    assert page.evaluate("document.activeElement.id") == "params_0"
    page.fill("#params_0", '{"order_id": "W1001", "item_ids": ["I1"], "reason": "changed my mind"}')
    page.click("#save-calls")
    error = page.locator("#errors")
    error.wait_for()
    assert "is not one of" in error.inner_text() and "call 1 (refund_items)" in error.inner_text()
    assert store.get(case.id).case == case
    page.fill("#params_0", '{"order_id": "W1001", "item_ids": ["I1"], "reason": "defective"}')
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#notice")
    assert page.locator("#notice").inner_text() == "Edit saved and validated."
    item = store.get(case.id)
    assert item.edited and item.case.expected.tool_calls[0].params["reason"] == "defective"
    assert "expected.tool_calls[0].params.reason" in page.locator("#edits").inner_text()


def test_edit_the_outcome_and_reply_phrases_in_the_browser(page, served):
    store, base = served
    case = batch(store, "edit-outcome", n=1)[0]
    sign_in(page, served)
    page.goto(f"{base}/case/{case.id}")
    page.keyboard.press("e")
    page.check("#delete_0")
    page.select_option("#outcome", "clarify")
    page.fill("#reply_contains", "which item\nW1001")
    page.click("#save-calls")
    page.wait_for_selector("#notice, #errors")
    assert page.locator("#errors").count() == 0, page.locator("#errors").inner_text()
    assert page.locator("#notice").inner_text() == "Edit saved and validated."
    expected = store.get(case.id).case.expected
    assert (expected.outcome, expected.reply_contains) == ("clarify", ("which item", "W1001"))
    assert expected.tool_calls == ()


def test_bulk_approve_a_filter(page, served):
    store, base = served
    mine = batch(store, "bulk", n=3, operator="slang")
    others = batch(store, "bulk2", n=2, operator="ocr")
    sign_in(page, served)
    page.select_option("select[name=operator]", "slang")
    page.click("#apply-filter")
    page.wait_for_url("**operator=slang*")
    assert page.locator("#queue tbody tr").count() == 3
    page.once("dialog", lambda d: d.accept())
    page.click("#bulk-approve")
    page.wait_for_selector("#notice")
    assert page.locator("#notice").inner_text().startswith("Bulk: 3 approved, 0 skipped")
    assert all(store.get(c.id).status == "approved" for c in mine)
    assert all(store.get(c.id).status == "pending" for c in others)


def test_bulk_without_a_filter_is_disabled_and_refused(page, served):
    store, base = served
    cases = batch(store, "nofilter", n=2)
    sign_in(page, served)
    assert (
        page.locator("#bulk-approve").is_disabled() and page.locator("#bulk-reject").is_disabled()
    )
    assert "need a filter" in page.locator("#bulk-needs-filter").inner_text()
    # a page served before the rule (or a hand-made form) posts anyway: the server refuses it
    page.evaluate("document.querySelector('#bulk-approve').disabled = false")
    page.once("dialog", lambda d: d.accept())
    page.click("#bulk-approve")
    page.wait_for_selector("p.error")
    assert page.locator("p.error").inner_text() == (
        "a bulk decision needs at least one filter (for everything pending: status=pending)"
    )
    assert all(store.get(c.id).status == "pending" for c in cases)
    page.goto(base + "/?status=pending")
    assert page.locator("#bulk-approve").is_enabled()


def test_script_payload_is_text_and_never_runs(page, served):
    store, base = served
    parent = seed_case()
    evil = Case.model_validate(
        {
            **child_case(parent, 4242).model_dump(mode="json"),
            "id": "",
            "conversation": [
                Turn(role="system", content=SYSTEM).model_dump(mode="json"),
                Turn(role="customer", content="mug cracked, refund W1001 " + PAYLOAD).model_dump(
                    mode="json"
                ),
            ],
        }
    )
    store.enqueue([evil], "xss", parents={parent.id: parent})
    sign_in(page, served)
    page.goto(f"{base}/case/{evil.id}")
    turn = page.locator("#conversation .role-customer pre.text")
    assert PAYLOAD in turn.inner_text()
    assert page.locator("#conversation script").count() == 0
    assert page.locator("#conversation img").count() == 0
    page.goto(f"{base}/?batch=xss")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    page.goto(f"{base}/case/{evil.id}")
    page.locator("#fulldiff summary").click()
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_requests_without_session_or_csrf_are_refused(browser, served):
    store, base = served
    case = batch(store, "auth", n=1)[0]
    anonymous = browser.new_context()
    r = anonymous.request.post(
        f"{base}/case/{case.id}/decide", form={"action": "approve", "version": "1"}
    )
    assert r.status == 401
    anonymous.close()
    context = browser.new_context()
    page = context.new_page()
    sign_in(page, served, "bob")
    r = context.request.post(
        f"{base}/case/{case.id}/decide", form={"action": "approve", "version": "1"}
    )
    assert r.status == 403
    r = context.request.post(f"{base}/bulk", form={"decision": "approve", "batch": "auth"})
    assert r.status == 403
    context.close()
    assert store.get(case.id).status == "pending"
    assert store.count(ItemFilter(batch_id="auth", status="approved")) == 0


def test_a_sign_in_form_on_another_origin_is_refused(browser, served):
    """Login CSRF: a page elsewhere (here a `data:` page, whose origin is `null`) that posts a
    token to the sign-in gets 403 and no session; the app's own sign-in page still works."""
    store, base = served
    token = auth.create_token(store, "mallory")
    context = browser.new_context()
    page = context.new_page()
    page.goto(
        "data:text/html,<form method=post action='"
        + base
        + f"/login'><input name=token value='{token}'><button id=go>go</button></form>"
    )
    with page.expect_response(base + "/login") as posted:
        page.click("#go")
    assert posted.value.status == 403
    assert "cross-site sign-in refused" in page.content()
    assert not [c for c in context.cookies() if c["name"] == "casemill_review"]
    sign_in(page, served, "ana")
    context.close()
