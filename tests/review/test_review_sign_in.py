"""Signing in to the web review app: failed sign-ins limited per client and logged (without the
token), a sign-in from another origin or with `Origin: null` refused (login CSRF)."""

from __future__ import annotations

import logging
from collections import Counter

import pytest
from fastapi.testclient import TestClient

from casemill.review import auth
from casemill.review.throttle import SignInThrottle
from casemill.review.web import create_app
from casemill.review.web_context import COOKIE

HOST = "http://127.0.0.1"


class Clock:
    """Seconds that pass only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(sqlite_store, clock):
    return create_app(sqlite_store, throttle=SignInThrottle(5, 60.0, clock=clock))


def _client(app, address: str = "10.0.0.1") -> TestClient:
    return TestClient(app, base_url=HOST, client=(address, 50000))


def test_failed_sign_ins_are_limited_per_client_until_the_window_passes(app, sqlite_store, clock):
    token = auth.create_token(sqlite_store, "ana")
    with _client(app) as guesser, _client(app, "10.0.0.2") as other:
        codes = Counter(
            guesser.post("/login", data={"token": f"cmr_guess{i}"}).status_code for i in range(300)
        )
        assert codes == {401: 5, 429: 295}
        refused = guesser.post("/login", data={"token": token}, follow_redirects=False)
        assert refused.status_code == 429 and COOKIE not in refused.cookies  # not even checked
        assert refused.headers["retry-after"] == "60"
        assert "Too many failed sign-ins; try again in 60 seconds" in refused.text
        ok = other.post("/login", data={"token": token}, follow_redirects=False)
        assert ok.status_code == 303 and COOKIE in ok.cookies  # another client is not limited
        clock.now += 59
        assert guesser.post("/login", data={"token": token}).status_code == 429
        clock.now += 2
        ok = guesser.post("/login", data={"token": token}, follow_redirects=False)
        assert ok.status_code == 303 and COOKIE in ok.cookies


def test_a_successful_sign_in_does_not_count(app, sqlite_store):
    token = auth.create_token(sqlite_store, "ana")
    with _client(app) as c:
        for _ in range(4):
            assert c.post("/login", data={"token": "nope"}).status_code == 401
        for _ in range(10):
            assert (
                c.post("/login", data={"token": token}, follow_redirects=False).status_code == 303
            )
        assert c.post("/login", data={"token": "nope"}).status_code == 401
        assert c.post("/login", data={"token": "nope"}).status_code == 429


def test_each_failed_sign_in_is_logged_with_the_client_and_never_the_token(app, caplog):
    caplog.set_level(logging.INFO)
    with _client(app) as c:
        for i in range(7):
            c.post("/login", data={"token": f"cmr_secret{i}"})
    failed = [r.getMessage() for r in caplog.records if "failed sign-in" in r.getMessage()]
    assert len(failed) == 7
    assert all(m.startswith("failed sign-in from 10.0.0.1 (") for m in failed)
    assert [m.split("(")[1].split(" ")[0] for m in failed] == ["1", "2", "3", "4", "5", "6", "7"]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "cmr_secret" not in logged


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "null"},
        {"origin": "http://evil.example"},
        {"origin": "http://127.0.0.1.evil.example"},
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
    ],
)
def test_a_sign_in_from_elsewhere_is_refused_even_with_a_good_token(app, sqlite_store, headers):
    token = auth.create_token(sqlite_store, "ana")
    with _client(app) as c:
        r = c.post("/login", data={"token": token}, headers=headers, follow_redirects=False)
        assert r.status_code == 403 and "cross-site sign-in refused" in r.text
        assert COOKIE not in r.cookies and COOKIE not in c.cookies


@pytest.mark.parametrize(
    "headers", [{}, {"origin": HOST}, {"origin": HOST, "sec-fetch-site": "same-origin"}]
)
def test_a_sign_in_from_the_sign_in_page_is_accepted(app, sqlite_store, headers):
    token = auth.create_token(sqlite_store, "ana")
    with _client(app) as c:
        r = c.post("/login", data={"token": token}, headers=headers, follow_redirects=False)
        assert r.status_code == 303 and COOKIE in r.cookies


def test_the_sign_in_page_names_its_origin_to_itself_and_only_there(app, sqlite_store):
    """Under `no-referrer` a browser posts a form with `Origin: null`: the sign-in page is
    `same-origin` (its form names the origin to the app alone), every other page keeps
    `no-referrer`."""
    with _client(app) as c:
        assert c.get("/login").headers["referrer-policy"] == "same-origin"
        assert c.post("/login", data={"token": "x"}).headers["referrer-policy"] == "same-origin"
        assert c.get("/", follow_redirects=False).headers["referrer-policy"] == "no-referrer"
        assert c.get("/static/review.css").headers["referrer-policy"] == "no-referrer"


def test_the_throttle_forgets_the_client_failing_least_recently(clock, monkeypatch):
    import casemill.review.throttle as throttle_module

    monkeypatch.setattr(throttle_module, "MAX_CLIENTS", 3)
    throttle = SignInThrottle(1, 60.0, clock=clock)
    for client in ("a", "b", "c", "d"):
        throttle.failed(client)
    assert [throttle.retry_after(c) for c in "abcd"] == [None, 60, 60, 60]
