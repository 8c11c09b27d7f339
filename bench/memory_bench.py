"""Experience-bank performance: retrieval latency, bank open time, write throughput.

    .venv/bin/python bench/memory_bench.py [--sizes 1000,10000,100000] [--queries 300]

Retrieval uses synthetic random unit vectors of dimension 384 (the size of all-MiniLM-L6-v2
embeddings) so that 100k items need no hours of encoding; the query is a stored vector mixed
with noise to cosine 0.6 (a match above the 0.5 retrieval threshold), and recall@1 is measured
against exact search. It compares the bank's index (exact FAISS up to ``index.exact_max_items``,
then a binary-code prefilter with exact rerank), exact FAISS ``IndexFlatIP`` and brute-force
numpy, all single-threaded. The open-time test writes a real 100k-item bank (JSONL, vectors,
meta, SQLite) and opens it with an embedder that refuses to encode, which proves nothing is
re-encoded. Write throughput uses the model-free ``hashing-384`` embedder, so it measures the
storage path (lock, append, fsync, SQLite, vectors, meta), not the embedding model.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from long_term_memory.experience import ExperienceBank, ExperienceConfig, HashingEmbedder
from long_term_memory.experience.catalog import BankPaths, catalog_update, item_digest
from long_term_memory.experience.index import ItemIndex, faiss_module
from long_term_memory.experience.lifecycle import LifecycleStore
from long_term_memory.experience.model_guard import PROBE_TEXT
from long_term_memory.experience.models import MemoryItem, MemoryRecord
from long_term_memory.experience.record_log import RecordLog
from long_term_memory.experience.vector_file import VectorFile, VectorMeta

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout first: benchkit and the product
from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402

DIM = 384


class RefusingEmbedder:
    """Stands in for the model the bank was built with; encoding any item is a failure.

    A writer encodes one fixed probe text to fingerprint its model (``model_guard``); that is
    answered by the real hashing embedder and not counted.
    """

    name = "hashing-384"  # the bank below is labelled with this model, so writes can use it later
    dim = DIM

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        if texts == [PROBE_TEXT]:
            return HashingEmbedder(DIM).encode(texts)
        self.calls += 1
        raise AssertionError(f"the bank tried to encode {len(texts)} texts on open")


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def planted_queries(rng: np.random.Generator, base: np.ndarray, count: int, cos: float = 0.6):
    src = rng.integers(0, len(base), count)
    noise = unit(rng, count)
    noise -= (noise * base[src]).sum(1, keepdims=True) * base[src]
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    return (base[src] * cos + noise * np.sqrt(1 - cos * cos)).astype(np.float32), src


def pct(times: list[float]) -> tuple[float, float]:
    ms = np.array(times) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def retrieval(sizes: list[int], queries: int, config: ExperienceConfig) -> None:
    print("\n== retrieval latency, top-5, one query at a time (synthetic unit vectors, dim 384) ==")
    print("wall = elapsed time; cpu = this thread's CPU time (what the query costs on an idle core)")
    print(f"{'items':>8}  {'method':<28} {'p50 ms':>8} {'p95 ms':>8} {'cpu p50':>8} {'cpu p95':>8} "
          f"{'recall@1':>9}")
    faiss = faiss_module()
    rng = np.random.default_rng(0)
    for n in sizes:
        base = unit(rng, n)
        index = ItemIndex(DIM, config.index.exact_max_items, config.index.rerank)
        index.add(base)
        flat = faiss.IndexFlatIP(DIM)
        flat.add(base)
        qs, src = planted_queries(rng, base, queries)
        methods = {
            f"bank index ({index.mode})": lambda q, ix=index: [r for r, _ in ix.search(q, 5)],
            "faiss IndexFlatIP (exact)": lambda q, fl=flat: list(fl.search(q[None, :], 5)[1][0]),
            "numpy brute force (exact)": lambda q, ix=index: [r for r, _ in ix.brute_force(q, 5)],
        }
        edge, edge_src = planted_queries(rng, base, queries, cos=0.5)
        found = sum(int(s in [r for r, _ in index.search(q, 5)]) for q, s in zip(edge, edge_src, strict=True))
        print(f"{n:>8}  bank index: a stored item at cosine 0.5 to the query (the threshold) is in "
              f"the top 5 for {found}/{queries} queries")
        for name, fn in methods.items():
            fn(qs[0])  # warm up
            times, cpu, hits = [], [], 0
            for q, s in zip(qs, src, strict=True):
                start, start_cpu = time.perf_counter(), time.thread_time()
                top = fn(q)
                times.append(time.perf_counter() - start)
                cpu.append(time.thread_time() - start_cpu)
                hits += int(top[0] == s)
            p50, p95 = pct(times)
            c50, c95 = pct(cpu)
            print(f"{n:>8}  {name:<28} {p50:>8.2f} {p95:>8.2f} {c50:>8.2f} {c95:>8.2f} "
                  f"{hits / queries:>9.3f}")


def write_bank(directory: Path, n_items: int, rng: np.random.Generator) -> None:
    """A real bank of ``n_items`` items (3 per record) written straight to its files."""
    paths = BankPaths(directory, "fuzz-c")
    records, ids = [], []
    now = time.time()
    for r in range(0, n_items, 3):
        items = []
        for j in range(min(3, n_items - r)):
            item_id = f"MEM-{r + j:08x}"
            title, desc = f"Lesson {r + j} on object lifecycle", f"Targets of library {r % 97}."
            content = (f"Call lib{r % 97}_new, then lib{r % 97}_parse on the input, check the return "
                       f"value, and free with lib{r % 97}_free; step {j} of a synthetic trajectory.")
            items.append({"title": title, "description": desc, "content": content,
                          "item_id": item_id, "merged_into": "", "digest": item_digest(title, desc, content)})
            ids.append(item_id)
        records.append({"memory_id": f"rec-{r:012x}", "task_id": f"lib{r % 97}/f{r}", "task_type": "fuzz-c",
                        "query": f"project lib{r % 97}; target int f{r}(const char * s)", "trajectory": "",
                        "is_success": r % 2 == 0, "kind": "success" if r % 2 == 0 else "failure",
                        "memory_items": items, "created_at": now, "run_id": "bench", "confidence": 0.7})
    log = RecordLog(paths.jsonl)
    directory.mkdir(parents=True, exist_ok=True)
    log.rewrite(records)
    meta = VectorMeta(model=RefusingEmbedder.name, dim=DIM, item_ids=ids, jsonl_offset=log.size())
    life = LifecycleStore(paths.lifecycle, ExperienceConfig().gatekeeper)
    read = log.read_from(0)
    life.update_catalog(catalog_update(read.records, (meta.generation, meta.jsonl_offset, read.crc),
                                       full=True, line_crc=read.line_crc))
    life.close()
    VectorFile(paths.vectors, paths.meta).rewrite(meta, unit(rng, n_items))


def open_time(directory: Path, n_items: int, config: ExperienceConfig) -> None:
    print(f"\n== bank open, {n_items} items, no re-encoding ==")
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    write_bank(directory, n_items, rng)
    print(f"writing the test bank: {time.perf_counter() - start:.1f} s; files: " + ", ".join(
        f"{p.name} {p.stat().st_size / 1e6:.1f} MB" for p in sorted(directory.iterdir()) if p.is_file()))
    for mode in ("write", "read-only"):
        times, cpu = [], []
        for _ in range(3):
            embedder = RefusingEmbedder()
            start, start_cpu = time.perf_counter(), time.process_time()
            bank = ExperienceBank.open("fuzz-c", directory, config, embedder, read_only=mode == "read-only")
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            assert bank.size == n_items and embedder.calls == 0
            index = bank.view.index
            bank.close()
        print(f"open ({mode}): wall best {min(times):.3f} s, worst {max(times):.3f} s; "
              f"cpu best {min(cpu):.3f} s; "
              f"{n_items} items, index {index.mode if index else '?'}, encode calls 0")


def throughput(directory: Path, config: ExperienceConfig, count: int, existing: bool) -> None:
    embedder = HashingEmbedder(DIM)
    if not existing:
        shutil.rmtree(directory, ignore_errors=True)
    bank = ExperienceBank.open("fuzz-c", directory, config.with_overrides(embedding__model=embedder.name),
                               embedder)
    before = bank.size
    start = time.perf_counter()
    for i in range(count):
        bank.add_record(MemoryRecord(
            memory_id=f"rec-w{i:08d}", task_id=f"tp/f{i}", task_type="fuzz-c",
            query=f"project tp; target int tp_f{i}(const uint8_t * data, size_t size)",
            is_success=bool(i % 2), kind="success" if i % 2 else "failure",
            memory_items=[MemoryItem(title=f"Write {i} lesson {j}", description=f"targets like tp_f{i}",
                                     content=f"Call tp_init before tp_f{i}; variant {j} {i * 7919 % 104729}.")
                          for j in range(2)]))
    seconds = time.perf_counter() - start
    where = f"into a bank of {before} items" if existing else "into an empty bank"
    print(f"write ({where}): {count} records x 2 items in {seconds:.2f} s = {count / seconds:.0f} "
          f"records/s ({seconds / count * 1000:.1f} ms each: lock, fsync'd append, SQLite, vectors, meta)")
    bank.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--open-items", type=int, default=100000)
    parser.add_argument("--writes", type=int, default=300)
    add_markdown_option(parser)
    args = parser.parse_args()
    with markdown_copy(args.markdown, "Experience bank: retrieval, open and write", fenced=True):
        measure_all(args)


def measure_all(args: argparse.Namespace) -> None:
    """Retrieval latency per size, opening a big bank, write throughput."""
    config = ExperienceConfig.load()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; FAISS single-threaded; "
          f"index.exact_max_items={config.index.exact_max_items}, index.rerank={config.index.rerank}")
    retrieval([int(s) for s in args.sizes.split(",")], args.queries, config)
    root = Path(tempfile.mkdtemp(prefix="memory-bench-"))
    try:
        open_time(root / "big", args.open_items, config)
        print("\n== write throughput (hashing-384 embedder: storage cost only) ==")
        throughput(root / "small", config, args.writes, existing=False)
        throughput(root / "big", config, max(20, args.writes // 10), existing=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
