"""Compression keeps exactly what the SE-Agent seed says: top-3 successes, top-2 failures."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import tiktoken

from agent_graph.memory.local_memory import (
    compress,
    empty_local_memory,
    failure_mode,
    item_gain,
    local_memory_tokens,
    severity,
)
from agent_graph.memory.local_memory_compress import is_trivial
from agent_graph.memory.tokens import set_encoding


@pytest.fixture(autouse=True)
def byte_tokens() -> Iterator[None]:
    """Exact, machine-independent counts: one token per UTF-8 byte."""
    set_encoding(tiktoken.Encoding(
        name="bytes_only", pat_str=r"[^\s]+|\s+",
        mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={},
    ))
    yield
    set_encoding(None)


def item(kind: str, title: str, old: float | None, new: float | None, content: str = "",
         operator: str = "improve", change: str = "") -> dict[str, Any]:
    delta = f"line coverage {old:.2f}% -> {new:.2f}%" if old is not None and new is not None else ""
    return {"type": kind, "title": title, "description": f"{title}.",
            "content": content or f"Lesson about {title}.", "related_operator": operator,
            "source_ref": {"harness_id": title[:6]},
            "evidence": {"code_change": change or title, "metrics_delta": delta, "context": ""}}


S_PRINT = item("Success", "Call cJSON_Print on the parsed tree", 25.1, 31.0,
               content="Printing walks every node type.", change="added cJSON_Print")
S_PRINT_AGAIN = item("Success", "Print the parsed tree with cJSON_Print", 31.0, 33.0,
                     content="Freeing the printed text with cJSON_free avoids leaks.",
                     change="added cJSON_free")
S_OPTIONS = item("Success", "Derive parse options from the first input byte", 33.0, 37.0)
S_MINIFY = item("Success", "Add a cJSON_Minify round trip", 37.0, 40.0)
S_COMPARE = item("Success", "Compare trees with cJSON_Compare", 40.0, 42.5, operator="fix")
S_ARRAYS = item("Success", "Walk arrays with cJSON_GetArrayItem", 42.5, 44.0)
S_TINY = item("Success", "Duplicate the tree with cJSON_Duplicate", 44.0, 44.4)
F_CRASH = item("Failure", "Avoid: cJSON_PrintPreallocated with a fixed buffer", None, None,
               content="It crashed with a stack-buffer-overflow: the buffer was too small.")
F_BUILD = item("Failure", "Avoid: cJSON_PrintPreallocated with a fixed buffer", None, None,
               content="It did not compile: implicit declaration of a helper.")
F_TWICE = item("Failure", "Avoid: parse the input twice", 44.0, 40.0)
F_TWICE_AGAIN = item("Failure", "Avoid: parsing the input twice", 44.0, 41.5)
F_SMALL = item("Failure", "Avoid: reorder frees", 44.0, 43.6)


def memory(*items: dict[str, Any]) -> dict[str, Any]:
    mem = empty_local_memory()
    mem["attempted_directions"] = [{"direction": "call cJSON_Print", "outcome": "Success",
                                    "source_ref": "v2", "evidence": "+5.9"}]
    mem["reasoning_bank"] = [copy.deepcopy(i) for i in items]
    return mem


def test_gain_severity_and_failure_modes() -> None:
    assert item_gain(S_PRINT) == pytest.approx(5.9)
    assert item_gain({"evidence": {"metrics_delta": "Line coverage: +2.5 points"}}) == 2.5
    assert item_gain({"evidence": {}}) is None
    assert [failure_mode(i) for i in (F_CRASH, F_BUILD, F_TWICE)] == ["crash", "compile", "regression"]
    assert severity(F_CRASH) > severity(F_BUILD) > severity(F_TWICE) == pytest.approx(4.0)
    assert is_trivial(S_TINY, 1.0) and is_trivial(F_SMALL, 1.0)
    assert not is_trivial(F_BUILD, 1.0) and not is_trivial(S_ARRAYS, 1.0)


def test_under_threshold_the_memory_is_returned_as_is() -> None:
    mem = memory(S_PRINT, S_TINY, F_SMALL)
    assert compress(mem, token_threshold=local_memory_tokens(mem)) is mem


def test_keeps_top_three_successes_and_top_two_failures_exactly() -> None:
    mem = memory(S_PRINT, S_OPTIONS, S_TINY, F_TWICE, S_PRINT_AGAIN, S_MINIFY, F_CRASH, S_COMPARE,
                 F_SMALL, S_ARRAYS, F_BUILD, F_TWICE_AGAIN)
    snapshot = copy.deepcopy(mem)
    out = compress(mem, token_threshold=200, noise=1.0)
    assert mem == snapshot  # pure
    assert out["attempted_directions"] == mem["attempted_directions"]
    titles = [i["title"] for i in out["reasoning_bank"]]
    # Successes by gain: the two cJSON_Print lessons merged (5.9), options (4.0), minify (3.0);
    # compare (2.5) and arrays (1.5) fall out, duplicate (0.4) is within the noise.
    # Failures by severity: the crash and the build failure share a title but are different
    # failure modes, so both stay, ahead of the merged "parse twice" regressions (4.0 points).
    assert titles == [
        "Call cJSON_Print on the parsed tree",
        "Derive parse options from the first input byte",
        "Add a cJSON_Minify round trip",
        "Avoid: cJSON_PrintPreallocated with a fixed buffer",
        "Avoid: cJSON_PrintPreallocated with a fixed buffer",
    ]
    merged = out["reasoning_bank"][0]
    assert merged["content"] == ("Printing walks every node type. Freeing the printed text with "
                                 "cJSON_free avoids leaks.")
    assert merged["evidence"]["code_change"] == "added cJSON_Print; added cJSON_free"
    assert merged["evidence"]["metrics_delta"] == "line coverage 25.10% -> 31.00%"
    assert merged["source_ref"] == {"harness_id": "Call c", "merged": 2}
    assert [failure_mode(i) for i in out["reasoning_bank"][3:]] == ["crash", "compile"]
    assert compress(copy.deepcopy(mem), token_threshold=200, noise=1.0) == out  # deterministic


def test_similar_failures_of_one_mode_merge() -> None:
    mem = memory(F_TWICE, F_SMALL, F_TWICE_AGAIN)
    out = compress(mem, token_threshold=10, noise=1.0)
    assert len(out["reasoning_bank"]) == 1
    merged = out["reasoning_bank"][0]
    assert merged["title"] == "Avoid: parse the input twice"
    assert severity(merged) == pytest.approx(4.0)
    assert merged["source_ref"]["merged"] == 2


def test_noise_threshold_decides_what_is_trivial() -> None:
    mem = memory(S_PRINT, S_ARRAYS, S_TINY)
    assert len(compress(mem, token_threshold=10, noise=0.3)["reasoning_bank"]) == 3
    assert [i["title"] for i in compress(mem, token_threshold=10, noise=2.0)["reasoning_bank"]] == [
        "Call cJSON_Print on the parsed tree"]


def test_default_threshold_triggers_on_a_long_memory() -> None:
    bank = [item("Success", f"Call api_fn{k} on the tree", 10.0, 10.0 + k, content="x" * 150)
            for k in range(1, 12)]
    mem = memory(*bank)
    assert local_memory_tokens(mem) > 1500
    out = compress(mem)
    assert [i["title"] for i in out["reasoning_bank"]] == [
        "Call api_fn11 on the tree", "Call api_fn10 on the tree", "Call api_fn9 on the tree"]
    assert local_memory_tokens(out) < 1500


def test_the_memory_manager_compresses_with_the_noise_it_measured_with() -> None:
    """A +0.6-point success on a harness covering 6% is a gain (see gain_noise): it is kept."""
    from agent_graph.context import Context
    from nodes.memory_manager import _with_status

    small = item("Success", "Print the parsed document", 6.0, 6.6)
    state: dict[str, Any] = {"analysis": {"archetype": "stateless_parser"}}
    best = {"version": 2, "lines_percent": 6.6}
    kept = _with_status(state, memory(small, S_TINY), best, 1, Context(local_memory_tokens=10))
    assert "Print the parsed document" in [i["title"] for i in kept["reasoning_bank"]]
    strict = _with_status(state, memory(small, S_TINY), best, 1,
                          Context(local_memory_tokens=10, min_gain_share=1.0))
    assert "Print the parsed document" not in [i["title"] for i in strict["reasoning_bank"]]
