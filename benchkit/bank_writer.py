"""A process writing to one experience bank: many at once test and measure the bank's locking.

``python -c WORKER DIRECTORY WORKER_NUMBER COUNT`` opens the ``fuzz-c`` bank in ``DIRECTORY`` (hashing
embedder, no model), prints ``ready``, then adds ``COUNT`` records of two lessons each, printing
each record's number once written.
"""

from __future__ import annotations

WORKER = r"""
import random, sys
from pathlib import Path
from long_term_memory.experience import ExperienceBank, ExperienceConfig, HashingEmbedder, MemoryItem
from long_term_memory.experience import MemoryItem, MemoryRecord

directory, worker, count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
cfg = ExperienceConfig.load().with_overrides(embedding__model="hashing-256")
bank = ExperienceBank.open("fuzz-c", directory, cfg, HashingEmbedder(256))
rng = random.Random(worker)
words = lambda n: " ".join(f"w{rng.getrandbits(40):x}" for _ in range(n))
print("ready", flush=True)
for i in range(count):
    items = [MemoryItem(title=words(3), description=words(4), content=words(14)) for _ in range(2)]
    result = bank.add_record(MemoryRecord(
        memory_id=f"rec-{worker}-{i}", task_id=f"w{worker}/f{i}", task_type="fuzz-c",
        query=f"project w{worker}; {words(3)}", is_success=bool(i % 2),
        kind="success" if i % 2 else "failure", memory_items=items))
    assert len(result.added) == 2 and not result.merged, result
    print(i, flush=True)
bank.close()
"""
