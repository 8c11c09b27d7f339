"""The usage index: which files it reads, what it records, and the facts block it travels in."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.leak_owner import library_leak
from agents.offline.usage import usage_releasers
from agents.usage_section import read_usage, usage_section
from benchkit.generality_table import markdown
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.facts_block import FactsBlockError, read_facts, render_facts
from fuzzkit.usage_index import build_index
from fuzzkit.usage_models import ObjectProtocol, UsageFacts
from fuzzkit.usage_protocols import target_usage
from fuzzkit.usage_sources import doc_blocks, usage_sources
from tests.usage_fixtures import OPENER, PARTIAL_RELEASER, write_tree

HND_API = [
    FunctionDecl("hnd_open", "int", (Param("mode", "enum hnd_mode"), Param("fmt", "enum hnd_fmt"),
                                     Param("out", "hnd_t *"))),
    FunctionDecl("hnd_decode", "int", (Param("h", "hnd_t"), Param("data", "const unsigned char *"),
                                       Param("size", "size_t"))),
    FunctionDecl("hnd_close", "int", (Param("h", "hnd_t"),)),
]


def test_a_facts_block_reads_back_into_the_same_model() -> None:
    facts = UsageFacts(objects=[ObjectProtocol(type="acme_doc *", release="acme_doc_free", uses=3)])
    text = "Some words a person reads.\n" + render_facts("usage", facts) + "\nMore words."
    assert read_facts(text, "usage", UsageFacts) == facts
    assert read_facts(text, "header", UsageFacts) is None  # another kind: not this block
    assert read_facts("no block at all", "usage", UsageFacts) is None


def test_a_facts_block_that_does_not_fit_its_model_is_an_error() -> None:
    bad = "```yaml\n# facts: usage v1\nobjects:\n- type: x\n  colour: red\n```"
    with pytest.raises(FactsBlockError, match="does not fit UsageFacts"):
        read_facts(bad, "usage", UsageFacts)
    with pytest.raises(FactsBlockError, match="version 9"):
        read_facts("```yaml\n# facts: usage v9\n{}\n```", "usage", UsageFacts)


def test_rewording_the_summary_changes_nothing_the_engine_reads(tmp_path: Path) -> None:
    root = write_tree(tmp_path, OPENER)
    index = build_index(root, HND_API, [str(root)], [], [str(root / "hnd.c")])
    state = {"library_usage": target_usage(index, HND_API[1], HND_API).model_dump(mode="json")}
    section = usage_section(state)
    reworded = section.replace("made by", "constructed through").replace("released by", "freed via")
    assert read_usage(reworded) == read_usage(section) != UsageFacts()


def test_the_yardstick_is_never_read(tmp_path: Path) -> None:
    files = dict(OPENER)
    files["tests/fuzz_like_test.c"] = "int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\n"
    files["oss-fuzz/helper.c"] = "void helper(void) { hnd_decode(0, 0, 0); }\n"
    root = write_tree(tmp_path, files)
    sources, left_out = usage_sources(root, [root / "hnd.c"])
    read = {s.rel for s in sources}
    assert read == {"tests/test_decode.c"}
    assert set(left_out) == {"fuzz/decode_fuzzer.c", "tests/fuzz_like_test.c", "oss-fuzz/helper.c"}


def test_only_a_fuzz_harness_calling_the_target_gives_no_usage(tmp_path: Path) -> None:
    files = {k: v for k, v in OPENER.items() if not k.startswith("tests/")}
    root = write_tree(tmp_path, files)
    index = build_index(root, HND_API, [str(root)], [], [str(root / "hnd.c")])
    assert index.functions == [] and index.left_out == ["fuzz/decode_fuzzer.c"]
    usage = target_usage(index, HND_API[1], HND_API)
    assert usage.facts == UsageFacts() and usage.snippets == []
    assert usage_section({"library_usage": usage.model_dump(mode="json")}) == ""


def test_documentation_blocks_are_read_lexically(tmp_path: Path) -> None:
    files = {k: v for k, v in OPENER.items() if not k.startswith("tests/")}
    files["README.md"] = (
        "# hnd\n\nDecode a buffer:\n\n```c\nhnd_t h;\nif (hnd_open(HND_READ, HND_FMT_PACKED, &h) != 0)\n"
        "    return -1;\nn = hnd_decode(h, buf, len);\nhnd_close(h);\n```\n")
    files["doc/hnd.3"] = ".TH HND 3\n.SH EXAMPLES\n.nf\nhnd_close(h);\n.fi\n.SH SEE ALSO\n"
    root = write_tree(tmp_path, files)
    index = build_index(root, HND_API, [str(root)], [], [str(root / "hnd.c")])
    snippet = next(f for f in index.functions if f.file == "README.md#1")
    assert snippet.parsed_by == "lexical" and snippet.origin == "doc"
    opened = snippet.calls[0]
    assert opened.function == "hnd_open" and opened.check.startswith("hnd_open(")
    assert [a.kind for a in opened.args] == ["constant", "constant", "object"] and opened.args[2].address
    decoded = snippet.calls[1]
    assert decoded.result == "n" and [a.kind for a in decoded.args][2] == "size"
    assert any(f.file == "doc/hnd.3#1" for f in index.functions)


def test_doxygen_and_man_page_blocks() -> None:
    header = "/**\n * Example:\n * @code\n * acme_t *a = acme_new();\n * acme_free(a);\n * @endcode\n */\n"
    assert doc_blocks(header, ".h") == ["acme_t *a = acme_new();\nacme_free(a);"]
    man = ".SH EXAMPLE\n.EX\nacme_open(\\fIpath\\fP, ACME_RDONLY);\n.EE\n.SH NOTES\nx(y)\n"
    assert doc_blocks(man, ".3") == ["acme_open(path, ACME_RDONLY);"]


def test_a_leak_released_with_a_partial_releaser_is_the_harness_s(tmp_path: Path) -> None:
    api = [FunctionDecl("pr_parse", "pr_obj *", (Param("text", "const char *"), Param("len", "size_t"))),
           FunctionDecl("pr_free", "void", (Param("o", "pr_obj *"),)),
           FunctionDecl("pr_dispose", "void", (Param("o", "pr_obj *"),))]
    root = write_tree(tmp_path, PARTIAL_RELEASER)
    index = build_index(root, api, [str(root)], [], [str(root / "pr.c")])
    facts = target_usage(index, api[0], api).facts
    assert usage_releasers(facts) == {"pr_obj *": "pr_dispose"}
    harness = ("int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
               "  pr_obj *o = pr_parse((const char *)data, size);\n  if (o) pr_free(o);\n  return 0;\n}\n")
    stack = "#0 calloc\n#1 pr_parse pr.c:7\n#2 LLVMFuzzerTestOneInput harness.c:2\n"
    # Without the usage, pr_free looks like o's releaser, so the leak looks like the library's.
    assert library_leak(harness, stack, api, api)
    assert library_leak(harness, stack, api, api, usage_releasers(facts)) == ""


def test_init_benchmark_ranks_the_entry_points_the_library_s_own_code_feeds() -> None:
    from fuzzkit.select_functions import choose_functions, usage_bonus

    decls = [FunctionDecl("zz_scan_text", "int", (Param("text", "const char *"), Param("len", "size_t"))),
             FunctionDecl("zz_read_blob", "int", (Param("blob", "const char *"), Param("len", "size_t")))]
    assert [d.name for d in choose_functions(decls, 1)] == ["zz_scan_text"]  # header order breaks the tie
    used = usage_bonus([("zz_read_blob", True), ("zz_scan_text", False)])
    assert used == {"zz_read_blob": 2}  # only being called earns nothing
    assert [d.name for d in choose_functions(decls, 1, used=used)] == ["zz_read_blob"]


def test_the_generality_table_totals_each_arm_apart() -> None:
    def row(name: str, arm: str, running: int) -> dict:
        return {"library": name, "arm": arm, "functions_running": running, "functions_total": 4,
                "logicfuzz": {"lines": 10.0, "harnesses": running},
                "upstream": {"lines": 10.0, "status": "ok"},
                "ratio_lines": 1.0}

    text = markdown([row("zz", "usage", 4), row("zz (no-usage)", "no-usage", 1)])
    assert "| **total (1 libraries), usage** | 4/4 |" in text
    assert "| **total (1 libraries), no-usage** | 1/4 |" in text
    # Rows of merged sittings say the commit each was measured at.
    text = markdown([{**row("zz", "usage", 4), "commit": "aaa1111"},
                     {**row("yy", "usage", 4), "commit": "bbb2222"}])
    assert "- measured at commit aaa1111: zz" in text and "- measured at commit bbb2222: yy" in text
    assert "- measured at commit not recorded: zz" in markdown([row("zz", "usage", 4)])


def test_a_leak_repair_swaps_the_partial_releaser_for_the_library_s(tmp_path: Path) -> None:
    from agents.offline.usage import release_as_usage

    facts = UsageFacts(objects=[ObjectProtocol(type="pr_obj *", release="pr_dispose", uses=1)])
    harness = "  pr_obj *o = pr_parse(text, size);\n  pr_count(o);\n  if (o != NULL) pr_free(o);\n"
    fixed, notes = release_as_usage(harness, facts)
    assert "pr_dispose(o)" in fixed and "pr_free(o)" not in fixed and "not pr_free" in notes[0]
    assert release_as_usage(fixed, facts) == (fixed, [])  # already the library's releaser


def test_a_harness_that_skips_the_usage_s_setup_is_made_again(tmp_path: Path) -> None:
    from agents.offline.usage import made_as_usage

    root = write_tree(tmp_path, OPENER)
    index = build_index(root, HND_API, [str(root)], [], [str(root / "hnd.c")])
    facts = target_usage(index, HND_API[1], HND_API).facts
    zeroed = "hnd_t h = 0;\nhnd_decode(h, data, size);\n"
    assert not made_as_usage(zeroed, facts, HND_API[1])
    assert made_as_usage("hnd_open(HND_READ, HND_FMT_PACKED, &h);\n" + zeroed, facts, HND_API[1])


def test_a_value_only_the_caller_knows_makes_the_sequence_incomplete(tmp_path: Path) -> None:
    files = {k: v for k, v in OPENER.items() if not k.startswith("tests/")}
    files["examples/decode.c"] = (
        '#include "hnd.h"\nint decode_with(hnd_t h, const unsigned char *buf, size_t len) {\n'
        "  hnd_t mine;\n  if (hnd_open(HND_READ, HND_FMT_PACKED, &mine) != 0) return -1;\n"
        "  hnd_close(mine);\n  return hnd_decode(h, buf, len);\n}\n")
    root = write_tree(tmp_path, files)
    index = build_index(root, HND_API, [str(root)], [], [str(root / "hnd.c")])
    assert index.functions[0].params == ["h", "buf", "len"]
    protocol = target_usage(index, HND_API[1], HND_API).facts.target("hnd_decode")
    assert protocol is not None and not protocol.complete  # h comes from decode_with's caller


def test_a_long_usage_keeps_the_target_and_the_calls_nearest_to_it(tmp_path: Path) -> None:
    from fuzzkit.usage_models import Arg, CallSite, UsageFunction
    from fuzzkit.usage_protocols import MAX_STEPS, target_slice

    h = Arg(text="h", kind="object", var="h")
    calls = [CallSite(function=f"set{i}", args=[h]) for i in range(30)]
    calls.insert(25, CallSite(function="hnd_decode", args=[h, Arg(text="buf", kind="data", var="buf")]))
    fn = UsageFunction(file="t.c", name="t", calls=calls, variables={"h": "hnd_t", "buf": "char *"})
    steps, _complete = target_slice(fn, "hnd_decode")
    assert len(steps) <= MAX_STEPS + 1 and any(s.function == "hnd_decode" for s in steps)
    assert steps[0].function == "set17" and steps[-1].function == "set29"


def test_the_calls_after_the_target_are_the_improver_s_first_choice(tmp_path: Path) -> None:
    from agents.offline.usage import usage_followups

    api = [FunctionDecl("pr_parse", "pr_obj *", (Param("text", "const char *"), Param("len", "size_t"))),
           FunctionDecl("pr_count", "int", (Param("o", "const pr_obj *"),)),
           FunctionDecl("pr_free", "void", (Param("o", "pr_obj *"),)),
           FunctionDecl("pr_dispose", "void", (Param("o", "pr_obj *"),))]
    root = write_tree(tmp_path, PARTIAL_RELEASER)
    index = build_index(root, api, [str(root)], [], [str(root / "pr.c")])
    facts = target_usage(index, api[0], api).facts
    assert usage_followups(facts, api[0]) == ["pr_count", "pr_count"]  # never a release


def test_macro_arguments_keep_their_written_text(tmp_path: Path) -> None:
    files = {k: v for k, v in OPENER.items() if not k.startswith("tests/")}
    files["tools/dump.c"] = (
        '#include <stdio.h>\n#include "hnd.h"\n#define MODE HND_READ\n'
        "int main(void) {\n  static unsigned char buf[BUFSIZ];\n"
        "  size_t len = fread(buf, 1, BUFSIZ, stdin);\n"
        "  hnd_t h;\n  if (hnd_open(MODE, HND_FMT_PACKED, &h) != 0) return 1;\n"
        "  hnd_decode(h, buf, len);\n  hnd_close(h);\n  return 0;\n}\n")
    root = write_tree(tmp_path, files)
    index = build_index(root, HND_API, [str(root)], [], [str(root / "hnd.c")])
    opened = index.functions[0].calls[0]
    assert [a.text for a in opened.args] == ["MODE", "HND_FMT_PACKED", "&h"]
    assert opened.args[0].kind == "constant"


def test_an_error_path_s_release_before_the_target_is_not_replayed() -> None:
    from agents.offline.usage import usage_draft
    from fuzzkit.usage_models import Arg, Step, TargetProtocol

    h = Arg(text="h", kind="object", var="h")
    protocol = TargetProtocol(
        function="hnd_decode", seen_in="t.c:main", variables={"h": "hnd_t", "buf": "unsigned char *"},
        sequence=[Step(call="hnd_open", args=[Arg(text="HND_READ", kind="constant"),
                                              Arg(text="HND_FMT_PACKED", kind="constant"),
                                              Arg(text="&h", kind="object", var="h", address=True)]),
                  Step(call="hnd_close", args=[h]),  # `if (bad) { hnd_close(h); return 1; }`
                  Step(call="hnd_decode", args=[h, Arg(text="buf", kind="data", var="buf"),
                                                Arg(text="len", kind="size", var="len")]),
                  Step(call="hnd_close", args=[h])])
    facts = UsageFacts(objects=[ObjectProtocol(type="hnd_t", release="hnd_close", uses=1)],
                       targets=[protocol])
    code, _notes, _calls = usage_draft(facts, HND_API[1], HND_API, ["hnd.h"])
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    assert body.count("hnd_close(") == 1 and body.index("hnd_decode(") < body.index("hnd_close(")


def test_a_replay_that_does_not_compile_gives_way_to_the_synthesizer() -> None:
    from agents.offline.prompt_reader import PromptFacts
    from agents.offline.roles import enhance
    from agents.offline.usage import REPLAY_MARK

    harness = (f"{REPLAY_MARK} tests/t.c:main */\n"
               "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
               "  hnd_open(MODE_FROM_A_TEST_HEADER, 0, &h);\n  return 0;\n}\n")
    prototypes = "\n".join(d.prototype() for d in HND_API)
    facts = PromptFacts(role="enhancer", sections={
        "Target function": HND_API[1].prototype(), "Current harness": f"```c\n{harness}```",
        "Compile errors": "h.c:3:12: error: use of undeclared identifier 'MODE_FROM_A_TEST_HEADER'",
        "Library API": f"```c\n{prototypes}\n```", "Headers": '#include "hnd.h"'})
    payload, code = enhance(facts)
    assert "synthesizer" in payload["fixes"][0]
    assert code and REPLAY_MARK not in code and "hnd_decode(" in code
