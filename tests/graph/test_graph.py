"""The whole graph, driven by a scripted model, with the real toolchain on a tiny library."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from agent_graph.builder import build_graph
from agent_graph.context import Context
from agent_graph.registry import NodeSpec, default_registry
from agents.crash_analyzer import CrashAnalyzer
from agents.llm import register_provider
from logicfuzz.results import result_record
from nodes.agent_call import call_agent, memory_reads_for
from tests.conftest import harness
from tests.graph.scripted import ScriptedChatModel, keys

ANALYSIS = json.dumps({"archetype": "stateless_parser", "confidence": "HIGH",
                       "reasoning": "parses a NUL-terminated string into a list",
                       "constraints": ["text must be NUL-terminated"],
                       "related_functions": ["kv_free", "kv_count"]})
BROKEN = harness("kv_free(kv_parse(text, size));")  # too many arguments: a real compile error
FIXED = harness("kv_free(kv_parse(text));")
IMPROVED = harness("""\
kv_t *kv = kv_parse(text);
if (kv) { (void)kv_count(kv); (void)kv_get(kv, "a"); }
kv_free(kv);""")


def c_reply(payload: dict[str, Any], code: str) -> str:
    return f"```json\n{json.dumps(payload)}\n```\n```c\n{code}```"


def script() -> dict[str, list[str]]:
    return {
        "function_analyzer": [ANALYSIS],
        "prototyper": [c_reply({"notes": ["one call"], "functions_called": ["kv_parse"]}, BROKEN)],
        "enhancer:fix": [c_reply({"fixes": ["call kv_parse with one argument"]}, FIXED)],
        "coverage_analyzer": [json.dumps({"summary": "getters never ran", "strategies": [
            {"strategy": "call kv_count and kv_get on the parsed list",
             "target_functions": ["kv_count", "kv_get"], "expected_gain": "HIGH"}]})],
        "enhancer:improve": [c_reply({"directions": ["query the parsed list"],
                                      "added_calls": ["kv_count", "kv_get"]}, IMPROVED)],
        "local_memory_extractor": [json.dumps({"updated_directions": [
            {"direction": "query the parsed list", "outcome": "Noise", "source_ref": "v3",
             "evidence": "getters are tiny"}], "new_memory_item": None})],
    }


@pytest.fixture
def scripted() -> ScriptedChatModel:
    model = ScriptedChatModel(script=script())
    register_provider("scripted", lambda ctx, temperature: model)
    return model


def ctx(tools: str, **kw: Any) -> Context:
    return Context(**{"model": "scripted:test", "fuzz_seconds": 1, "max_iterations": 1,
                      "memory_mode": "baseline", "toolchain": tools, **kw})


def visited(graph: Any, inputs: Any, config: dict[str, Any], context: Context) -> list[str]:
    order = []
    for update in graph.stream(inputs, config, context=context, stream_mode="updates"):
        order += [n for n in update if n != "supervisor"]
    return order


EXPECTED = ["prepare", "function_analyzer", "prototyper", "build", "enhancer", "build",
            "execution", "memory_manager", "coverage_analyzer", "enhancer", "build", "execution",
            "memory_manager", "memory_manager"]


def test_whole_graph_with_scripted_model(scripted: ScriptedChatModel, tools: str, kv_benchmark: Path,
                                         tmp_path: Path) -> None:
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(tmp_path)}
    assert visited(graph, inputs, config, ctx(tools)) == EXPECTED
    assert keys(scripted) == ["function_analyzer", "prototyper", "enhancer:fix",
                              "coverage_analyzer", "enhancer:improve", "local_memory_extractor"]
    state = graph.get_state(config).values

    # The compile error reached the enhancer verbatim, and its fix became a known fix.
    fix_prompt = scripted.seen[2]["messages"][-1][1]
    assert "too many arguments" in fix_prompt
    fixes = state["session_memory"]["known_fixes"]
    assert [(f["content"], f["success"]) for f in fixes] == [("call kv_parse with one argument", True)]
    # The improve prompt carries the enhancer's categories, including that known fix.
    improve_prompt = scripted.seen[4]["messages"][-1][1]
    assert "### Known fixes" in improve_prompt and "### Decisions" not in improve_prompt
    assert "call kv_count and kv_get on the parsed list" in improve_prompt

    # Histories went through the reducer: the enhancer's holds both of its turns.
    msgs = state["agent_messages"]
    assert [m["role"] for m in msgs["enhancer"]] == ["system", "user", "assistant", "user", "assistant"]
    assert [m["role"] for m in msgs["function_analyzer"]] == ["system", "user", "assistant"]

    counters = state["counters"]
    assert counters["iterations"] == 1 and counters["fix_rounds_total"] == 1
    assert counters["harness_versions"] == 3 and counters["guard_iterations"] == 1
    assert state["termination_reason"] == "iteration budget 1 used"
    assert state["phase"] == "done"
    best = state["best"]
    assert best["run"]["usable"] and best["lines_percent"] > 0
    assert [row["iteration"] for row in state["coverage_history"]] == [0, 1]
    # The extraction's directions replaced the local memory's list wholesale.
    directions = state["local_memory"]["attempted_directions"]
    assert [d["direction"] for d in directions] == ["query the parsed list"]
    assert state["code_memory"]["harness.c"]["library_calls"]
    events = [json.loads(line)["type"] for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert events.count("build.done") == 3 and "run.finalized" in events


def test_fix_round_guard_stops_a_harness_that_never_compiles(
        scripted: ScriptedChatModel, tools: str, kv_benchmark: Path, tmp_path: Path) -> None:
    scripted.script["enhancer:fix"] = [c_reply({"fixes": ["try again"]}, harness("kv_free(kv_parse());")),
                                       c_reply({"fixes": ["try again"]}, harness("kv_parse(text, size, 0);"))]
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t2"}}
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(tmp_path)}
    order = visited(graph, inputs, config, ctx(tools, max_fix_rounds=2))
    assert order == ["prepare", "function_analyzer", "prototyper", "build", "enhancer", "build",
                     "enhancer", "build", "memory_manager"]
    state = graph.get_state(config).values
    assert state["counters"]["guard_fix_rounds"] == 1
    assert "gave up after 2 fix rounds" in state["termination_reason"]
    failed = state["session_memory"]["known_fixes"]
    assert failed and not any(f["success"] for f in failed)
    # Three harness versions, all in the compilation phase: the supervisor consolidated once.
    assert state["counters"]["harness_versions"] == 3 and state["counters"].get("iterations", 0) == 0
    assert state["last_consolidation"] == 3
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["data"]["iteration"] for e in events if e["type"] == "memory.session.consolidate"] == [3]


def test_a_repair_that_returns_the_same_code_is_not_built_again(
        scripted: ScriptedChatModel, tools: str, kv_benchmark: Path, tmp_path: Path) -> None:
    # The prototyper's draft is BROKEN, and so is each repair: the same code can only fail the same
    # way, so the version, its build and its errors stay, and the model is asked again.
    scripted.script["enhancer:fix"] = [c_reply({"fixes": ["try again"]}, BROKEN)] * 2
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t3"}}
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(tmp_path)}
    order = visited(graph, inputs, config, ctx(tools, max_fix_rounds=2))
    assert order == ["prepare", "function_analyzer", "prototyper", "build", "enhancer", "enhancer",
                     "memory_manager"]
    state = graph.get_state(config).values
    assert state["harness_version"] == 1 and state["counters"]["harness_versions"] == 1
    assert state["counters"]["fix_rounds_total"] == 2
    assert "gave up after 2 fix rounds" in state["termination_reason"]
    assert [f["success"] for f in state["session_memory"]["known_fixes"]] == [False, False]
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["type"] for e in events].count("harness.unchanged") == 2
    assert [e["data"]["version"] for e in events if e["type"] == "build.done"] == [1]


def test_added_node_runs_through_the_registry(scripted: ScriptedChatModel, tools: str, kv_benchmark: Path,
                                              tmp_path: Path) -> None:
    def toy_node(state: dict[str, Any]) -> dict[str, Any]:
        return {"extras": {"toy_done": True}, "node_visits": {"toy": 1}}

    registry = default_registry().copy([NodeSpec(
        "toy", toy_node, kind="tool",
        route_when=lambda s: bool(s.get("analysis")) and not (s.get("extras") or {}).get("toy_done"))])
    graph = build_graph(registry, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t3"}}
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(tmp_path)}
    order = visited(graph, inputs, config, ctx(tools))
    assert order[:4] == ["prepare", "function_analyzer", "toy", "prototyper"]
    assert order.count("toy") == 1 and order[-1] == "memory_manager"
    assert "toy" in graph.get_graph().nodes


class ToyTriage(CrashAnalyzer):
    """A role added by a user: the crash analyzer's prompt under its own name."""

    name = "toy_triage"


def toy_triage_node(state: dict[str, Any], runtime: Any) -> dict[str, Any]:
    variables = ToyTriage.variables(state, memory_reads_for("toy_triage"))
    _, update = call_agent(ToyTriage, state, runtime, variables)
    return {**update, "extras": {"toy_done": True}}


def test_added_llm_node_gets_its_declared_memory_and_tools(
        scripted: ScriptedChatModel, tools: str, kv_benchmark: Path, tmp_path: Path) -> None:
    register_provider("scripted-tools", lambda ctx, temperature: scripted, native=("tools",))
    scripted.script["crash_analyzer"] = [CRASH_TRIAGE]  # the toy role renders that template
    registry = default_registry().copy([NodeSpec(
        "toy_triage", toy_triage_node, reads=("decisions", "known_fixes"), tools=("read_code_mem",),
        route_when=lambda s: bool(s.get("best")) and not (s.get("extras") or {}).get("toy_done"))])
    graph = build_graph(registry, checkpointer=InMemorySaver())
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(tmp_path)}
    order = visited(graph, inputs, {"configurable": {"thread_id": "t9"}},
                    ctx(tools, model="scripted-tools:test"))
    assert order.count("toy_triage") == 1
    toy = next(s for s in scripted.seen if s["key"] == "crash_analyzer")
    prompt = toy["messages"][-1][1]
    # Its declared categories reached its prompt (the fix made on the way is a known fix) ...
    assert "### Known fixes" in prompt and "call kv_parse with one argument" in prompt
    # ... and its declared tool was offered; the built-in roles got their own declarations.
    assert toy["tools"] == ["read_code_mem"]
    prototyper = next(s for s in scripted.seen if s["key"] == "prototyper")
    assert set(prototyper["tools"]) == {"search_knowledge", "read_code_mem", "read_file"}
    analyzer = next(s for s in scripted.seen if s["key"] == "function_analyzer")
    assert analyzer["tools"] == ["search_knowledge"]


def test_mid_run_snapshot_round_trips_through_sqlite(scripted: ScriptedChatModel, tools: str,
                                                      kv_benchmark: Path,
                                                      tmp_path: Path) -> None:
    db = str(tmp_path / "checkpoints.sqlite")
    config = {"configurable": {"thread_id": "t4"}}
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(tmp_path)}
    with SqliteSaver.from_conn_string(db) as saver:
        graph = build_graph(checkpointer=saver)
        graph.invoke(inputs, config, context=ctx(tools), interrupt_after=["execution"])
        before = graph.get_state(config)
    assert before.next == ("supervisor",)
    with SqliteSaver.from_conn_string(db) as saver:  # a new process would see the same
        graph = build_graph(checkpointer=saver)
        after = graph.get_state(config)
        assert after.values == before.values
        assert after.values["run"]["usable"] and after.values["agent_messages"]["prototyper"]
        final = graph.invoke(None, config, context=ctx(tools))
    assert final["termination_reason"] == "iteration budget 1 used"


CRASH_TRIAGE = json.dumps({"crash_type": "heap-buffer-overflow", "location": "library",
                           "root_cause": "kv_check writes past a 4-byte buffer", "summary": "overflow"})


def test_library_crash_ends_the_run_as_a_real_bug(scripted: ScriptedChatModel, tools: str, kv_benchmark: Path,
                                                   tmp_path: Path) -> None:
    code = harness("kv_free(kv_parse(text));\n(void)kv_check(text);")
    scripted.script["prototyper"] = [c_reply({"notes": []}, code)]
    scripted.script["crash_analyzer"] = [CRASH_TRIAGE]
    scripted.script["crash_feasibility_analyzer"] = [json.dumps(
        {"feasible": True, "verdict": "library_bug", "reasoning": "input reaches the overflow"})]
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t5"}}
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(tmp_path)}
    order = visited(graph, inputs, config, ctx(tools, fuzz_seconds=20))
    assert order == ["prepare", "function_analyzer", "prototyper", "build", "execution",
                     "crash_analyzer", "crash_feasibility_analyzer", "memory_manager"]
    state = graph.get_state(config).values
    assert state["crash"]["kind"] == "heap-buffer-overflow"
    assert "kv_check" in state["crash"]["signature"]
    assert Path(state["crash"]["reproducer"]).is_file()
    assert state["termination_reason"] == "real crash found in library code"
    decisions = [d["decision_type"] for d in state["session_memory"]["decisions"]]
    assert "crash:library_bug" in decisions
    # The harness that found it ran and reached the target: a running harness, kept as the result.
    assert not state["run"]["usable"] and result_record(state, "kv", "kv_parse", 1.0)["runs"]
    # The crash analyzer saw the parsed report, not raw bytes.
    triage_prompt = next(s for s in scripted.seen if s["key"] == "crash_analyzer")["messages"][-1][1]
    assert "kind: heap-buffer-overflow" in triage_prompt and "kv_check" in triage_prompt


def test_harness_crash_goes_back_to_the_enhancer(scripted: ScriptedChatModel, tools: str, kv_benchmark: Path,
                                                 tmp_path: Path) -> None:
    leaky = harness("kv_t *kv = kv_parse(text);\n(void)kv;  /* never freed: a leak in harness code */")
    scripted.script["prototyper"] = [c_reply({"notes": []}, leaky)]
    scripted.script["crash_analyzer"] = [json.dumps({"crash_type": "leak", "location": "harness"})]
    scripted.script["crash_feasibility_analyzer"] = [json.dumps(
        {"feasible": False, "verdict": "harness_misuse", "fix_hint": "free the list"})]
    scripted.script["enhancer:fix"] = [c_reply({"fixes": ["free the parsed list with kv_free"]}, FIXED)]
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t6"}}
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(tmp_path)}
    order = visited(graph, inputs, config, ctx(tools, fuzz_seconds=5, max_iterations=0))
    assert order[:9] == ["prepare", "function_analyzer", "prototyper", "build", "execution",
                         "crash_analyzer", "crash_feasibility_analyzer", "enhancer", "build"]
    state = graph.get_state(config).values
    fix_prompt = next(s for s in scripted.seen if s["key"] == "enhancer:fix")["messages"][-1][1]
    assert "kind: leak" in fix_prompt and "free the list" in fix_prompt
    assert state["best"]["run"]["usable"] and state["counters"]["fix_rounds_total"] == 1


LESSON = json.dumps({"memory_items": [{
    "title": "Parse kv text from a NUL-terminated copy",
    "description": "For kv_parse-like string parsers of small C libraries.",
    "content": "Copy the fuzz input into a NUL-terminated buffer, call kv_parse, free with kv_free; "
               "a call with two arguments does not compile."}]})


def test_experience_is_extracted_at_the_end_and_not_retrieved_by_its_own_task(
        scripted: ScriptedChatModel, tools: str, kv_benchmark: Path, tmp_path: Path) -> None:
    scripted.script["experience_success"] = [LESSON]
    config = tmp_path / "memory.yaml"  # a bank of its own: each toolchain variant starts empty
    config.write_text(f"bank:\n  directory: {tmp_path / 'bank'}\n")
    graph = build_graph(checkpointer=InMemorySaver())
    work = tmp_path / "run1" / "kv" / "kv_parse"
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(work)}
    visited(graph, inputs, {"configurable": {"thread_id": "t7"}},
            ctx(tools, memory_mode="retrieve-extract", memory_config=str(config), max_iterations=0))
    assert keys(scripted)[-1] == "experience_success"
    events = [json.loads(line) for line in (tmp_path / "run1" / "run.events.jsonl").read_text().splitlines()]
    kinds = [e["type"] for e in events]
    assert "memory.search.result" in kinds and "memory.candidate.write" in kinds
    own = {i for e in events if e["type"] == "memory.candidate.write" for i in e["data"]["items"]}
    # Same task again: its own record is excluded from retrieval.
    scripted.script.update(script())
    scripted.script["experience_success"] = [LESSON]
    work2 = tmp_path / "run2" / "kv" / "kv_parse"
    visited(graph, {**inputs, "work_dir": str(work2)}, {"configurable": {"thread_id": "t8"}},
            ctx(tools, memory_mode="retrieve-only", max_iterations=0, memory_config=str(config)))
    second = [json.loads(line) for line in (tmp_path / "run2" / "run.events.jsonl").read_text().splitlines()]
    searches = [e for e in second if e["type"] == "memory.search.result"]
    found = {m["item_id"] for e in searches for m in e["data"].get("matches") or []}
    assert searches and own and not (own & found)  # other tasks' lessons may match; its own never
    assert not any(e["type"].endswith(".write") for e in second)
