"""The Types section is the same text in every process: the prompt never depends on hash order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

_SCRIPT = """
import sys
from fuzzkit.header_facts_collect import collect_facts
from fuzzkit.headers import parse_header
api = parse_header(sys.argv[1], [])
print(collect_facts([sys.argv[1]], [], api=api).render())
"""


def _header(n: int) -> str:
    lines = ["typedef struct acme_doc acme_doc;"]
    for i in range(n):
        lines += ["/* Returns 1 if the call succeeded, 0 on error. */",
                  f"int acme_step_{i}(acme_doc *doc, const char *text, unsigned long len);"]
    return "\n".join(lines) + "\n"


def test_the_types_section_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    header = tmp_path / "acme.h"
    header.write_text(_header(16))
    root = Path(__file__).resolve().parents[2]
    renders = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        done = subprocess.run([sys.executable, "-c", _SCRIPT, str(header)], env=env, text=True,
                              capture_output=True, timeout=120, check=True)
        renders.append(done.stdout)
    assert "{function: acme_step_15, text: 'Returns 1" in renders[0]  # the notes this is about are there
    assert renders[0] == renders[1] == renders[2]
