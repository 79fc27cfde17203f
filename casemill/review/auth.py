"""Reviewer tokens and web sessions. Only SHA-256 hashes of tokens and session ids are stored;
the token is shown once, when it is made. Each session carries its own CSRF token."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select

from casemill.errors import UserError
from casemill.review.schema import now_iso, sessions, tokens
from casemill.review.store import ReviewStore

TOKEN_PREFIX = "cmr_"
SESSION_HOURS = 12


@dataclass(frozen=True)
class Session:
    reviewer: str
    csrf: str
    expires_at: str


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_token(store: ReviewStore, reviewer: str) -> str:
    """A new sign-in token for `reviewer`; returned once, stored as a hash."""
    reviewer = reviewer.strip()
    if not reviewer or len(reviewer) > 120 or reviewer == "auto":
        raise UserError("--reviewer: give a name of 1-120 characters (not 'auto')")
    token = TOKEN_PREFIX + secrets.token_urlsafe(24)
    with store.engine.begin() as conn:
        conn.execute(
            tokens.insert().values(
                reviewer=reviewer, token_hash=_hash(token), created_at=now_iso(store.clock)
            )
        )
    return token


def revoke_tokens(store: ReviewStore, reviewer: str) -> int:
    with store.engine.begin() as conn:
        result = conn.execute(
            tokens.update()
            .where(tokens.c.reviewer == reviewer, tokens.c.revoked_at.is_(None))
            .values(revoked_at=now_iso(store.clock))
        )
        conn.execute(delete(sessions).where(sessions.c.reviewer == reviewer))
    return result.rowcount


def reviewer_for_token(store: ReviewStore, token: str) -> str | None:
    with store.engine.connect() as conn:
        row = conn.execute(
            select(tokens.c.reviewer).where(
                tokens.c.token_hash == _hash(token.strip()), tokens.c.revoked_at.is_(None)
            )
        ).first()
    return row.reviewer if row else None


def start_session(store: ReviewStore, reviewer: str) -> tuple[str, Session]:
    """A new session: returns the session id (for the cookie) and the session."""
    session_id = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(32)
    now = now_iso(store.clock)
    expires = now_iso(lambda: store.clock() + timedelta(hours=SESSION_HOURS))
    with store.engine.begin() as conn:
        conn.execute(
            sessions.insert().values(
                session_hash=_hash(session_id),
                reviewer=reviewer,
                csrf=csrf,
                created_at=now,
                expires_at=expires,
            )
        )
    return session_id, Session(reviewer, csrf, expires)


def session_for(store: ReviewStore, session_id: str | None) -> Session | None:
    if not session_id:
        return None
    with store.engine.connect() as conn:
        row = conn.execute(
            select(sessions).where(sessions.c.session_hash == _hash(session_id))
        ).first()
    if row is None or row.expires_at <= now_iso(store.clock):
        return None
    return Session(row.reviewer, row.csrf, row.expires_at)


def end_session(store: ReviewStore, session_id: str) -> None:
    with store.engine.begin() as conn:
        conn.execute(delete(sessions).where(sessions.c.session_hash == _hash(session_id)))


def csrf_ok(session: Session, sent: str | None) -> bool:
    return bool(sent) and hmac.compare_digest(session.csrf.encode(), (sent or "").encode())
