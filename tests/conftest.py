"""Fixtures shared by the graph and end-to-end tests: a tiny C library built for real."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from agents.offline import type_table
from benchkit.kv import KV_HEADER, KV_SOURCE


@pytest.fixture(scope="session")
def kv_benchmark(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A benchmark YAML for the tiny ``kv`` library, sources on a local path."""
    root = tmp_path_factory.mktemp("kvlib")
    (root / "kv.h").write_text(KV_HEADER)
    (root / "kv.c").write_text(KV_SOURCE)
    bench = {
        "project": "kv",
        "language": "c",
        "source": {"path": str(root)},
        "build": {"sources": ["kv.c"], "headers": ["kv.h"]},
        "functions": [{
            "name": "kv_parse", "signature": "kv_t * kv_parse(const char * text)",
            "return_type": "kv_t *", "params": [{"name": "text", "type": "const char *"}],
        }],
    }
    path = root / "kv.yaml"
    path.write_text(yaml.safe_dump(bench))
    return path


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Builds and indexes go to a per-session cache unless the caller chose one."""
    import os

    os.environ.setdefault("LOGICFUZZ_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def harness(body: str) -> str:
    """A kv harness with ``body`` inside LLVMFuzzerTestOneInput."""
    return textwrap.dedent("""\
        #include <stdint.h>
        #include <stdlib.h>
        #include <string.h>
        #include "kv.h"

        int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
          char *text = malloc(size + 1);
          if (!text) return 0;
          memcpy(text, data, size);
          text[size] = '\\0';
        %s
          free(text);
          return 0;
        }
        """) % textwrap.indent(textwrap.dedent(body), "  ")


@pytest.fixture(autouse=True)
def _no_type_table() -> Iterator[None]:
    """Each test starts with no library's Types table active (engine tests activate one)."""
    token = type_table._ACTIVE.set(type_table.EMPTY)
    yield
    type_table._ACTIVE.reset(token)
