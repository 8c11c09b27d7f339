"""The import contract: no module cycle, layers that import downward only, project imports at the top.

Every ``import`` counts, inside functions too; only imports under ``if TYPE_CHECKING:`` are
left out (they never run). Layers, lowest first:

0. ``fuzzkit`` (the toolchain) and ``prompts`` (the templates);
1. ``long_term_memory`` (knowledge, embeddings, the experience bank);
2. ``agent_graph`` state, context, routing and ``agent_graph.memory`` (run-scoped memory);
3. ``agents`` (the roles, the model seam, the offline model);
4. ``nodes``;
5. graph assembly: ``agent_graph.registry``, ``agent_graph.builder``, ``agent_graph.graph``;
6. ``logicfuzz`` (CLI, runner, report).

Routing sits with the state because the supervisor node (layer 4) routes with it; the benchmark
model sits there because the prepare node reads benchmark files.

Beside the layers: nothing outside ``nodes`` imports a private ``nodes._*`` module, and the app
imports no private name of another package; a node edits no harness C (see
:func:`c_editing_in_node`); ``bench/`` and ``tests/`` do not import each other (what both need
is in ``benchkit/``).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fuzzkit", "prompts", "long_term_memory", "agent_graph", "agents", "nodes", "logicfuzz")
ASSEMBLY = {"agent_graph.registry", "agent_graph.builder", "agent_graph.graph"}


def layer(module: str) -> int:
    top = module.split(".", 1)[0]
    if module in ASSEMBLY:
        return 5
    return {"fuzzkit": 0, "prompts": 0, "long_term_memory": 1, "agent_graph": 2, "agents": 3,
            "nodes": 4, "logicfuzz": 6}[top]


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in [child, *_runtime_nodes(child)])
            continue
        yield node
        yield from _runtime_nodes(node)


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (the deepest known module each import names)."""
    out = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            targets = [base, *(f"{base}.{a.name}" for a in node.names)]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_layers_import_downward_only() -> None:
    upward = [f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)})"
              for m, targets in sorted(graph().items()) for t in sorted(targets) if layer(t) > layer(m)]
    assert upward == []


def test_the_checks_can_fail() -> None:
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert layer("agents.base") > layer("agent_graph.memory.messages") > layer("long_term_memory.x")
    assert layer("agent_graph.registry") > layer("nodes.build")


def deferred_project_imports(path: Path) -> list[str]:
    """``path:line module`` for each project import made inside a function.

    A function-level import is kept for heavy or optional third-party dependencies (torch,
    faiss, ray, a database driver), loaded only when asked for; project modules are imported
    where a module starts, so its dependencies read at a glance.
    """
    found = []
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and node.level:
                found.append(f"{where}:{node.lineno} (relative)")
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{where}:{node.lineno} {n}" for n in names
                      if n.split(".", 1)[0] in PACKAGES]
    return found


def test_project_modules_are_imported_at_module_top() -> None:
    assert [line for path in modules().values() for line in deferred_project_imports(path)] == []


def test_a_deferred_project_import_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import json\n\ndef f():\n    from fuzzkit import paths\n    import torch\n"
                     "    from . import sibling\n    return paths, torch, sibling, json\n")
    assert deferred_project_imports(probe) == ["probe.py:4 fuzzkit", "probe.py:6 (relative)"]


def _imported_names(path: Path) -> list[tuple[int, str]]:
    """``(line, name)`` for every name an absolute import of ``path`` names, inside functions too.

    ``from a.b import c`` names ``a.b.c`` (``c`` may be a module); ``import a.b`` names ``a.b``.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def private_node_imports(path: Path) -> list[str]:
    """``path:line module`` for each import of a private module of ``nodes`` (``nodes._x``).

    What the app, the graph assembly, the benches and the tests use of the nodes layer is public:
    a module whose name starts with ``_`` is the layer's own business and may change with it.
    """
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    return [f"{where}:{line} {name}" for line, name in _imported_names(path) if name.startswith("nodes._")]


def test_nothing_outside_nodes_imports_a_private_node_module() -> None:
    outside = [p for p in ROOT.rglob("*.py") if p.parts[len(ROOT.parts)] not in {"nodes", ".venv"}
               and not any(part.startswith(".") for part in p.relative_to(ROOT).parts)]
    assert len(outside) > 100
    assert [line for path in outside for line in private_node_imports(path)] == []


def test_a_private_node_import_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from nodes._common import log_event\nfrom nodes import common, _llm\n\n"
                     "def f():\n    import nodes._llm\n    return log_event, common, _llm, nodes\n")
    assert private_node_imports(probe) == ["probe.py:1 nodes._common.log_event", "probe.py:2 nodes._llm",
                                           "probe.py:5 nodes._llm"]


# What edits harness C, or decides what releases what, below the nodes: a node reaches it only
# through the public surface of the package that owns it (``agents.improvement_blocks``), or
# through the model seam (the offline model), never module by module.
C_EDITING = ("fuzzkit.field_release", "fuzzkit.release_names", "agents.harness_marks", "agents.offline")
C_EDITING_PACKAGES = ("agents.improvement_blocks",)


def c_editing_in_node(name: str, path: Path, known: dict[str, Path]) -> list[str]:
    """``path: what`` for each way the node module ``name`` could edit harness C itself.

    A node reads state, calls an agent or a function, and writes state. Harness C is read and
    edited with regular expressions and line surgery (marks, block ends, inserted releases), so
    a node may not import ``re``, nor a module of :data:`C_EDITING`, nor a module inside a
    package of :data:`C_EDITING_PACKAGES` (only the package itself, its ``__init__``'s names).
    """
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found = [f"{where}: imports re" for _, n in _imported_names(path) if n == "re" or n.startswith("re.")]
    for target in sorted(imports(name, path, known)):
        if any(target == m or target.startswith(m + ".") for m in C_EDITING) or any(
                target.startswith(p + ".") for p in C_EDITING_PACKAGES):
            found.append(f"{where}: imports {target}")
    return found


def test_nodes_edit_no_harness_c() -> None:
    known = modules()
    nodes = {n: p for n, p in known.items() if n.startswith("nodes.")}
    assert len(nodes) > 10
    assert [line for n, p in sorted(nodes.items()) for line in c_editing_in_node(n, p, known)] == []


def test_c_editing_in_a_node_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import re\nfrom agents import improvement_blocks\n"
                     "from agents.improvement_blocks import without_block\n"
                     "from agents.improvement_blocks.marks import block_end\n"
                     "from fuzzkit.release_names import result_releaser\n")
    known = {m: tmp_path for m in ("agents", "agents.improvement_blocks", "agents.improvement_blocks.marks",
                                   "fuzzkit", "fuzzkit.release_names")}
    assert c_editing_in_node("nodes.probe", probe, known) == [
        "probe.py: imports re", "probe.py: imports agents.improvement_blocks.marks",
        "probe.py: imports fuzzkit.release_names"]


# The benches and the tests share code through ``benchkit/`` only: a bench script imports no test
# module, and a test imports no bench module (by package, ``bench.x``, or by the top-level name
# the scripts use for each other, ``x`` with ``bench/`` on the path). A test may run a bench
# script whole (its ``main``), loaded by path through ``tests/bench_scripts.py`` alone.
BENCH_LOADER = "tests/bench_scripts.py"


def crossing_imports(path: Path, other: str, names: set[str]) -> list[str]:
    """``path:line module`` for each import of the ``other`` package (or of one of ``names``) in ``path``.

    A test that puts ``bench/`` on ``sys.path`` or loads a file of it by path counts too
    (``path: loads bench by path``), unless ``path`` is :data:`BENCH_LOADER`.
    """
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found = [f"{where}:{line} {n}" for line, n in _imported_names(path)
             if n.split(".")[0] == other or n.split(".")[0] in names or n in {f"{other}.{x}" for x in names}]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names_bench = any(isinstance(n, ast.Constant) and n.value == "bench" for n in ast.walk(tree))
    loads = any(isinstance(n, ast.Call) and ast.unparse(n.func).endswith(
        ("spec_from_file_location", "sys.path.insert", "sys.path.append")) for n in ast.walk(tree))
    if other == "bench" and str(where) != BENCH_LOADER and names_bench and loads:
        found.append(f"{where}: loads bench by path")
    return sorted(set(found))


def _files(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def test_bench_and_tests_do_not_import_each_other() -> None:
    scripts = {p.stem for p in _files("bench")}
    assert {"generality", "memory_ab"} <= scripts
    tests_importing_bench = [line for p in _files("tests") for line in crossing_imports(p, "bench", scripts)]
    bench_importing_tests = [line for p in _files("bench") for line in crossing_imports(p, "tests", set())]
    assert tests_importing_bench == [] and bench_importing_tests == []


def test_a_crossing_import_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('import sys\nfrom bench.memory_ab import transfers\nsys.path.insert(0, "bench")\n'
                     "from generality_table import markdown\nfrom benchkit.kv import KV_HEADER\n"
                     "def f():\n    from tests.pg_server import PgServer\n")
    assert crossing_imports(probe, "bench", {"generality_table"}) == [
        "probe.py: loads bench by path", "probe.py:2 bench.memory_ab.transfers",
        "probe.py:4 generality_table.markdown"]
    assert crossing_imports(probe, "tests", set()) == ["probe.py:7 tests.pg_server.PgServer"]


def private_imports(path: Path, own: str) -> list[str]:
    """``path:line name`` for each private module or name (``_x``) imported from another project package."""
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    return [f"{where}:{line} {name}" for line, name in _imported_names(path)
            if name.split(".")[0] in PACKAGES and name.split(".")[0] != own
            and any(part.startswith("_") for part in name.split("."))]


def test_the_app_uses_public_names_only() -> None:
    app = _files("logicfuzz")
    assert len(app) > 10
    assert [line for p in app for line in private_imports(p, "logicfuzz")] == []


def test_a_private_name_import_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from __future__ import annotations\nfrom nodes.experience import _bank, inject\n"
                     "from logicfuzz.cli import _own\nimport agents._x\n")
    assert private_imports(probe, "logicfuzz") == ["probe.py:2 nodes.experience._bank",
                                                   "probe.py:4 agents._x"]
