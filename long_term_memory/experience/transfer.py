"""Moving a bank between its files and PostgreSQL, both ways, without re-encoding anything.

``import_files``: every record line (its exact bytes), item vector, lifecycle statistic,
merge, decision, hit and validation of a file bank goes into an empty PostgreSQL bank in one
transaction. ``export_files``: a PostgreSQL bank becomes a file bank: the JSONL holds the same
bytes the records were stored with (so export of an imported bank reproduces the JSONL
byte for byte), the vectors and their meta file are written as they are, and the lifecycle
store is rebuilt by the file bank's own repair path from a one-line journal snapshot.
Neither side is ever overwritten: a non-empty target is refused.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from long_term_memory.embeddings import Embedder
from long_term_memory.experience.admin import BankNotFoundError, open_existing
from long_term_memory.experience.bank import ExperienceBank
from long_term_memory.experience.catalog import BankPaths
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.embedder import DeferredEmbedder
from long_term_memory.experience.journal import Journal, JournalEntry
from long_term_memory.experience.pg_bank import PgExperienceBank
from long_term_memory.experience.pg_lifecycle import STAT_COLUMNS
from long_term_memory.experience.record_log import RecordLog
from long_term_memory.experience.vector_file import VectorFile, VectorMeta
from long_term_memory.shared_store import StoreError, shown

_TABLES = {"decisions": 3, "hits": 5, "validations": 11, "merges": 5}


@dataclasses.dataclass
class Moved:
    """What a transfer carried."""

    records: int
    items: int
    decisions: int


def _file_lines(paths: BankPaths) -> list[tuple[bytes, dict[str, Any]]]:
    data = paths.jsonl.read_bytes()
    read = RecordLog(paths.jsonl).read_from(0)
    return [(data[start : start + read.line_crc[start][0] - 1], record) for start, record in read.records]


def import_files(directory: Path, task: str, url: str, config: ExperienceConfig) -> Moved:
    """Copy the file bank ``task`` in ``directory`` into the empty PostgreSQL bank at ``url``.

    Raises:
        BankNotFoundError: no such file bank.
        StoreError: the store is unusable, or its bank ``task`` already holds records.
    """
    with open_existing(task, directory, config.with_overrides(bank__store=""), read_only=True) as files:
        model = files.view.meta.model if files.view.meta else config.embedding.model
        lines = _file_lines(files.paths)
        stats = files.all_stats()
        view = files.view
        vectors = view.index.vectors() if view.index is not None else np.zeros((0, files.embedder.dim))
        with files.lifecycle.reading() as conn:
            history = {t: [list(r) for r in conn.execute(f"SELECT * FROM {t} ORDER BY ts")] if conn else []
                       for t in _TABLES}
        entries = {e.item_id: e for e in files.entries()}
        dim = files.embedder.dim
    target_config = config.with_overrides(embedding__model=model, bank__store=url)
    with PgExperienceBank.open_store(url, task, target_config, DeferredEmbedder(model, dim)) as bank:
        conn = bank._conn
        with bank._mutex, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"logicfuzz-bank:{task}",))
            if bank.record_count:
                raise StoreError(f"bank {task} in {shown(url)} already holds {bank.record_count} "
                                 "records: import into an empty bank (another --task or database)")
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO lf_records (bank, memory_id, task_id, line) VALUES "
                                "(%s, %s, %s, %s)", [(task, r["memory_id"], r["task_id"], line)
                                                     for line, r in lines])
                cur.executemany(
                    f"INSERT INTO lf_items (bank, title, description, content, is_success, query, digest, "
                    f"memory_id, task_id, vector, updated_at, {', '.join(STAT_COLUMNS)}) VALUES "
                    f"(%s{', %s' * (10 + len(STAT_COLUMNS))})",
                    [(task, e.title, e.description, e.content, e.is_success, e.query, e.digest,
                      e.memory_id, e.task_id, np.asarray(vectors[view.row_of[e.item_id]], "<f4").tobytes(),
                      stats[e.item_id].created_at, *dataclasses.astuple(stats[e.item_id]))
                     for e in (entries[i] for i in view.ids)])
                for table, width in _TABLES.items():
                    cur.executemany(f"INSERT INTO lf_{table} VALUES (%s{', %s' * width})",
                                    [(task, *row) for row in history[table]])
        bank.refresh()
        return Moved(len(lines), bank.size, len(history["decisions"]))


def export_files(url: str, task: str, directory: Path, config: ExperienceConfig,
                 embedder: Embedder | None = None) -> Moved:
    """Write the PostgreSQL bank ``task`` as a file bank in ``directory`` (which must not hold one).

    Raises:
        BankNotFoundError: the store has no records for ``task``.
        StoreError: the store is unusable, or ``directory`` already holds bank ``task``.
    """
    paths = BankPaths(directory, task)
    if any(directory.glob(f"{task}.*")):
        raise StoreError(f"{directory} already holds files of bank {task}: export into an empty "
                         "directory (nothing there is overwritten)")
    with PgExperienceBank.open_store(url, task, config.with_overrides(bank__store=url),
                                     embedder, read_only=True) as bank:
        if not bank.record_count:
            raise BankNotFoundError(f"no experience bank {task!r} in {shown(url)}: check --task "
                                    "(or import one with `logicfuzz memory import`)")
        lines = list(bank.lines())
        view, stats = bank.view, bank.lifecycle.all_stats()
        with bank._mutex:
            history = {t: [list(r) for r in bank._conn.execute(
                f"SELECT * FROM lf_{t} WHERE bank = %s ORDER BY ts", (task,))] for t in _TABLES}
        vectors = view.index.vectors() if view.index is not None else np.zeros((0, bank.embedder.dim))
        model, dim, ids = bank.config.embedding.model, bank.embedder.dim, list(view.ids)
    directory.mkdir(parents=True, exist_ok=True)
    with open(paths.jsonl, "wb") as handle:
        handle.write(b"".join(lines))
    if ids:
        meta = VectorMeta(model=model, dim=dim, item_ids=ids, jsonl_offset=paths.jsonl.stat().st_size)
        VectorFile(paths.vectors, paths.meta).rewrite(meta, vectors)
    Journal(paths.journal).append(JournalEntry(
        kind="snapshot", decisions=[r[1:] for r in history["decisions"]],
        hits=[r[1:] for r in history["hits"]], validations=[r[1:] for r in history["validations"]],
        stats=[list(dataclasses.astuple(s)) for s in stats.values()]))
    file_config = config.with_overrides(bank__store="", embedding__model=model)
    ExperienceBank.open(task, directory, file_config, embedder or DeferredEmbedder(model, dim)).close()
    return Moved(len(lines), len(ids), len(history["decisions"]))
