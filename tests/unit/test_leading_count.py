"""A count named just before its array says how many elements the call reads or writes.

Invented API (``rg``, a register bus): ``rg_write_coils(l, addr, nb, const uint8_t *bits)``
reads ``nb`` bytes, ``rg_write_regs(l, addr, nb, const uint16_t *src)`` ``nb`` numbers,
``rg_read_regs(l, addr, nb, uint16_t *dest)`` writes ``nb`` numbers. Left option values, the
counts read past a NUL-terminated copy of a short input (blamed on the library: a false bug
report), past a one-number local, or wrote past it.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_roles import roles
from fuzzkit.api import FunctionDecl, Param

LINK = Param("l", "rg_link *")
ADDR = Param("addr", "int")


def _fn(name: str, *params: Param) -> FunctionDecl:
    return FunctionDecl(name, "int", (LINK, ADDR, *params), "rg.h")


COILS = _fn("rg_write_coils", Param("nb", "int"), Param("bits", "const uint8_t *"))
REGS = _fn("rg_write_regs", Param("nb", "int"), Param("src", "const uint16_t *"))
READ = _fn("rg_read_regs", Param("nb", "int"), Param("dest", "uint16_t *"))
BOTH = FunctionDecl("rg_write_and_read_regs", "int", (
    LINK, Param("write_addr", "int"), Param("write_nb", "int"), Param("src", "const uint16_t *"),
    Param("read_addr", "int"), Param("read_nb", "int"), Param("dest", "uint16_t *")), "rg.h")
API = [COILS, REGS, READ, BOTH, FunctionDecl("rg_new", "rg_link *", (Param("port", "int"),), "rg.h"),
       FunctionDecl("rg_free", "void", (LINK,), "rg.h")]


def _kinds(fn: FunctionDecl) -> list[tuple[str, int | None]]:
    return [(r.kind, r.pair) for r in roles(fn, ApiIndex(API))]


def test_each_count_is_paired_with_the_array_after_it() -> None:
    assert _kinds(COILS)[2:] == [("len", 3), ("bytes", 2)]
    assert _kinds(REGS)[2:] == [("count", 3), ("array", 2)]
    assert _kinds(READ)[2:] == [("count", 3), ("workspace", 2)]
    assert _kinds(BOTH)[2:4] == [("count", 3), ("array", 2)]
    assert _kinds(BOTH)[5:] == [("count", 6), ("workspace", 5)]
    assert _kinds(COILS)[1][0] == "int"  # the address stays an option


def test_an_integer_named_for_something_else_before_a_pointer_is_left_alone() -> None:
    fn = _fn("rg_tag", Param("mode", "int"), Param("name", "const char *"))
    assert [k for k, _ in _kinds(fn)[2:]] == ["int", "text"]


def _draft(fn: FunctionDecl) -> str:
    analysis = analyze_function(fn, API)
    return write_harness(fn, API, ["rg.h"], analysis.archetype, default_skeleton(analysis.archetype),
                         rules=analysis.rules).code


def test_the_drafts_pass_the_payload_with_its_size_and_arrays_as_long_as_their_counts() -> None:
    # the payload, whole or in the chunk loop's pieces, with its exact size
    coils = re.search(r"rg_write_coils\(\w+, addr, \(int\)(\w+), \(const uint8_t \*\)(\w+)\)", _draft(COILS))
    assert coils and (coils[1], coils[2]) in {("size", "data"), ("lf_chunk_size", "lf_chunk")}
    regs = _draft(REGS)
    call = re.search(r"rg_write_regs\(\w+, addr, (\w+), (\w+)\)", regs)
    assert call, regs
    assert re.search(rf"uint16_t {call[2]}\[8\]", regs) and re.search(rf"{call[1]} = .*0, 8\)", regs)
    read = _draft(READ)
    call = re.search(r"rg_read_regs\(\w+, addr, \(int\)(\d+), (\w+)\)", read)
    assert call, read
    assert re.search(rf"uint16_t {call[2]}\[{call[1]}\]", read)
