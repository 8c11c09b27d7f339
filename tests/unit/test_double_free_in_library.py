"""A block freed inside a call that releases nothing, then by the harness's one release: whose bug?

Invented regex library: ``rx_match(code, subject, len, md)`` keeps a copy of the subject in the
match data ``md``; ``rx_substitute(code, subject, len, md, ...)`` copies ``md`` into a scratch
match data and frees the scratch one, copied subject included; the harness's single
``rx_match_data_free(md)`` then frees the subject a second time. The harness never held that
block: a library bug, whatever the shape of the stack (a release right inside a call the
harness made, which otherwise reads as the harness releasing what it does not own).

The same shape with a block a constructor handed the harness (``rx_node_new`` made the node,
``rx_tree_add`` took it and freed it, the harness freed it again) stays harness misuse: the
call may own what it was given.
"""

from __future__ import annotations

import json

from agents.crash_analyzer import CrashFeasibilityAnalyzer
from agents.offline.crash_roles import judge_feasibility
from agents.offline.prompt_reader import read_prompt
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.crash import parse_sanitizer_report
from prompts import render

REPORT = """\
==2==ERROR: AddressSanitizer: attempting double-free on 0x606000001a40 in thread T0:
    #0 0x55 in __interceptor_free (/w/harness+0x115972)
    #1 0x55 in default_free /src/rx-1.0/src/rx_context.c:66:1
    #2 0x55 in {release} /src/rx-1.0/src/rx_match_data.c:106:5
    #3 0x55 in LLVMFuzzerTestOneInput /w/harness.c:249:36
    #4 0x55 in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) (/w/harness+0x79313)

0x606000001a40 is located 0 bytes inside of 60-byte region [0x606000001a40,0x606000001a7c)
freed by thread T0 here:
    #0 0x55 in __interceptor_free (/w/harness+0x115972)
    #1 0x55 in default_free /src/rx-1.0/src/rx_context.c:66:1
    #2 0x55 in {release} /src/rx-1.0/src/rx_match_data.c:106:5
    #3 0x55 in {first} /src/rx-1.0/src/rx_substitute.c:989:34
    #4 0x55 in LLVMFuzzerTestOneInput /w/harness.c:240:11

previously allocated by thread T0 here:
    #0 0x55 in malloc (/w/harness+0x115c1e)
    #1 0x55 in default_malloc /src/rx-1.0/src/rx_context.c:59:8
    #2 0x55 in {made} /src/rx-1.0/src/rx_match.c:7495:27
    #3 0x55 in LLVMFuzzerTestOneInput /w/harness.c:150:12

SUMMARY: AddressSanitizer: double-free (/w/harness+0x115972) in __interceptor_free
"""

API = [
    FunctionDecl("rx_match", "int", [Param("code", "const rx_code *"), Param("subject", "const char *"),
                                     Param("length", "size_t"), Param("md", "rx_match_data *")]),
    FunctionDecl("rx_substitute", "int", [Param("code", "const rx_code *"), Param("subject", "const char *"),
                                          Param("length", "size_t"), Param("md", "rx_match_data *"),
                                          Param("out", "char *"), Param("outlen", "size_t *")]),
    FunctionDecl("rx_match_data_free", "void", [Param("md", "rx_match_data *")]),
    FunctionDecl("rx_node_new", "rx_node *", [Param("text", "const char *")]),
    FunctionDecl("rx_tree_add", "int", [Param("tree", "rx_tree *"), Param("node", "rx_node *")]),
    FunctionDecl("rx_node_free", "void", [Param("node", "rx_node *")]),
]


def _verdict(release: str, first: str, made: str) -> tuple[dict[str, object], str]:
    report = parse_sanitizer_report(REPORT.format(release=release, first=first, made=made), "harness.c")
    assert report is not None
    state = {"target": API[0].to_dict(), "api": [d.to_dict() for d in API], "harness_code": "",
             "crash": report.to_dict(), "crash_analysis": {}}
    _system, user = render("crash_feasibility", CrashFeasibilityAnalyzer.variables(state, ()))
    reply, _code = judge_feasibility(read_prompt("ROLE: crash_feasibility_analyzer", user))
    return json.loads(json.dumps(reply)), report.misuse_hint


def test_state_a_call_freed_before_the_harness_released_its_object_is_a_library_bug() -> None:
    verdict, hint = _verdict("rx_match_data_free", "rx_substitute", "rx_match")
    assert verdict["verdict"] == "library_bug", verdict
    assert "rx_substitute" in str(verdict["reasoning"]) and "rx_match" in str(verdict["reasoning"])
    assert "a library bug" in hint


def test_a_block_a_constructor_handed_over_stays_the_harness_misuse() -> None:
    verdict, hint = _verdict("rx_node_free", "rx_tree_add", "rx_node_new")
    assert verdict["verdict"] == "harness_misuse", verdict


def test_a_release_freeing_first_stays_the_harness_releasing_twice() -> None:
    verdict, hint = _verdict("rx_match_data_free", "rx_match_data_free", "rx_match")
    assert verdict["verdict"] == "harness_misuse", verdict
    assert "released memory it does not own" in hint
