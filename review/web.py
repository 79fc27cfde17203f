"""The web review app: FastAPI with server-rendered Jinja2 pages (autoescaped; case text is never
marked safe), a token sign-in, an HttpOnly SameSite=Strict session cookie, a CSRF token on every
write, and security headers (a CSP that allows only the app's own script and style files).

Without a session a write gets 401 and a page redirects to the sign-in; without the session's
CSRF token a write gets 403 and changes nothing.

This module builds the app and holds what every page shares (`Web`: the store, the session, the
CSRF check of a write, rendering); the pages themselves are registered by `review.web_pages`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from casemill.errors import UserError
from review import auth
from review.errors import NotFound
from review.store import ReviewStore

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
COOKIE = "casemill_review"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class Web:
    """What the pages of one app share: the queue's store, its templates, and the callback
    that resumes a flow when a decision completes a batch."""

    def __init__(
        self,
        store: ReviewStore,
        on_batch_decided: Callable[[str], object] | None,
        secure_cookie: bool,
    ):
        self.store = store
        self.on_batch_decided = on_batch_decided
        self.secure_cookie = secure_cookie
        self.templates = Jinja2Templates(directory=str(HERE / "templates"))
        self.templates.env.autoescape = True

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
        self, request: Request, name: str, status_code: int = 200, **context
    ) -> HTMLResponse:
        return self.templates.TemplateResponse(request, name, context, status_code=status_code)


def create_app(
    store: ReviewStore,
    on_batch_decided: Callable[[str], object] | None = None,
    secure_cookie: bool = False,
) -> FastAPI:
    """The app over `store`. `on_batch_decided(batch_id)` runs in a background thread when a
    decision completes a batch (to resume a flow waiting for it)."""
    from review import web_pages

    app = FastAPI(title="Casemill review", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    web = Web(store, on_batch_decided, secure_cookie)
    render = web.render

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # noqa: ANN202
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        if not request.url.path.startswith("/static"):
            response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if (
            request.method == "GET"
            and exc.status_code == 401
            and not request.url.path.startswith("/api")
        ):
            return RedirectResponse("/login", status_code=303)
        return render(
            request, "error.html", status_code=exc.status_code, message=exc.detail, session=None
        )

    @app.exception_handler(UserError)
    async def user_error(request: Request, exc: UserError) -> Response:
        """A refused operation the page could not show in place (a case id not in the queue,
        mostly): its message on the error page, 404 for an unknown id, 422 otherwise."""
        code = 404 if isinstance(exc, NotFound) else 422
        return render(request, "error.html", status_code=code, message=str(exc), session=None)

    web_pages.sign_in(app, web)
    web_pages.queue(app, web)
    web_pages.case(app, web)
    web_pages.bulk(app, web)
    return app


def same_origin(request: Request) -> None:
    """Refuse a cross-site write: when the browser names an Origin, it must be this host."""
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
        raise HTTPException(403, "cross-site request refused")


def _safe_call(fn: Callable[[str], object], batch_id: str) -> None:
    try:
        fn(batch_id)
    except Exception:  # noqa: BLE001 - a failed resume must not break the review app
        log.exception("batch %s decided, but the decided-callback failed", batch_id)
