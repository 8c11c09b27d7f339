"""Prepare: resolve the benchmark, fetch and build the library, parse its API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.benchmark import Benchmark, load_benchmark
from agent_graph.context import Context
from agent_graph.session_memory import empty_session_memory
from agent_graph.state import FuzzState
from fuzzkit.api import FunctionDecl
from fuzzkit.detect import prepare_library
from fuzzkit.exports import missing_functions
from fuzzkit.header_facts_collect import collect_facts
from fuzzkit.headers import parse_header
from fuzzkit.inputs import InputError
from fuzzkit.library import LibraryBuild
from long_term_memory.embeddings import DEFAULT_EMBEDDING_MODEL
from long_term_memory.retrieval import RetrieverHandle
from nodes._common import ctx_of, log_event, visit


def library_for(bench: Benchmark) -> LibraryBuild:
    """Fetch, detect or read the recipe, and build a benchmark's library (all cached)."""
    return prepare_library(bench.source.model_dump(exclude_none=True), bench.build)


def api_of(lib: LibraryBuild) -> list[FunctionDecl]:
    """Every function declared in the library's public headers."""
    seen: dict[str, FunctionDecl] = {}
    for header in lib.headers:
        for decl in parse_header(Path(header), lib.include_dirs, lib.defines):
            seen.setdefault(decl.name, decl)
    return list(seen.values())


def prepared_fields(bench: Benchmark, function: str) -> dict[str, Any]:
    """Target, API, header facts, headers and library of one benchmark function (built, parsed).

    Raises:
        InputError: The built library does not define the function.
    """
    spec = bench.function(function)
    lib = library_for(bench)
    missing = missing_functions(lib, [spec.name], bench.project)
    if missing:  # it could never link: say so before any model call
        raise InputError(missing[spec.name])
    api = api_of(lib)
    target = next((d for d in api if d.name == spec.name), None) or spec.decl()
    facts = collect_facts(lib.headers, lib.include_dirs, lib.defines, api)
    return {
        "project": bench.project, "target": target.to_dict(), "api": [d.to_dict() for d in api],
        "header_facts": facts.to_dict(), "headers": [Path(h).name for h in lib.headers],
        "library": lib.to_dict(),
    }


def prepare_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Fill in target, API, headers and library unless the caller prepared them already."""
    ctx = ctx_of(runtime)
    update: dict[str, Any] = {**visit("prepare")}
    if not state.get("library") or not state.get("target"):
        if not state.get("benchmark") or not state.get("function"):
            raise ValueError(
                "input needs either `benchmark` (a benchmark YAML path) and `function`, "
                "or a prepared `target`, `api`, `headers` and `library`"
            )
        bench = load_benchmark(state["benchmark"])
        update.update(prepared_fields(bench, state["function"]))
        if not state.get("work_dir"):
            update["work_dir"] = str(Path("results") / "adhoc" / bench.project / state["function"])
    update.setdefault("project", state.get("project", ""))
    if not state.get("session_memory"):
        update["session_memory"] = empty_session_memory()
    if not state.get("long_term_retriever"):
        update["long_term_retriever"] = RetrieverHandle(
            embedding_model=ctx.embedding_model or DEFAULT_EMBEDDING_MODEL).model_dump()
    if not state.get("phase"):
        update.update(phase="compilation", harness_version=0, fix_rounds=0, no_gain_iterations=0)
    merged = {**state, **update}
    log_event(merged, "target.prepared", target=merged["target"]["name"],
              api_functions=len(merged.get("api") or []))
    return update
