"""The web review app: FastAPI with server-rendered Jinja2 pages (autoescaped; case text is never
marked safe), a token sign-in (failed ones limited per client and logged; one posted from
another origin, or with `Origin: null`, refused), an HttpOnly SameSite=Strict session cookie, a
CSRF token on every write, and security headers (a CSP that allows only the app's own script and
style files).

Without a session a write gets 401 and a page redirects to the sign-in; without the session's
CSRF token a write gets 403 and changes nothing.

This module builds the app: its security headers and error pages; what every page shares is
`casemill.review.web_context.Web`, and the pages are registered by `casemill.review.web_pages`.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from casemill.errors import UserError
from casemill.review import web_pages
from casemill.review.errors import NotFound
from casemill.review.store import ReviewStore
from casemill.review.throttle import SignInThrottle
from casemill.review.web_context import HERE, Web

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


def create_app(
    store: ReviewStore,
    on_batch_decided: Callable[[str], object] | None = None,
    secure_cookie: bool = False,
    throttle: SignInThrottle | None = None,
) -> FastAPI:
    """The app over `store`. `on_batch_decided(batch_id)` runs in a background thread when a
    decision completes a batch (to resume a flow waiting for it). `throttle`: the limit on
    failed sign-ins (by default `casemill.review.throttle`'s)."""
    app = FastAPI(title="Casemill review", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    web = Web(store, on_batch_decided, secure_cookie, throttle)
    render = web.render

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # noqa: ANN202
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        # the sign-in form must name its origin (a sign-in with `Origin: null` is refused)
        login = request.url.path == "/login"
        response.headers["Referrer-Policy"] = "same-origin" if login else "no-referrer"
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
