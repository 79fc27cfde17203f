"""The pages of the web review app, registered on it by group: signing in and out, the queue
(with `/next`, the next case to review, and `/api/status`), and a case (seeing, deciding and
editing it; bulk decisions). What they share is `casemill.review.web_context.Web`."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from casemill.errors import UserError
from casemill.review import auth
from casemill.review.errors import EditRefused, NotFound, ReviewError, StaleWrite
from casemill.review.forms import OUTCOMES, parse_calls, parse_expected, tool_names, with_calls
from casemill.review.items import STATUSES, Item, ItemFilter
from casemill.review.present import first_change, item_view, needs_label, params_text
from casemill.review.schema import now_iso
from casemill.review.store import ReviewStore
from casemill.review.web_context import COOKIE, Web, sign_in_origin

FILTER_KEYS = ("status", "batch", "origin", "operator", "intent")
PAGE_SIZE = 100
NOTICES = {
    "approved": "Approved.",
    "rejected": "Rejected.",
    "undone": "Decision undone; the case is pending again.",
    "saved": "Edit saved and validated.",
    "empty": "Nothing left to review for this filter.",
}


def sign_in(app: FastAPI, web: Web) -> None:
    """`/login` (the page, and the token it posts) and `/logout`."""
    store, render, writer = web.store, web.render, web.writer

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request) -> HTMLResponse:
        return render(request, "login.html", session=None, error=None)

    @app.post("/login")
    async def login(request: Request) -> Response:
        sign_in_origin(request)
        client = request.client.host if request.client else "unknown"
        wait = web.throttle.retry_after(client)
        if wait is not None:
            web.throttle.failed(client)
            return render(
                request,
                "login.html",
                status_code=429,
                session=None,
                error=f"Too many failed sign-ins; try again in {wait} seconds.",
                headers={"Retry-After": str(wait)},
            )
        form = await request.form()
        reviewer = auth.reviewer_for_token(store, str(form.get("token") or ""))
        if reviewer is None:
            web.throttle.failed(client)
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
            secure=web.secure_cookie,
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


def queue(app: FastAPI, web: Web) -> None:
    """`/` (the queue, filtered and paged), `/next` (claim the next case) and `/api/status`."""
    store, render, signed_in = web.store, web.render, web.signed_in

    @app.get("/", response_class=HTMLResponse)
    def queue(request: Request) -> HTMLResponse:
        session = signed_in(request)
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
        session = signed_in(request)
        flt = _filter_from(request.query_params)
        item = store.claim_next(session.reviewer, flt)
        if item is None:
            return RedirectResponse("/?" + _query(flt, notice="empty"), status_code=303)
        extra = {
            k: request.query_params[k] for k in ("notice", "last") if request.query_params.get(k)
        }
        return RedirectResponse(f"/case/{item.case_id}?" + _query(flt, **extra), status_code=303)

    @app.get("/api/status")
    def api_status(request: Request) -> JSONResponse:
        if web.session_of(request) is None:
            raise HTTPException(401, "sign in first")
        return JSONResponse([b.as_dict() for b in store.batches()])


def case(app: FastAPI, web: Web) -> None:
    """`/case/{id}` (see it, claiming it), and its decision and edit posts."""
    store, signed_in, writer = web.store, web.signed_in, web.writer
    after_decision = web.after_decision

    @app.get("/case/{case_id}", response_class=HTMLResponse)
    def show_case(request: Request, case_id: str) -> HTMLResponse:
        session = signed_in(request)
        return case_page(web, request, session, case_id)

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
            return case_page(web, request, session, case_id, status_code=code, errors=[str(exc)])
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
            return case_page(
                web, request, session, case_id, status_code=422, errors=problems, form=form
            )
        return RedirectResponse(
            f"/case/{case_id}?" + _query(_filter_from(request.query_params), notice="saved"),
            status_code=303,
        )


def bulk(app: FastAPI, web: Web) -> None:
    """`/bulk`: approve or reject every case a filter selects."""
    store, writer, after_decision = web.store, web.writer, web.after_decision

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


def case_page(
    web: Web,
    request: Request,
    session: auth.Session,
    case_id: str,
    status_code: int = 200,
    errors=(),
    form=None,
) -> HTMLResponse:
    """A case's page (claimed for the reviewer while pending and not held by another), with
    the errors of a refused write and the form as sent."""
    store, render = web.store, web.render
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
    return int(raw)  # (0, which no item has, is stale: versions start at 1)


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
