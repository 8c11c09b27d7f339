"""The shared store's address: ``postgresql://...`` (many workers) or nothing (local files).

One URL (``--store`` on the CLI, ``bank.store`` in the memory config, ``store`` in the run
context) puts LangGraph checkpoints, the experience bank and the model rate limit in one
PostgreSQL database. Every problem reaching it becomes a :class:`StoreError`: one line saying
what was wrong and what to do; the password never appears in it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

SCHEMES = ("postgresql", "postgres")
CONNECT_TIMEOUT_S = 10


class StoreError(ValueError):
    """The shared store cannot be used (bad URL, unreachable, missing driver, refused)."""

    def __init__(self, message: str, hint: str = "") -> None:
        """``message`` already says what to do; ``hint`` is optional extra advice."""
        super().__init__(message)
        self.message, self.hint = message, hint

    def __str__(self) -> str:
        return self.message


def is_postgres(url: str) -> bool:
    """True for a ``postgresql://`` (or ``postgres://``) URL."""
    return urlsplit(url.strip()).scheme in SCHEMES if url else False


def shown(url: str) -> str:
    """``url`` without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def check_url(url: str) -> str:
    """``url`` stripped, or :class:`StoreError` when it is not a PostgreSQL URL with a host.

    Raises:
        StoreError: the URL has another scheme or no host/database.
    """
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise StoreError(f"--store {shown(url)!r} is not a PostgreSQL URL: give "
                         "postgresql://USER@HOST:PORT/DATABASE (or leave it out for local files)")
    try:
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        raise StoreError(f"--store {shown(url)!r} has a port that is not a number: give "
                         "postgresql://USER@HOST:PORT/DATABASE") from None
    if not parts.path.strip("/") and not parts.hostname:
        raise StoreError(f"--store {shown(url)!r} names no host and no database: give "
                         "postgresql://USER@HOST:PORT/DATABASE")
    return url


def _driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise StoreError("a PostgreSQL store needs psycopg: install the extra with "
                         "pip install -e '.[postgres]'") from None
    return psycopg


def connect(url: str, *, autocommit: bool = False) -> Any:
    """An open psycopg connection to ``url``.

    Raises:
        StoreError: bad URL, driver missing, server unreachable or login refused.
    """
    psycopg = _driver()
    url = check_url(url)
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
        raise StoreError(f"cannot use PostgreSQL store {shown(url)}: {first[:200]}; start the "
                         "server or fix --store / bank.store") from None
    except (ValueError, UnicodeError) as exc:  # libpq refuses a malformed URL this way
        raise StoreError(f"--store {shown(url)!r} is not a usable PostgreSQL URL ({exc}): give "
                         "postgresql://USER@HOST:PORT/DATABASE") from None
