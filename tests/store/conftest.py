"""A PostgreSQL 15 server for the whole session (skipped with the reason when it cannot start)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from benchkit.pg_server import PgServer, missing


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One server per test session, stopped at the end."""
    why = missing()
    if why:
        pytest.skip(why)
    server = PgServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer, request: pytest.FixtureRequest) -> str:
    """A fresh, empty database for one test."""
    return pg_server.database(re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:60])
