"""One model rate limit shared by every worker: requests and tokens per minute per endpoint.

The budget lives where the workers meet: a row per endpoint in the shared PostgreSQL store
(locked with ``FOR UPDATE``), or, for workers on one machine, a SQLite file in the cache
directory (``BEGIN IMMEDIATE`` is the file lock). A call takes its share of the current window
before it goes out and waits for the next window when the share is not there. A 429 from the
endpoint pauses the endpoint for every worker until its ``Retry-After`` has passed.
"""

from __future__ import annotations

import email.utils
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzzkit.paths import cache_dir
from long_term_memory.shared_store import connect, is_postgres

_COLUMNS = "window_start, requests, tokens, blocked_until"
_SCHEMA = ("CREATE TABLE IF NOT EXISTS lf_rate_limit (endpoint TEXT PRIMARY KEY, "
           "window_start DOUBLE PRECISION NOT NULL, requests INTEGER NOT NULL, "
           "tokens BIGINT NOT NULL, blocked_until DOUBLE PRECISION NOT NULL)")
DEFAULT_429_WAIT_S = 5.0
MAX_429_WAIT_S = 300.0


def retry_after(exc: BaseException, now: float | None = None) -> float | None:
    """Seconds a rate-limited (429) error asks to wait; None when ``exc`` is no 429.

    ``retry-after-ms``, then ``Retry-After`` in seconds or as an HTTP date; a 429 without
    either waits :data:`DEFAULT_429_WAIT_S`. Capped at :data:`MAX_429_WAIT_S`.
    """
    response = getattr(exc, "response", None)
    status = getattr(exc, "status_code", None) or getattr(response, "status_code", None)
    if status != 429:
        return None
    headers = getattr(response, "headers", None) or {}
    wait = DEFAULT_429_WAIT_S
    try:
        if headers.get("retry-after-ms"):
            wait = float(headers["retry-after-ms"]) / 1000
        elif headers.get("retry-after"):
            raw = headers["retry-after"].strip()
            if raw.replace(".", "", 1).isdigit():
                wait = float(raw)
            else:
                when = email.utils.parsedate_to_datetime(raw).timestamp()
                wait = when - (time.time() if now is None else now)
    except (ValueError, TypeError, OverflowError):
        wait = DEFAULT_429_WAIT_S
    return min(max(wait, 0.0), MAX_429_WAIT_S)


@dataclass
class RateLimit:
    """The budget of one endpoint in a store; ``clock``/``sleep`` are seams for tests."""

    store: str
    endpoint: str
    rpm: int = 0
    tpm: int = 0
    window_s: float = 60.0
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    granted: list[float] = field(default_factory=list)  # the window of each grant (tests read it)

    @contextmanager
    def _row(self) -> Iterator[tuple[list[Any], Callable[[list[Any]], None]]]:
        """The endpoint's row, locked for the block, and a function that writes it back."""
        if is_postgres(self.store):
            with connect(self.store, autocommit=True) as conn:
                conn.execute("SELECT pg_advisory_lock(hashtext('logicfuzz-rate-schema'))")
                conn.execute(_SCHEMA)
                conn.execute("SELECT pg_advisory_unlock(hashtext('logicfuzz-rate-schema'))")
                with conn.transaction():
                    conn.execute("INSERT INTO lf_rate_limit VALUES (%s, 0, 0, 0, 0) ON CONFLICT DO NOTHING",
                                 (self.endpoint,))
                    row = conn.execute(f"SELECT {_COLUMNS} FROM lf_rate_limit WHERE endpoint = %s "
                                       "FOR UPDATE", (self.endpoint,)).fetchone()
                    yield list(row), lambda r: conn.execute(
                        "UPDATE lf_rate_limit SET window_start = %s, requests = %s, tokens = %s, "
                        "blocked_until = %s WHERE endpoint = %s", (*r, self.endpoint))
            return
        path = Path(self.store) if self.store else cache_dir() / "rate_limit.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=60, isolation_level=None)
        try:
            db.execute(_SCHEMA.replace("DOUBLE PRECISION", "REAL").replace("BIGINT", "INTEGER"))
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT OR IGNORE INTO lf_rate_limit VALUES (?, 0, 0, 0, 0)", (self.endpoint,))
            row = db.execute(f"SELECT {_COLUMNS} FROM lf_rate_limit WHERE endpoint = ?",
                             (self.endpoint,)).fetchone()
            def save(r: list[Any]) -> None:
                db.execute("UPDATE lf_rate_limit SET window_start = ?, requests = ?, tokens = ?, "
                           "blocked_until = ? WHERE endpoint = ?", (*r, self.endpoint))

            yield list(row), save
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            db.close()

    def _try(self, tokens: int) -> float:
        """Take the share of one call if the window has it (0.0); else the seconds to wait."""
        with self._row() as (row, write):
            start, requests, used, blocked = row
            now = self.clock()
            if now < blocked:
                return blocked - now
            if now - start >= self.window_s:
                start, requests, used = now, 0, 0
            full = (self.rpm and requests + 1 > self.rpm) or (
                self.tpm and used and used + tokens > self.tpm)
            if full:
                write([start, requests, used, blocked])
                return max(start + self.window_s - now, 0.01)
            write([start, requests + 1, used + tokens, blocked])
            self.granted.append(start)
            return 0.0

    def acquire(self, tokens: int = 0) -> float:
        """Wait until the endpoint's budget has room for one call of ``tokens``; returns seconds waited."""
        if not self.rpm and not self.tpm and not is_postgres(self.store):
            return 0.0
        waited = 0.0
        while (wait := self._try(tokens)) > 0:
            self.sleep(wait)
            waited += wait
        return waited

    def pause(self, seconds: float) -> None:
        """Every worker waits ``seconds`` before its next call to this endpoint (a 429)."""
        with self._row() as (row, write):
            row[3] = max(row[3], self.clock() + seconds)
            write(row)


def rate_limit_for(ctx: Any) -> RateLimit | None:
    """The limit a run's real-model calls go through (None offline, or with nothing to share).

    The endpoint is the base URL and model: every worker calling it shares one budget.
    """
    if ctx.model == "offline" or not (ctx.store or ctx.rate_limit_rpm or ctx.rate_limit_tpm):
        return None
    base_url = ctx.base_url or os.environ.get("OPENAI_BASE_URL", "") or "default"
    return RateLimit(ctx.store, f"{base_url}#{ctx.model}", ctx.rate_limit_rpm, ctx.rate_limit_tpm)
