"""Fixtures of the review tests: stores on SQLite and PostgreSQL (a schema of its own per test,
dropped afterwards; skipped when no server answers), cases. The flow tests use the session's
Prefect test harness from tests/conftest.py."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from review_factory import child_case, seed_case
from sqlalchemy import create_engine, text

from casemill.review.schema import make_engine
from casemill.review.store import ReviewStore

PG_URL = os.environ.get("CASEMILL_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _pg_reason() -> str | None:
    try:
        engine = create_engine(PG_URL, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
        return None
    except Exception as exc:  # noqa: BLE001 - any failure means: no server to test against
        return f"no PostgreSQL server answers at {PG_URL} ({type(exc).__name__}); CI starts one"


@pytest.fixture(scope="session")
def pg_available() -> str | None:
    return _pg_reason()


def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'review.db'}"


@pytest.fixture
def pg_url(pg_available: str | None) -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a fresh schema, dropped after the test."""
    if pg_available:
        pytest.skip(pg_available)
    schema = f"review_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sqlite_url(tmp_path)
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(db_url: str) -> Iterator[ReviewStore]:
    engine = make_engine(db_url)
    yield ReviewStore(engine)
    engine.dispose()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[ReviewStore]:
    engine = make_engine(sqlite_url(tmp_path))
    yield ReviewStore(engine)
    engine.dispose()


@pytest.fixture
def parent():
    return seed_case()


@pytest.fixture
def children(parent):
    return [child_case(parent, n) for n in range(5)]


@pytest.fixture(autouse=True)
def empty_corpus(tmp_path_factory, monkeypatch) -> Path:
    """An empty corpus folder as the default corpus (`CASEMILL_CORPUS_DIR`): `review enqueue`
    and `export` without `--corpus` check it, and no test reads or writes the repository's
    own corpus/ or depends on the folder pytest runs in."""
    corpus = tmp_path_factory.mktemp("corpus")
    monkeypatch.setenv("CASEMILL_CORPUS_DIR", str(corpus))
    return corpus
