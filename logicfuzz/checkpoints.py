"""Where a target's graph checkpoints go: its own SQLite file, or the shared PostgreSQL store.

With ``Context.store`` set, every worker checkpoints into one PostgreSQL database
(``langgraph-checkpoint-postgres``); a target's thread is named after its work directory, so a
rerun with the same ``--out`` (on any machine that sees the same path) resumes it there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from long_term_memory.shared_store import StoreError, connect, is_postgres, shown


def thread_id(store: str, wdir: Path, thread: str) -> str:
    """The checkpoint thread of a target: unique per work directory in a shared store."""
    return f"{wdir.resolve()}#{thread}" if is_postgres(store) else thread


@contextmanager
def checkpointer(store: str, wdir: Path) -> Iterator[Any]:
    """A LangGraph checkpointer for the target in ``wdir`` (closed on exit).

    Raises:
        StoreError: the PostgreSQL store cannot be used or its driver is missing.
    """
    if not is_postgres(store):
        from langgraph.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(str(wdir / "checkpoints.sqlite")) as local:
            yield local
        return
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError:
        raise StoreError("a PostgreSQL store needs langgraph-checkpoint-postgres: install the "
                         "extra with pip install -e '.[postgres]'") from None
    conn = connect(store, autocommit=True)
    try:
        conn.prepare_threshold = 0  # PostgresSaver's own connections are made this way
        from psycopg.rows import dict_row

        conn.row_factory = dict_row
        # Workers starting together: one runs the migrations (some may not run in a
        # transaction, so a session lock keeps the others waiting).
        conn.execute("SELECT pg_advisory_lock(hashtext('logicfuzz-checkpoint-setup'))")
        saver = PostgresSaver(conn)
        try:
            saver.setup()
        except Exception as exc:  # the driver's errors vary; all mean the same to the user
            raise StoreError(f"cannot create the checkpoint tables in {shown(store)}: "
                             f"{str(exc).strip()[:200]}; check the user's rights") from None
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext('logicfuzz-checkpoint-setup'))")
        yield saver
    finally:
        conn.close()
