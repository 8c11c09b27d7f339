"""A bench script loaded by path to run its ``main``, as ``python bench/NAME.py`` would.

Tests run bench scripts whole (``main(argv)`` and what it prints or writes); what a test checks
piece by piece lives in ``benchkit/`` and is imported from there. This is the one place a test
touches ``bench/`` (``tests/unit/test_import_contract.py`` checks it).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench_script(name: str) -> ModuleType:
    """``bench/<name>.py`` imported by path (bench/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
