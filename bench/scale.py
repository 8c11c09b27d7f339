"""Scale: simulated targets through the local pool and Ray with 1, 2 and 4 workers; the
experience bank in PostgreSQL under 4 writers; a projection to 1,000 targets.

    .venv/bin/python bench/scale.py [--targets 8] [--build-seconds 1] [--fuzz-seconds 5] [--runs 2]
                                    [--workers 1,2,4] [--executors local,ray] [--store URL]
                                    [--bank-writes 100] [--markdown docs/results/scale.md]

``--executors ""`` measures the bank only (its file: ``docs/results/scale-pgvector.md``).

A simulated target is the real executor path (a pool process or a Ray task, the progress
stream, ``events.jsonl``, ``result.json``) around a toolchain that sleeps: ``--runs`` times a
build of ``--build-seconds`` and a fuzz run of ``--fuzz-seconds``, no compiler. Sleeping
targets use no CPU, so 4 workers on 2 cores are fine. Each executor first runs one empty
target per worker (``startup``: processes, imports, Ray's start), then the timed targets.

- ``targets/h``: timed targets / makespan.
- ``overhead/target``: (makespan x workers - targets x work) / targets, where work is the
  sleeping; everything else a worker slot spent (dispatch, result, progress, idle tail).
- ``linear``: throughput / (workers x the same executor's 1-worker throughput).
- ``1,000 targets``: startup + 1,000 x (work + overhead) / workers, in hours.

The bank part starts 4 processes that each write ``--bank-writes`` records (2 items each) and
search after each write, on one PostgreSQL bank (``--store``, else a throwaway PostgreSQL 15
from Debian's binaries), with the model-free ``hashing-256`` embedder: it measures storage.
When the server has pgvector, it runs twice on fresh databases, once searching with the local
index and once ranked by the server, and prints both side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# Workers (pool processes, Ray's) import this checkout too.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402
from logicfuzz.executor_open import open_executor  # noqa: E402
from logicfuzz.executors import TargetJob  # noqa: E402


def simulated_target(job: TargetJob) -> dict[str, Any]:
    """A target whose build and fuzz runs sleep; logs the real events and writes result.json."""
    from nodes.common import log_event

    spec = job.ctx_data
    state = {"work_dir": str(Path(job.out) / job.key)}
    log_event(state, "target.prepared", target=job.function)
    for version in range(1, spec["runs"] + 1):
        time.sleep(spec["build"])
        log_event(state, "build.done", version=version, ok=True, seconds=spec["build"])
        time.sleep(spec["fuzz"])
        log_event(state, "execution.done", version=version, seconds=spec["fuzz"])
    record = {"project": job.key.split("/")[0], "function": job.function, "compiles": True, "runs": True,
              "work_seconds": spec["runs"] * (spec["build"] + spec["fuzz"])}
    (Path(state["work_dir"]) / "result.json").write_text(json.dumps(record))
    log_event(state, "run.finalized")
    return record


def _round(executor: Any, jobs: list[TargetJob]) -> tuple[float, int]:
    """Run ``jobs`` to the end; the makespan and the number of progress steps streamed."""
    start, done, steps = time.monotonic(), 0, 0
    keys = {job.key for job in jobs}
    for job in jobs:
        executor.submit(job)
    while done < len(jobs):
        for key, _, record in executor.updates(timeout=0.05):
            if record is None:
                steps += key in keys  # a step of an earlier round may arrive late
                continue
            assert not record.get("error"), record
            done += 1
    return time.monotonic() - start, steps


def measure(kind: str, workers: int, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """One executor with ``workers`` slots: startup, then the timed targets."""
    spec = {"build": args.build_seconds, "fuzz": args.fuzz_seconds, "runs": args.runs}
    base = TargetJob("", "", "", str(out / f"{kind}-{workers}"), spec, body=simulated_target)
    t0 = time.monotonic()
    executor = open_executor(kind, workers)
    try:
        warm = [replace(base, key=f"warm/w{i}", function=f"w{i}", ctx_data={**spec, "runs": 0})
                for i in range(workers)]
        _round(executor, warm)
        startup = time.monotonic() - t0
        jobs = [replace(base, key=f"sim/t{i}", function=f"t{i}") for i in range(args.targets)]
        makespan, steps = _round(executor, jobs)
    finally:
        executor.close()
    work = args.runs * (args.build_seconds + args.fuzz_seconds)
    overhead = (makespan * workers - args.targets * work) / args.targets
    return {"executor": kind, "workers": workers, "startup": startup, "makespan": makespan,
            "per_hour": args.targets / makespan * 3600, "overhead": overhead, "steps": steps,
            "overhead_pct": 100 * overhead / (args.runs * args.fuzz_seconds),
            "hours_1000": (startup + 1000 * (work + overhead) / workers) / 3600}


BANK_WORKER = r"""
import json, random, sys, time
from long_term_memory.experience import ExperienceConfig, HashingEmbedder, MemoryItem, MemoryRecord
from long_term_memory.experience.stores import open_bank
url, worker, count, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cfg = ExperienceConfig.load().with_overrides(embedding__model="hashing-256", bank__store=url,
                                             index__pgvector=path == "pgvector")
bank = open_bank(cfg, embedder=HashingEmbedder(256))
assert (bank.view.index is not None and bank.view.index.mode == "pgvector") == (path == "pgvector")
rng = random.Random(worker)
words = lambda n: " ".join(f"w{rng.getrandbits(40):x}" for _ in range(n))
writes, searches = [], []
for i in range(count):
    items = [MemoryItem(title=words(3), description=words(4), content=words(14)) for _ in range(2)]
    t = time.perf_counter()
    bank.add_record(MemoryRecord(memory_id=f"s-{worker}-{i}", task_id=f"w{worker}/f{i}", task_type="fuzz-c",
                                 query=f"project w{worker}; {words(3)}", is_success=True, kind="success",
                                 memory_items=items))
    writes.append(time.perf_counter() - t)
    t = time.perf_counter()
    bank.search(f"project w{(worker + 1) % 4}; {words(3)}", exclude_task_id=None)
    searches.append(time.perf_counter() - t)
bank.close()
print(json.dumps({"writes": writes, "searches": searches}))
"""


def bank_latency(url: str, writes: int, path: str = "local", writers: int = 4) -> dict[str, Any]:
    """Write and search latencies (s) of ``writers`` processes sharing one PostgreSQL bank.

    ``path``: ``local`` (each process's index) or ``pgvector`` (the server ranks).
    """
    procs = [subprocess.Popen([sys.executable, "-c", BANK_WORKER, url, str(w), str(writes), path], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(writers)]
    found: dict[str, list[float]] = {"writes": [], "searches": []}
    for proc in procs:
        out, err = proc.communicate(timeout=3600)
        if proc.returncode:
            raise SystemExit(f"a bank writer failed: {err.strip()[-500:]}")
        for key, values in json.loads(out.strip().splitlines()[-1]).items():
            found[key].extend(values)
    return {key: _percentiles(values) for key, values in found.items()}


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"n": len(ordered), "p50": pick(0.5), "p95": pick(0.95), "max": ordered[-1]}


def print_tables(rows: list[dict[str, Any]], bank: dict[str, Any] | None, args: argparse.Namespace) -> None:
    if rows:
        print_executors(rows, args)
    if bank:
        print_bank(bank, args)


def print_executors(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """One row per executor and worker count."""
    work = args.runs * (args.build_seconds + args.fuzz_seconds)
    print(f"{args.targets} simulated targets, each {args.runs} x ({args.build_seconds:g} s build + "
          f"{args.fuzz_seconds:g} s fuzz) = {work:g} s of work\n")
    print("| executor | workers | startup s | makespan s | targets/h | linear | overhead/target s | "
          "overhead % of fuzz time | steps streamed | 1,000 targets h |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    one = {r["executor"]: r["per_hour"] for r in rows if r["workers"] == 1}
    for r in rows:
        linear = f"{r['per_hour'] / (r['workers'] * one[r['executor']]):.2f}" if r["executor"] in one else "-"
        print(f"| {r['executor']} | {r['workers']} | {r['startup']:.1f} | {r['makespan']:.1f} | "
              f"{r['per_hour']:.0f} | {linear} | {r['overhead']:.3f} | {r['overhead_pct']:.2f}% | "
              f"{r['steps']} | {r['hours_1000']:.2f} |")


def print_bank(bank: dict[str, Any], args: argparse.Namespace) -> None:
    """One row per operation; one p50/p95/max group per search path (local index, pgvector)."""
    print(f"\nexperience bank in PostgreSQL, 4 writers x {args.bank_writes} records (2 items each), "
          "a search after each write:\n")
    paths = list(bank)
    print("| operation | n | " + " | ".join(f"{p}: p50 ms | p95 ms | max ms" for p in paths) + " |")
    print("|---|---|" + "---|---|---|" * len(paths))
    for op, name in (("writes", "write"), ("searches", "search")):
        cells = " | ".join(f"{1000 * bank[p][op]['p50']:.1f} | {1000 * bank[p][op]['p95']:.1f} | "
                           f"{1000 * bank[p][op]['max']:.1f}" for p in paths)
        print(f"| {name} | {bank[paths[0]][op]['n']} | {cells} |")


def _bank(args: argparse.Namespace) -> dict[str, Any] | None:
    if args.bank_writes <= 0:
        return None
    if args.store:  # one bank in the given database: the path its server offers
        path = "pgvector" if _has_pgvector(args.store) else "local"
        return {path: bank_latency(args.store, args.bank_writes, path)}
    from benchkit.pg_server import PgServer, missing

    why = missing()
    if why:
        print(f"bank latency skipped: {why}", file=sys.stderr)
        return None
    server = PgServer()
    try:
        out = {"local index": bank_latency(server.database("scale_bench"), args.bank_writes)}
        url = server.database("scale_bench_pgvector")
        if _has_pgvector(url):
            out["pgvector"] = bank_latency(url, args.bank_writes, "pgvector")
        else:
            print("pgvector search skipped: the server has no vector extension (scripts/pgvector.sh)",
                  file=sys.stderr)
        return out
    finally:
        server.stop()


def _has_pgvector(url: str) -> bool:
    import psycopg

    with psycopg.connect(url) as db:
        return bool(db.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone())


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The bench's arguments (``--markdown`` is checked here, before any executor starts)."""
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--targets", type=int, default=8)
    p.add_argument("--build-seconds", type=float, default=1.0)
    p.add_argument("--fuzz-seconds", type=float, default=5.0)
    p.add_argument("--runs", type=int, default=2, help="build + fuzz runs per target (1 + iterations)")
    p.add_argument("--workers", default="1,2,4")
    p.add_argument("--executors", default="local,ray", help='"" measures the bank only')
    p.add_argument("--store", default="", help="PostgreSQL URL for the bank part (default: a throwaway one)")
    p.add_argument("--bank-writes", type=int, default=100, help="records per writer (0: skip the bank part)")
    add_markdown_option(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Time the executors, then the bank; print their Markdown tables."""
    args = parse_args(argv)
    rows = []
    with TemporaryDirectory(prefix="lf-scale-") as tmp:
        for kind in filter(None, args.executors.split(",")):
            for workers in (int(w) for w in args.workers.split(",")):
                rows.append(measure(kind, workers, args, Path(tmp)))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    bank = _bank(args)
    report(rows, bank, args)


def title(rows: list[dict[str, Any]], bank: dict[str, Any] | None) -> str:
    """The Markdown file's title: what was measured (executors, the bank, its two search paths)."""
    if not rows:
        if bank and len(bank) > 1:
            return "Shared experience bank: " + " against ".join(bank) + ", side by side"
        return "Shared experience bank in PostgreSQL"
    return "Executors and the shared experience bank (simulated toolchain)" if bank else \
        "Executors (simulated toolchain)"


def report(rows: list[dict[str, Any]], bank: dict[str, Any] | None, args: argparse.Namespace) -> None:
    """Print the tables; with ``--markdown``, write them there too under :func:`title`."""
    with markdown_copy(args.markdown, title(rows, bank)):
        print_tables(rows, bank, args)


if __name__ == "__main__":
    main()
