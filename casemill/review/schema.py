"""Tables of the review queue, the engine factory, and the schema migrations.

SQLite (WAL mode, every transaction `BEGIN IMMEDIATE`, so concurrent writers queue on the busy
timeout instead of failing) by default; PostgreSQL by URL. Migrations are named functions applied
in order and recorded in `review_schema`; opening a store applies the missing ones.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    select,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from casemill.errors import UserError

log = logging.getLogger(__name__)

metadata = MetaData()

# PostgreSQL enforces these lengths (SQLite does not): the store checks them first, so a name
# too long is the same clear error on both databases
BATCH_ID_MAX = 120
NAME_MAX = 120  # reviewers and other actors


def check_name(what: str, value: str, limit: int) -> None:
    """A batch id or a reviewer's name the queue can store, refused the same way on SQLite as
    on PostgreSQL (where a longer one was a raw database error)."""
    if value.strip() and len(value) <= limit:
        return
    shown = value if len(value) <= 40 else value[:40] + "…"
    raise UserError(f"{what} {shown!r} is {len(value)} characters long; give 1 to {limit}")


schema_table = Table(
    "review_schema",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("name", String(80), nullable=False),
    Column("applied_at", String(40), nullable=False),
)

batches = Table(
    "review_batches",
    metadata,
    Column("batch_id", String(BATCH_ID_MAX), primary_key=True),
    Column("created_at", String(40), nullable=False),
    Column("policy", String(16), nullable=False, default="human"),
    Column("note", Text, nullable=False, default=""),
    Column("closed_at", String(40)),
)

items = Table(
    "review_items",
    metadata,
    Column("case_id", String(80), primary_key=True),
    Column("batch_id", String(BATCH_ID_MAX), nullable=False, index=True),
    Column("position", Integer, nullable=False),
    Column("status", String(16), nullable=False, index=True),
    Column("case_json", Text, nullable=False),
    Column("current_id", String(80), nullable=False),
    Column("original_json", Text, nullable=False),
    Column("parent_id", Text),  # columns filled from a case's own data are unbounded (m004)
    Column("parent_json", Text),
    Column("findings_json", Text, nullable=False, default="[]"),
    Column("valid", Boolean, nullable=False),
    Column("origin", String(32), nullable=False, index=True),
    Column("operator", Text, nullable=False, index=True),
    Column("intents", Text, nullable=False),
    Column("category", String(32), nullable=False),
    Column("lease_holder", String(NAME_MAX)),
    Column("lease_expires", String(40)),
    Column("version", Integer, nullable=False),
    Column("reviewer", String(NAME_MAX)),
    Column("decided_at", String(40)),
    Column("reason", Text),
    Column("edits_json", Text, nullable=False, default="[]"),
    Column("auto_approved", Boolean, nullable=False, default=False),
    Column("double_review", Boolean, nullable=False, default=False),
    Column("changed_by", String(NAME_MAX)),
    Column("enqueued_at", String(40), nullable=False),
    Column("exported_at", String(40)),
    Column("corpus_version", Integer),
)

audit = Table(
    "review_audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("case_id", String(80), nullable=False, index=True),
    Column("batch_id", String(BATCH_ID_MAX), nullable=False, index=True),
    Column("actor", String(NAME_MAX), nullable=False),
    Column("at", String(40), nullable=False),
    Column("action", String(32), nullable=False),
    Column("before_json", Text, nullable=False),
    Column("after_json", Text, nullable=False),
)

tokens = Table(
    "review_tokens",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("reviewer", String(120), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created_at", String(40), nullable=False),
    Column("revoked_at", String(40)),
)

sessions = Table(
    "review_sessions",
    metadata,
    Column("session_hash", String(64), primary_key=True),
    Column("reviewer", String(120), nullable=False),
    Column("csrf", String(64), nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("expires_at", String(40), nullable=False),
)

second_opinions = Table(
    "review_second",
    metadata,
    Column("case_id", String(80), primary_key=True),
    Column("reviewer", String(120), nullable=False),
    Column("decision", String(16), nullable=False),
    Column("at", String(40), nullable=False),
)


def now_iso(clock: Callable[[], datetime] | None = None) -> str:
    """A fixed-width UTC timestamp, so that string order is time order."""
    moment = (clock or (lambda: datetime.now(UTC)))().astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


# -- migrations ---------------------------------------------------------------------------------
def m001_queue(conn: Connection) -> None:
    """The queue: batches, items, audit log."""
    for table in (batches, items, audit):
        table.create(conn, checkfirst=True)


def m002_auth(conn: Connection) -> None:
    """Reviewer tokens (hashes only) and web sessions."""
    for table in (tokens, sessions):
        table.create(conn, checkfirst=True)


def m003_double_review(conn: Connection) -> None:
    """Second opinions for double review of a sample."""
    second_opinions.create(conn, checkfirst=True)


def m004_unbounded_case_columns(conn: Connection) -> None:
    """The columns filled from a case's own data (its intents, its last operator's name, its
    first parent's id) become TEXT: a mined case with many or long intents overflowed
    VARCHAR(400) on PostgreSQL (SQLite never enforced the lengths, so nothing to do there)."""
    if conn.dialect.name != "postgresql":
        return
    for column in ("intents", "operator", "parent_id"):
        conn.execute(text(f"ALTER TABLE review_items ALTER COLUMN {column} TYPE TEXT"))


def m005_drop_empty_batches(conn: Connection) -> None:
    """Batches that never held a case (an enqueue whose cases were all queued in other batches
    made one) are removed: they sat in `review status` forever, never decided."""
    held = select(items.c.batch_id).distinct()
    conn.execute(batches.delete().where(batches.c.batch_id.not_in(held)))


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (
    m001_queue,
    m002_auth,
    m003_double_review,
    m004_unbounded_case_columns,
    m005_drop_empty_batches,
)


def migrate(engine: Engine, clock: Callable[[], datetime] | None = None) -> list[str]:
    """Apply the missing migrations in order; returns the names applied."""
    applied: list[str] = []
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(7243911)"))
        schema_table.create(conn, checkfirst=True)
        done = set(conn.execute(select(schema_table.c.version)).scalars())
        for number, step in enumerate(MIGRATIONS, start=1):
            if number in done:
                continue
            step(conn)
            conn.execute(
                schema_table.insert().values(
                    version=number, name=step.__name__, applied_at=now_iso(clock)
                )
            )
            applied.append(step.__name__)
    if applied:
        log.info("review store: applied migrations %s", ", ".join(applied))
    return applied


def schema_version(engine: Engine) -> int:
    with engine.connect() as conn:
        return (
            conn.execute(select(schema_table.c.version).order_by(-schema_table.c.version)).scalar()
            or 0
        )


# -- engines ------------------------------------------------------------------------------------
def _sqlite_pragmas(dbapi_conn, _record) -> None:  # noqa: ANN001 (DB-API connection)
    dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE")


def unreachable(engine: Engine, exc: Exception) -> str:
    """What to tell a user whose queue database cannot be opened: where (password hidden), the
    driver's reason in one line, and where the URL comes from."""
    where = engine.url.render_as_string(hide_password=True)
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
    return (
        f"cannot open the review queue at {where}: {reason}; check --db or CASEMILL_REVIEW_DB "
        "(is the server running, does the database exist?)"
    )


def make_engine(url: str, **kwargs) -> Engine:
    """An engine for `url`: SQLite gets WAL mode and immediate transactions (its folder is
    created); PostgreSQL gets a pool sized for a small team. A string that is no database URL is
    a `UserError` (the URL is not repeated: it may hold a password)."""
    try:
        make_url(url)
    except ArgumentError as exc:
        raise UserError(
            "the review queue database (--db or CASEMILL_REVIEW_DB) is not a database URL; "
            "use e.g. sqlite:///.casemill/review.db or postgresql+psycopg://user@host:5432/db"
        ) from exc
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1] if "///" in url else ""
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"timeout": 60, "check_same_thread": False}, **kwargs
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    kwargs.setdefault("pool_size", 12)
    kwargs.setdefault("max_overflow", 8)
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, **kwargs)
