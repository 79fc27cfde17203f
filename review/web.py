"""The web review app: FastAPI with server-rendered Jinja2 pages (autoescaped; case text is never
marked safe), a token sign-in, an HttpOnly SameSite=Strict session cookie, a CSRF token on every
write, and security headers (a CSP that allows only the app's own script and style files).

Without a session a write gets 401 and a page redirects to the sign-in; without the session's
CSRF token a write gets 403 and changes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from casemill.errors import UserError
from review import auth
from review.errors import EditRefused, NotFound, ReviewError, StaleWrite
from review.forms import OUTCOMES, parse_calls, parse_expected, tool_names, with_calls
from review.items import STATUSES, Item, ItemFilter
from review.present import first_change, item_view, needs_label, params_text
from review.schema import now_iso
from review.store import ReviewStore

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
COOKIE = "casemill_review"
FILTER_KEYS = ("status", "batch", "origin", "operator", "intent")
PAGE_SIZE = 100
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
NOTICES = {
    "approved": "Approved.",
    "rejected": "Rejected.",
    "undone": "Decision undone; the case is pending again.",
    "saved": "Edit saved and validated.",
    "empty": "Nothing left to review for this filter.",
}


def _filter_from(params) -> ItemFilter:  # noqa: ANN001 - a Starlette mapping
    values = {k: (params.get(k) or "").strip() or None for k in FILTER_KEYS}
    if values["status"] not in (None, *STATUSES):
        values["status"] = None
    return ItemFilter(
        status=values["status"],
        batch_id=values["batch"],
        origin=values["origin"],
        operator=values["operator"],
        intent=values["intent"],
    )


def _query(flt: ItemFilter, **extra: str) -> str:
    pairs = {
        "status": flt.status,
        "batch": flt.batch_id,
        "origin": flt.origin,
        "operator": flt.operator,
        "intent": flt.intent,
        **extra,
    }
    return urlencode({k: v for k, v in pairs.items() if v})


def create_app(
    store: ReviewStore,
    on_batch_decided: Callable[[str], object] | None = None,
    secure_cookie: bool = False,
) -> FastAPI:
    """The app over `store`. `on_batch_decided(batch_id)` runs in a background thread when a
    decision completes a batch (to resume a flow waiting for it)."""
    app = FastAPI(title="Casemill review", docs_url=None, redoc_url=None, openapi_url=None)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.autoescape = True
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

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

    def session_of(request: Request) -> auth.Session | None:
        return auth.session_for(store, request.cookies.get(COOKIE))

    async def writer(request: Request) -> tuple[auth.Session, dict[str, str]]:
        """The session and form of a write: 401 without a session, 403 without its CSRF token."""
        session = session_of(request)
        if session is None:
            raise HTTPException(401, "sign in first: no valid session")
        form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
        sent = form.get("csrf") or request.headers.get("x-csrf-token")
        if not auth.csrf_ok(session, sent):
            raise HTTPException(403, "missing or wrong CSRF token; reload the page")
        same_origin(request)
        return session, form

    def after_decision(batch_id: str) -> None:
        if on_batch_decided is None:
            return
        if store.batch_status(batch_id).decided:
            threading.Thread(
                target=_safe_call, args=(on_batch_decided, batch_id), daemon=True
            ).start()

    def render(request: Request, name: str, status_code: int = 200, **context) -> HTMLResponse:
        return templates.TemplateResponse(request, name, context, status_code=status_code)

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

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request) -> HTMLResponse:
        return render(request, "login.html", session=None, error=None)

    @app.post("/login")
    async def login(request: Request) -> Response:
        same_origin(request)
        form = await request.form()
        reviewer = auth.reviewer_for_token(store, str(form.get("token") or ""))
        if reviewer is None:
            return render(
                request,
                "login.html",
                status_code=401,
                session=None,
                error="Unknown or revoked token.",
            )
        session_id, _ = auth.start_session(store, reviewer)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            COOKIE,
            session_id,
            httponly=True,
            samesite="strict",
            secure=secure_cookie,
            max_age=auth.SESSION_HOURS * 3600,
            path="/",
        )
        return response

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        await writer(request)
        auth.end_session(store, request.cookies.get(COOKIE, ""))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.get("/", response_class=HTMLResponse)
    def queue(request: Request) -> HTMLResponse:
        session = session_of(request)
        if session is None:
            raise HTTPException(401)
        flt = _filter_from(request.query_params)
        total = store.count(flt)
        pages = max(1, -(-total // PAGE_SIZE))
        page = min(_page(request.query_params.get("page")), pages - 1)
        rows = store.list(flt, limit=PAGE_SIZE, offset=page * PAGE_SIZE)
        return render(
            request,
            "queue.html",
            session=session,
            flt=flt,
            rows=rows,
            total=total,
            page=page,
            pages=pages,
            page_size=PAGE_SIZE,
            facets=store.facets(),
            statuses=STATUSES,
            batches=store.batches(),
            query=_query(flt),
            notice=_notice(request),
            first_change=first_change,
            needs_label=needs_label,
        )

    @app.get("/next")
    def next_case(request: Request) -> Response:
        session = session_of(request)
        if session is None:
            raise HTTPException(401)
        flt = _filter_from(request.query_params)
        item = store.claim_next(session.reviewer, flt)
        if item is None:
            return RedirectResponse("/?" + _query(flt, notice="empty"), status_code=303)
        extra = {
            k: request.query_params[k] for k in ("notice", "last") if request.query_params.get(k)
        }
        return RedirectResponse(f"/case/{item.case_id}?" + _query(flt, **extra), status_code=303)

    def case_page(
        request: Request,
        session: auth.Session,
        case_id: str,
        status_code: int = 200,
        errors=(),
        form=None,
    ) -> HTMLResponse:
        item = store.get(case_id)
        lease_note = None
        mine = item.lease_holder == session.reviewer and (item.lease_expires or "") > now_iso(
            store.clock
        )
        if item.status == "pending" and not mine:
            try:
                item = store.claim(case_id, session.reviewer)
            except ReviewError as exc:
                lease_note = str(exc)
        flt = _filter_from(request.query_params)
        prev_id, next_id = store.neighbours(case_id, flt)
        status = store.batch_status(item.batch_id)
        last = _undoable(store, request.query_params.get("last"), case_id, session.reviewer)
        return render(
            request,
            "case.html",
            status_code=status_code,
            session=session,
            view=item_view(item),
            item=item,
            flt=flt,
            query=_query(flt),
            prev_id=prev_id,
            next_id=next_id,
            tools=tool_names(item.case),
            outcomes=OUTCOMES,
            params_text=params_text,
            errors=list(errors),
            form=form or {},
            lease_note=lease_note,
            batch=status,
            notice=_notice(request),
            last=last,
        )

    @app.get("/case/{case_id}", response_class=HTMLResponse)
    def show_case(request: Request, case_id: str) -> HTMLResponse:
        session = session_of(request)
        if session is None:
            raise HTTPException(401)
        return case_page(request, session, case_id)

    @app.post("/case/{case_id}/decide")
    async def decide(request: Request, case_id: str) -> Response:
        session, form = await writer(request)
        action = form.get("action", "")
        version = _version(form)
        flt = _filter_from(request.query_params)
        try:
            if action == "approve":
                item = store.approve(
                    case_id, session.reviewer, version, notes=form.get("reason") or None
                )
            elif action == "reject":
                item = store.reject(
                    case_id, session.reviewer, version, reason=form.get("reason", "")
                )
            elif action == "undo":
                item = store.undo(case_id, session.reviewer, version)
                return RedirectResponse(
                    f"/case/{case_id}?" + _query(flt, notice="undone"), status_code=303
                )
            else:
                raise HTTPException(400, f"unknown action {action!r}")
        except UserError as exc:
            code = 409 if isinstance(exc, StaleWrite) else 422
            return case_page(request, session, case_id, status_code=code, errors=[str(exc)])
        after_decision(item.batch_id)
        notice = "approved" if action == "approve" else "rejected"
        # `last`: the next page offers to undo this decision (u), as the terminal does
        return RedirectResponse(
            "/next?" + _query(flt, notice=notice, last=case_id), status_code=303
        )

    @app.post("/case/{case_id}/calls")
    async def edit_calls(request: Request, case_id: str) -> Response:
        session, form = await writer(request)
        item = store.get(case_id)
        version = _version(form)
        calls, problems = parse_calls(item.case, form)
        updates, more = parse_expected(form)
        problems += more
        if not problems:
            try:
                store.edit(
                    case_id, session.reviewer, version, with_calls(item.case, calls, updates)
                )
            except EditRefused as exc:
                problems = [str(f) for f in exc.findings]
            except UserError as exc:
                problems = [str(exc)]
        if problems:
            return case_page(request, session, case_id, status_code=422, errors=problems, form=form)
        return RedirectResponse(
            f"/case/{case_id}?" + _query(_filter_from(request.query_params), notice="saved"),
            status_code=303,
        )

    @app.post("/bulk")
    async def bulk(request: Request) -> Response:
        session, form = await writer(request)
        flt = _filter_from(form)
        decision = {"approve": "approved", "reject": "rejected"}.get(form.get("decision", ""))
        if decision is None:
            raise HTTPException(400, "decision must be approve or reject")
        try:
            result = store.bulk_decide(
                flt, decision, session.reviewer, reason=form.get("reason") or None
            )
        except UserError as exc:
            raise HTTPException(422, str(exc)) from exc
        for batch_id in {store.get(c).batch_id for c in result.changed}:
            after_decision(batch_id)
        notice = f"bulk:{decision}:{len(result.changed)}:{len(result.skipped)}"
        return RedirectResponse("/?" + _query(flt, notice=notice), status_code=303)

    @app.get("/api/status")
    def api_status(request: Request) -> JSONResponse:
        if session_of(request) is None:
            raise HTTPException(401, "sign in first")
        return JSONResponse([b.as_dict() for b in store.batches()])

    return app


def _undoable(store: ReviewStore, case_id: str | None, current: str, reviewer: str) -> Item | None:
    """The case the reviewer decided just before this page (`last` in the URL), when that
    decision is still theirs and can be undone: decided by them, not exported, batch open."""
    if not case_id or case_id == current:
        return None
    try:
        item = store.get(case_id)
    except NotFound:
        return None
    if item.status == "pending" or item.reviewer != reviewer or item.exported_at:
        return None
    return None if store.batch_status(item.batch_id).closed else item


def _page(raw: str | None) -> int:
    """The queue page a link asks for, from 0: anything but a whole number is the first page
    (a hand-edited URL gets the queue, not an error), past the end the caller clamps."""
    raw = (raw or "").strip()
    return int(raw) if raw.isdigit() else 0


def _version(form: dict[str, str]) -> int | None:
    """The item version a write form says the reviewer saw (None when it sends none)."""
    raw = (form.get("version") or "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise HTTPException(400, f"version must be a whole number, got {raw[:40]!r}")
    return int(raw) or None


def same_origin(request: Request) -> None:
    """Refuse a cross-site write: when the browser names an Origin, it must be this host."""
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
        raise HTTPException(403, "cross-site request refused")


def _notice(request: Request) -> str | None:
    code = request.query_params.get("notice") or ""
    if code.startswith("bulk:"):
        parts = code.split(":")
        if len(parts) == 4 and parts[2].isdigit() and parts[3].isdigit():
            if parts[1] == "approved":
                why = "failing validation, needing a human label, or held by another reviewer"
                return f"Bulk: {parts[2]} approved, {parts[3]} skipped ({why})."
            return f"Bulk: {parts[2]} rejected, {parts[3]} skipped (held by another reviewer)."
        return None
    return NOTICES.get(code)


def _safe_call(fn: Callable[[str], object], batch_id: str) -> None:
    try:
        fn(batch_id)
    except Exception:  # noqa: BLE001 - a failed resume must not break the review app
        log.exception("batch %s decided, but the decided-callback failed", batch_id)
