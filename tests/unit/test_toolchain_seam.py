"""The toolchain seam: nodes build, fuzz and measure only through the context's toolchain."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from fuzzkit.toolchain import Fuzzkit, register_toolchain, toolchain_named, toolchain_names
from tests.graph.conftest import CASSETTE
from tests.recorded_toolchain import MissingRecording, ReplayToolchain, machine_paths

ROOT = Path(__file__).resolve().parents[2]
# fuzzkit modules that compile, run or parse: nodes must reach them through the seam.
TOOL_MODULES = {"fuzzkit.harness", "fuzzkit.runner", "fuzzkit.coverage", "fuzzkit.detect",
                "fuzzkit.headers", "fuzzkit.header_facts_collect", "fuzzkit.header_reach",
                "fuzzkit.detect_run", "fuzzkit.exports",
                "fuzzkit.bwrap", "fuzzkit.sandbox"}


def test_nodes_import_no_tool_module() -> None:
    offenders = []
    for path in sorted((ROOT / "nodes").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in TOOL_MODULES:
                offenders.append(f"{path.name}: from {node.module} import ...")
            if isinstance(node, ast.Import):
                offenders += [f"{path.name}: import {a.name}" for a in node.names
                              if a.name in TOOL_MODULES]
    assert not offenders, offenders


def test_the_default_is_the_real_toolchain_and_unknown_names_are_refused() -> None:
    assert isinstance(toolchain_named(""), Fuzzkit) and isinstance(toolchain_named("fuzzkit"), Fuzzkit)
    with pytest.raises(ValueError, match=r"toolchain 'nope' is not registered; known: .*fuzzkit"):
        toolchain_named("nope")
    with pytest.raises(ValueError, match="non-empty name"):
        register_toolchain(" ", Fuzzkit)


def test_the_build_node_uses_the_context_toolchain(tmp_path: Path) -> None:
    from agent_graph.context import Context
    from nodes.build import build_node

    replay = ReplayToolchain(CASSETTE)
    register_toolchain("seam-test", lambda: replay)
    library = json.loads(CASSETTE.read_text())["library"]
    state = {"work_dir": str(tmp_path), "harness_version": 0, "library": library,
             "harness_code": "int main(void) { return 0; }\n"}

    class Runtime:
        context = Context(toolchain="seam-test")

    with pytest.raises(MissingRecording, match="re-record the cassette"):
        build_node(state, Runtime())  # type: ignore[arg-type]
    assert replay.calls and replay.calls[-1][0] == "build_harness"
    assert "seam-test" in toolchain_names()


def test_the_cassette_names_no_directory_of_the_machine_that_recorded_it() -> None:
    cassette = json.loads(CASSETTE.read_text())
    assert cassette["builds"] and cassette["runs"] and cassette["coverage"]
    assert machine_paths(cassette) == []
    assert machine_paths({"runs": {}, "library": {"root": "/tmp/x/kvlib"}}) == ["/tmp/"]
