"""Prepare: resolve the benchmark, fetch and build the library, parse its API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.benchmark import Benchmark, load_benchmark
from agent_graph.context import Context
from agent_graph.memory.session_memory import empty_session_memory
from agent_graph.state import FuzzState
from fuzzkit.api import FunctionDecl
from fuzzkit.header_includes import harness_headers
from fuzzkit.inputs import InputError
from fuzzkit.library import LibraryBuild
from fuzzkit.toolchain import Toolchain, toolchain_named
from fuzzkit.usage_models import TargetUsage
from fuzzkit.usage_names import name_unnamed
from fuzzkit.usage_protocols import target_usage
from long_term_memory.embeddings import DEFAULT_EMBEDDING_MODEL
from long_term_memory.retrieval import RetrieverHandle
from nodes.common import ctx_of, log_event, visit


def library_for(bench: Benchmark, toolchain: Toolchain | None = None) -> LibraryBuild:
    """Fetch, detect or read the recipe, and build a benchmark's library (all cached)."""
    tools = toolchain or toolchain_named("")
    return tools.prepare_library(bench.source.model_dump(exclude_none=True), bench.build)


def api_of(lib: LibraryBuild, toolchain: Toolchain | None = None) -> list[FunctionDecl]:
    """Every function the library's public headers declare and its build defines."""
    return (toolchain or toolchain_named("")).parse_api(lib)


def prepared_fields(bench: Benchmark, function: str,
                    toolchain: Toolchain | None = None, usage: bool = True) -> dict[str, Any]:
    """Target, API, header facts, headers and library of one benchmark function (built, parsed).

    ``usage``: also how the library's own tests, examples and tools use the target's API
    (:mod:`fuzzkit.usage_protocols`); off, the prompts carry no usage section.

    Raises:
        InputError: The built library does not define the function.
    """
    tools = toolchain or toolchain_named("")
    spec = bench.function(function)
    lib = library_for(bench, tools)
    missing = tools.missing_functions(lib, [spec.name], bench.project)
    if missing:  # it could never link: say so before any model call
        raise InputError(missing[spec.name])
    api = tools.parse_api(lib)
    target = next((d for d in api if d.name == spec.name), None) or spec.decl()
    facts = tools.collect_facts(lib, api)
    # A header's inline wrapper of a library function is reached through the function it wraps.
    wrappers = {w.caller for w in facts.wrappers}
    api = [d for d in api if d.name not in wrappers]
    canonical = {t.name: t.canonical for t in facts.typedefs}  # one type, however a file spells it
    seen = TargetUsage()
    if usage:
        index = tools.usage_index(lib, api, facts)
        # A prototype's unnamed parameters are named as the library's own calls name their arguments.
        api = name_unnamed(api, index, canonical)
        target = next((d for d in api if d.name == target.name), target)
        records = {n: dict(r.fields) for r in facts.records for n in (r.tag, *r.names) if n}
        seen = target_usage(index, target, api, canonical, records)
    return {
        "project": bench.project, "target": target.to_dict(), "api": [d.to_dict() for d in api],
        "header_facts": facts.to_dict(), "headers": harness_headers(lib.headers),
        "library": lib.to_dict(), "seed_dir": tools.seed_corpus(lib),
        "dict_path": tools.fuzz_dictionary(lib),
        "library_usage": seen.model_dump(mode="json", exclude_defaults=True),
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
        update.update(prepared_fields(bench, state["function"], toolchain_named(ctx.toolchain), ctx.usage))
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
