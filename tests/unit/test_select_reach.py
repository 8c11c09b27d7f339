"""Default targets spread over the code they reach: a call graph read from a disassembly."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzkit.api import FunctionDecl, Param
from fuzzkit.reach import CallGraph, call_graph, parse_disassembly
from fuzzkit.select_functions import choose_functions

# `llvm-objdump -dr` of an invented two-source library: a call out of the source carries a
# relocation naming its target, a call within it is named by the disassembler.
DISASSEMBLY = """
lib.a(doc.c.o):\tfile format elf64-x86-64

Disassembly of section .text:

0000000000000000 <acme_read_doc>:
       0:      \tpushq\t%rbp
       1:      \tcallq\t0x6 <acme_read_doc+0x6>
\t\t\t0000000000000002:  R_X86_64_PLT32\tacme_tokenize-0x4
       6:      \tmovq\t__llvm_prf_cnts(%rip), %rax
\t\t\t0000000000000009:  R_X86_64_PC32\t__llvm_prf_cnts-0x4
       d:      \tcallq\t0x40 <build_tree>
      12:      \tretq

0000000000000040 <build_tree>:
      40:      \tmovl\t$1, %eax
      45:      \tretq

lib.a(path.c.o):\tfile format elf64-x86-64

0000000000000000 <acme_eval_path>:
       0:      \tcallq\t0x5 <acme_eval_path+0x5>
\t\t\t0000000000000001:  R_X86_64_PLT32\tacme_compile_path-0x4
       5:      \tretq
"""


def test_calls_are_read_from_relocations_and_named_targets() -> None:
    graph = parse_disassembly(DISASSEMBLY.splitlines())
    assert graph.calls["acme_read_doc"] == {"acme_tokenize", "build_tree"}  # no profile counter
    assert graph.calls["acme_eval_path"] == {"acme_compile_path"}
    assert graph.sizes["acme_read_doc"] == 5 and graph.sizes["build_tree"] == 2
    assert graph.reach("acme_read_doc") == {"acme_read_doc", "acme_tokenize", "build_tree"}
    assert graph.reach("acme_read_doc", 0) == {"acme_read_doc"}


def _parser(name: str) -> FunctionDecl:
    return FunctionDecl(name, "int", (Param("data", "const char *"), Param("size", "size_t")))


# Three entry points scoring alike: two parse documents through the same code, one evaluates
# paths through code of its own.
PARSERS = [_parser("acme_parse_memory"), _parser("acme_read_memory"), _parser("acme_eval_path")]
GRAPH = CallGraph(
    calls={"acme_parse_memory": frozenset({"parse_doc"}), "acme_read_memory": frozenset({"parse_doc"}),
           "acme_eval_path": frozenset({"compile_path"})},
    sizes={"acme_parse_memory": 5, "acme_read_memory": 5, "parse_doc": 900, "acme_eval_path": 5,
           "compile_path": 400},
)


def test_a_function_reaching_new_code_comes_before_one_reaching_chosen_code() -> None:
    assert [d.name for d in choose_functions(PARSERS, 2)] == ["acme_parse_memory", "acme_read_memory"]
    chosen = [d.name for d in choose_functions(PARSERS, 2, graph=GRAPH)]
    assert chosen == ["acme_parse_memory", "acme_eval_path"]
    # The set is still filled: reaching chosen code lowers a function, it does not drop it.
    assert len(choose_functions(PARSERS, 3, graph=GRAPH)) == 3


def test_a_variant_waits_for_the_function_it_varies() -> None:
    # `acme_uncompress` runs `acme_inflate`; `acme_inflate_sync` adds code of its own to it.
    decls = [_parser("acme_uncompress"), _parser("acme_inflate"), _parser("acme_inflate_sync"),
             _parser("acme_checksum")]
    graph = CallGraph(
        calls={"acme_uncompress": frozenset({"acme_inflate"}),
               "acme_inflate_sync": frozenset({"acme_inflate", "sync_search"})},
        sizes={"acme_uncompress": 10, "acme_inflate": 900, "acme_inflate_sync": 10, "sync_search": 80,
               "acme_checksum": 100},
    )
    chosen = [d.name for d in choose_functions(decls, 4, graph=graph)]
    # The inflater reaches only chosen code, yet its variant does not go before it (and so push
    # it out as a variant of a chosen function): the checksum, then the inflater.
    assert chosen[:2] == ["acme_uncompress", "acme_checksum"] and "acme_inflate" in chosen


def test_an_archive_that_cannot_be_read_gives_an_empty_graph(tmp_path: Path) -> None:

    assert call_graph(tmp_path / "missing.a") == CallGraph()
    (tmp_path / "junk.a").write_bytes(b"not an archive")
    assert call_graph(tmp_path / "junk.a").sizes == {}


def test_without_llvm_objdump_the_choice_goes_on_without_a_graph(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import fuzzkit.reach as reach
    from fuzzkit.errors import ToolchainError

    def missing(name: str) -> str:
        raise ToolchainError(f"{name} is not installed", "install LLVM")

    monkeypatch.setattr(reach, "tool", missing)
    (tmp_path / "lib.a").write_bytes(b"!<arch>\n")
    assert call_graph(tmp_path / "lib.a") == CallGraph()
