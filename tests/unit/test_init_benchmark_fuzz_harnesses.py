"""``init-benchmark --ignore-fuzz-harnesses``: the choice of functions never reads the yardstick.

An invented tree: a library with a parser and an encoder, and a fuzz harness that calls only the
encoder. By default what the harness calls ranks higher (+3); under the flag it does not, and no
file of the harness's folder is opened (an audit hook watches every ``open``).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fuzzkit.api import FunctionDecl, Param
from fuzzkit.detect_tree import fuzz_harnesses, in_fuzz_folder
from fuzzkit.init_benchmark import fuzzed_functions, without_fuzz_files
from fuzzkit.library import LibraryBuild
from fuzzkit.select_functions import choose_functions

REPO = Path(__file__).resolve().parents[2]
_OPENED: list[list[str]] = []  # the paths opened while a `watching_opens` block runs


def _record(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _OPENED and isinstance(args[0], (str, Path)):
        _OPENED[-1].append(str(args[0]))


sys.addaudithook(_record)  # an audit hook cannot be removed; it records only inside the block


@contextmanager
def watching_opens() -> Iterator[list[str]]:
    """The files opened by this process inside the block."""
    _OPENED.append([])
    try:
        yield _OPENED[-1]
    finally:
        _OPENED.pop()


def _decl(name: str, ret: str, *params: tuple[str, str]) -> FunctionDecl:
    return FunctionDecl(name, ret, tuple(Param(n, t) for n, t in params))


API = [
    _decl("acme_parse", "int", ("data", "const char *"), ("size", "size_t")),  # scores 11
    _decl("acme_encode", "int", ("data", "const unsigned char *"), ("size", "size_t")),  # 9, +3 if fuzzed
]


def _tree(root: Path) -> Path:
    (root / "fuzz").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "acme.h").write_text("#include <stddef.h>\nint acme_parse(const char *data, size_t size);\n"
                                 "int acme_encode(const unsigned char *data, size_t size);\n")
    (root / "acme.c").write_text('#include "acme.h"\nint acme_parse(const char *d, size_t n) { return n; }\n'
                                 "int acme_encode(const unsigned char *d, size_t n) { return n; }\n")
    (root / "fuzz" / "acme_encode_fuzzer.c").write_text(
        '#include <stdint.h>\n#include "../acme.h"\n'
        "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
        "  acme_encode(data, size);\n  return 0;\n}\n")
    (root / "fuzz" / "fuzz_helpers.h").write_text("int acme_fuzz_helper(int x);\n")
    (root / "include" / "acme_entry.h").write_text(
        "#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\n")
    return root


def test_what_only_a_fuzz_harness_calls_ranks_higher_but_not_under_the_flag(tmp_path: Path) -> None:
    root = _tree(tmp_path / "acme-1.0")
    harnesses = fuzz_harnesses(root)
    assert harnesses == ["fuzz/acme_encode_fuzzer.c"]  # listed either way: the yardstick
    bonus = fuzzed_functions(root, harnesses)
    assert "acme_encode" in bonus and "acme_parse" not in bonus
    assert [d.name for d in choose_functions(API, 1, fuzzed=bonus)] == ["acme_encode"]

    with watching_opens() as opened:
        ignored = fuzzed_functions(root, harnesses, ignore_fuzz_harnesses=True)
    assert ignored == set() and not [p for p in opened if "fuzz" in Path(p).relative_to(tmp_path).as_posix()]
    assert [d.name for d in choose_functions(API, 1, fuzzed=ignored)] == ["acme_parse"]


def test_headers_in_a_fuzzing_folder_or_naming_the_fuzz_entry_are_left_out(tmp_path: Path) -> None:
    # The tree itself lies under a directory named like a fuzzing one: only paths inside it count.
    root = _tree(tmp_path / "fuzzwork" / "acme-1.0")
    headers = [root / "acme.h", root / "fuzz" / "fuzz_helpers.h", root / "include" / "acme_entry.h"]
    lib = LibraryBuild(key="k", root=str(root), fuzz_archive="", cov_archive="", include_dirs=[str(root)],
                       headers=[str(h) for h in headers], coverage_files=[], defines=[], log_path="")
    kept = without_fuzz_files(lib, root)
    assert kept.headers == [str(root / "acme.h")] and lib.headers == [str(h) for h in headers]
    assert in_fuzz_folder(Path("oss-fuzz/projects/x.h")) and in_fuzz_folder(Path("tests/Fuzzing/x.h"))
    assert not in_fuzz_folder(Path("src/fuzzy_match.h"))  # a file's own name is no folder
    # LogicFuzz's own build folder in a configured copy holds generated public headers, no harness.
    assert not in_fuzz_folder(Path(".logicfuzz-build/lib.h"))


def _constants(tree: ast.Module) -> dict[str, object]:
    return {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) for t in node.targets if isinstance(t, ast.Name)}


def test_every_bench_that_runs_init_benchmark_passes_the_flag() -> None:
    """A comparison never lets the LogicFuzz side read the yardstick (issue: benches pass the flag)."""
    runs = 0
    paths = sorted([*(REPO / "bench").rglob("*.py"), *(REPO / "benchkit").rglob("*.py")])
    shared: dict[str, object] = {}  # a constant one bench defines and another imports
    for path in paths:
        shared.update(_constants(ast.parse(path.read_text())))
    for path in paths:
        tree = ast.parse(path.read_text())
        names = {**shared, **_constants(tree)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.List):
                continue
            items = [e.value if isinstance(e, ast.Constant) else names.get(getattr(e, "id", ""))
                     for e in node.elts]
            if "init-benchmark" in items:
                runs += 1
                assert "--ignore-fuzz-harnesses" in items, f"{path.name}:{node.lineno} runs init-benchmark"
    assert runs >= 1  # bench/generality.py does
