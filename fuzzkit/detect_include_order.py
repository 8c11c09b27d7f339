"""The order a harness includes a library's public headers in (part of detection, and of its cache key).

Not every public header can be included first: a library's extension header may use the main
header's types without including it (``ext.h`` declaring ``int ext_run(lib_interp *)``), so a
harness including them alphabetically fails to compile on the first line, whatever the model
writes after. The detected headers are ordered so that each compiles after those before it,
keeping their listed order where it already works.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from fuzzkit.errors import ToolchainError
from fuzzkit.headers import cindex_module, parse_translation_unit


def include_order(headers: Sequence[Path], include_dirs: Sequence[str | Path],
                  defines: Iterable[str]) -> list[Path]:
    """``headers`` in an order each compiles in after the ones before it.

    Each step takes the first header, in the listed order, that compiles after those already
    chosen; where none does (a header broken on this machine), the rest stay as listed.
    """
    defines = list(defines)
    if len(headers) < 2 or _compiles(headers, include_dirs, defines):
        return list(headers)
    order: list[Path] = []
    left = list(headers)
    while left:
        nxt = next((h for h in left if _compiles([*order, h], include_dirs, defines)), None)
        if nxt is None:
            return order + left
        order.append(nxt)
        left.remove(nxt)
    return order


def _compiles(headers: Sequence[Path], include_dirs: Sequence[str | Path], defines: list[str]) -> bool:
    """Whether a file including ``headers`` in this order parses without an error."""
    cindex = cindex_module()
    with tempfile.TemporaryDirectory(prefix="lf-include-") as tmp:
        probe = Path(tmp) / "probe.h"
        probe.write_text("".join(f'#include "{Path(h).resolve()}"\n' for h in headers))
        try:
            tu = parse_translation_unit(cindex, probe, include_dirs, defines)
        except ToolchainError:
            return False
        return not any(d.severity >= cindex.Diagnostic.Error for d in tu.diagnostics)
