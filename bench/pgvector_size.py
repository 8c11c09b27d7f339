"""The PostgreSQL bank at a given size: opening and searching with the local index vs. pgvector.

    .venv/bin/python bench/pgvector_size.py [--items 25000] [--queries 200] [--store URL] \
        [--markdown docs/results/pgvector-size.md]

Fills one bank with ``--items`` items (2 per record, model-free ``hashing-256`` vectors,
written by a local-index writer, so the pgvector columns are filled afterwards from the
stored vectors, as for a bank made before the extension). Then: the first pgvector writer's
open (backfill, and past ``index.exact_max_items`` the HNSW build), and for each path a
read-only open and ``--queries`` searches (k = ``retrieval.candidates``, no exclusion) with
their p50/p95. Needs a server with pgvector (``scripts/pgvector.sh``); without ``--store``
a throwaway PostgreSQL 15 is started.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402
from long_term_memory.experience import (  # noqa: E402
    ExperienceConfig,
    HashingEmbedder,
    MemoryItem,
    MemoryRecord,
)
from long_term_memory.experience.stores import open_bank  # noqa: E402

TITLE = "Bigger experience banks: local index against pgvector"


def measure(url: str, items: int, queries: int) -> list[str]:
    """Table rows (markdown) for a bank of ``items`` items in the database at ``url``."""
    def cfg(pgvector: bool) -> ExperienceConfig:
        return ExperienceConfig.load().with_overrides(embedding__model="hashing-256", bank__store=url,
                                                      index__pgvector=pgvector)

    rng = random.Random(1)
    words = lambda n: " ".join(f"w{rng.getrandbits(40):x}" for _ in range(n))  # noqa: E731
    with open_bank(cfg(False), embedder=HashingEmbedder(256)) as bank:
        for i in range(items // 2):
            bank.add_record(MemoryRecord(
                memory_id=f"r{i}", task_id=f"t{i % 50}", task_type="fuzz-c", query=f"p; {words(3)}",
                is_success=True, kind="success",
                memory_items=[MemoryItem(title=words(3), description=words(4), content=words(14))
                              for _ in range(2)]))
    t = time.perf_counter()
    with open_bank(cfg(True), embedder=HashingEmbedder(256)) as bank:
        first = time.perf_counter() - t
    rows = [f"| first pgvector writer's open (fill {items} rows, index) | {1000 * first:.0f} | | |"]
    texts = [f"p; {words(3)}" for _ in range(queries)]
    for pgvector in (False, True):
        t = time.perf_counter()
        with open_bank(cfg(pgvector), embedder=HashingEmbedder(256), read_only=True) as bank:
            opened = time.perf_counter() - t
            took = []
            for text in texts:
                t = time.perf_counter()
                bank.search(text, exclude_task_id=None)
                took.append(time.perf_counter() - t)
            mode = bank.view.index.mode if bank.view.index else "-"
        took.sort()
        rows.append(f"| {mode}: read-only open, search | {1000 * opened:.0f} | "
                    f"{1000 * took[len(took) // 2]:.1f} | {1000 * took[int(0.95 * len(took))]:.1f} |")
    return rows


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The bench's arguments (``--markdown`` is checked here, before the bank is filled)."""
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--items", type=int, default=25000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--store", default="", help="an empty PostgreSQL database (default: a throwaway server)")
    add_markdown_option(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Fill the bank, time the opens and searches, print one Markdown table."""
    args = parse_args(argv)
    server = None
    if not args.store:
        from benchkit.pg_server import PgServer

        server = PgServer()
    try:
        url = args.store or server.database("pgvector_size")  # type: ignore[union-attr]
        rows = measure(url, args.items, args.queries)
    finally:
        if server:
            server.stop()
    report(rows, args)


def report(rows: list[str], args: argparse.Namespace) -> None:
    """Print the table of :func:`measure`'s rows; with ``--markdown``, write it there too."""
    with markdown_copy(args.markdown, TITLE):
        print(f"bank of {args.items} items (hashing-256), {args.queries} searches\n")
        print("| step | open ms | search p50 ms | search p95 ms |\n|---|---|---|---|")
        print("\n".join(rows))


if __name__ == "__main__":
    main()
