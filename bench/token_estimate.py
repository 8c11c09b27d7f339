"""How the offline token estimate compares with real tiktoken counts.

Usage: TIKTOKEN_CACHE_DIR=DIR python bench/token_estimate.py FILE [FILE ...]

DIR must hold tiktoken's cl100k_base file (see agent_graph/memory/tokens.py). Files are grouped by
suffix (.c/.h, .py, anything else as text) and cut into ~1.5 kB chunks at line ends; for each
group the table shows estimate / real over all chunks, the lowest per-chunk ratio (below 1.0
means an under-count) and the same for plain chars / 4.
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path

from agent_graph.memory.tokens import estimate_tokens, get_encoding


def chunks(text: str, size: int = 1500) -> list[str]:
    out, cur = [], ""
    for line in text.splitlines(keepends=True):
        cur += line
        if len(cur) >= size:
            out.append(cur)
            cur = ""
    return out + ([cur] if cur else [])


def kind(path: Path) -> str:
    return {".c": "C", ".h": "C", ".py": "Python"}.get(path.suffix, "text")


def main(paths: list[str]) -> int:
    enc = get_encoding("gpt-4")
    if enc is None:
        print("cl100k_base is not available locally: set TIKTOKEN_CACHE_DIR", file=sys.stderr)
        return 2
    groups: dict[str, list[str]] = defaultdict(list)
    for name in paths:
        path = Path(name)
        groups[kind(path)] += chunks(path.read_text(encoding="utf-8", errors="replace"))
    print(f"{'kind':8} {'chunks':>6} {'real':>9} {'est/real':>8} {'min':>5} {'chars/4':>7} {'min':>5}")
    for k, texts in sorted(groups.items()):
        real = [len(enc.encode_ordinary(t)) for t in texts]
        est = [estimate_tokens(t) for t in texts]
        c4 = [math.ceil(len(t) / 4) for t in texts]
        pairs = [(e, q, r) for e, q, r in zip(est, c4, real, strict=True) if r]
        print(f"{k:8} {len(texts):6} {sum(real):9} {sum(est) / sum(real):8.2f} "
              f"{min(e / r for e, _, r in pairs):5.2f} {sum(c4) / sum(real):7.2f} "
              f"{min(q / r for _, q, r in pairs):5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
