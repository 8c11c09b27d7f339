"""A bad free right inside a release function the harness called is the harness's misuse."""

from __future__ import annotations

from fuzzkit.triage import triage

BAD_FREE = """\
==2==ERROR: AddressSanitizer: attempting free on address which was not malloc()-ed: \
0x7f7114331e53 in thread T0
    #0 0x562d6f9309c2 in __interceptor_free (/out/harness+0x10b9c2)
    #1 0x562d6f973cb0 in qz_safe_free /src/qz/src/mem.c:219:3
    #2 0x562d6f973cb0 in qz_free /src/qz/src/mem.c:229:3
    #3 0x562d6f96be7e in LLVMFuzzerTestOneInput /out/harness.c:117:20
    #4 0x562d6f894363 in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) \
(/out/harness+0x6f363)
"""
DEEP = """\
==2==ERROR: AddressSanitizer: attempting double-free on 0x602000000010 in thread T0:
    #0 0x562d6f9309c2 in __interceptor_free (/out/harness+0x10b9c2)
    #1 0x562d6f973cb0 in node_release /src/qz/src/tree.c:19:3
    #2 0x562d6f973cb0 in tree_prune /src/qz/src/tree.c:88:3
    #3 0x562d6f973cb0 in tree_rebalance /src/qz/src/tree.c:140:3
    #4 0x562d6f973cb0 in qz_tree_free /src/qz/src/tree.c:229:3
    #5 0x562d6f96be7e in LLVMFuzzerTestOneInput /out/harness.c:117:20
"""


def test_a_bad_free_inside_the_release_the_harness_called_names_the_harness() -> None:
    found = triage("bad-free", BAD_FREE.splitlines(), "harness.c", False)
    assert found.category == "library" and found.entry_function == "qz_free"
    assert "the harness released memory it does not own" in found.misuse_hint


def test_a_double_free_deep_inside_the_library_stays_without_a_hint() -> None:
    found = triage("double-free", DEEP.splitlines(), "harness.c", False)
    assert found.entry_function == "qz_tree_free" and found.misuse_hint == ""
