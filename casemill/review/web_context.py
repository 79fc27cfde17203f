"""What every page of the web review app shares (`Web`): the queue's store, the reviewer's
session (the `casemill_review` cookie), the CSRF and same-origin checks of a write, rendering a
template, and resuming a flow when a decision completes a batch. `casemill.review.web` builds the app,
`casemill.review.web_pages` registers the pages on it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from casemill.review import auth
from casemill.review.store import ReviewStore
from casemill.review.throttle import SignInThrottle

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
COOKIE = "casemill_review"


class Web:
    """What the pages of one app share: the queue's store, its templates, and the callback
    that resumes a flow when a decision completes a batch."""

    def __init__(
        self,
        store: ReviewStore,
        on_batch_decided: Callable[[str], object] | None,
        secure_cookie: bool,
        throttle: SignInThrottle | None = None,
    ):
        self.store = store
        self.on_batch_decided = on_batch_decided
        self.secure_cookie = secure_cookie
        self.templates = Jinja2Templates(directory=str(HERE / "templates"))
        self.templates.env.autoescape = True
        self.throttle = throttle or SignInThrottle()

    def session_of(self, request: Request) -> auth.Session | None:
        return auth.session_for(self.store, request.cookies.get(COOKIE))

    def signed_in(self, request: Request) -> auth.Session:
        """The session of a page: 401 without one (which sends a page to the sign-in)."""
        session = self.session_of(request)
        if session is None:
            raise HTTPException(401)
        return session

    async def writer(self, request: Request) -> tuple[auth.Session, dict[str, str]]:
        """The session and form of a write: 401 without a session, 403 without its CSRF token."""
        session = self.session_of(request)
        if session is None:
            raise HTTPException(401, "sign in first: no valid session")
        form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
        sent = form.get("csrf") or request.headers.get("x-csrf-token")
        if not auth.csrf_ok(session, sent):
            raise HTTPException(403, "missing or wrong CSRF token; reload the page")
        same_origin(request)
        return session, form

    def after_decision(self, batch_id: str) -> None:
        if self.on_batch_decided is None:
            return
        if self.store.batch_status(batch_id).decided:
            threading.Thread(
                target=_safe_call, args=(self.on_batch_decided, batch_id), daemon=True
            ).start()

    def render(
        self,
        request: Request,
        name: str,
        status_code: int = 200,
        headers: dict[str, str] | None = None,
        **context,
    ) -> HTMLResponse:
        return self.templates.TemplateResponse(
            request, name, context, status_code=status_code, headers=headers
        )


def same_origin(request: Request) -> None:
    """Refuse a cross-site write: when the browser names an Origin, it must be this host. An
    `Origin: null` passes: the pages' `Referrer-Policy: no-referrer` makes a browser send it
    on a form of the app's own (a write also needs the session's CSRF token)."""
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
        raise HTTPException(403, "cross-site request refused")


def sign_in_origin(request: Request) -> None:
    """Refuse a sign-in posted from anywhere but the sign-in page (login CSRF: a foreign page,
    a sandboxed frame or a `data:` page signing the victim in as the attacker). There is no
    session, hence no CSRF token, yet: an Origin, when the browser sends one, must be this host,
    and `null` is refused (the sign-in page is served with `Referrer-Policy: same-origin`, so
    a browser names the real origin there), as is a request the browser marks cross-site."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise HTTPException(403, "cross-site sign-in refused")
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        raise HTTPException(403, "cross-site sign-in refused")


def _safe_call(fn: Callable[[str], object], batch_id: str) -> None:
    try:
        fn(batch_id)
    except Exception:  # noqa: BLE001 - a failed resume must not break the review app
        log.exception("batch %s decided, but the decided-callback failed", batch_id)
