"""An improvement block whose call's result leaks is repaired once, by releasing that result.

The header of an invented URI library says nothing of who owns ``ur_build(...)``'s string;
LeakSanitizer's allocation stack (``malloc <- ur_build <- LLVMFuzzerTestOneInput``) does. The
next version keeps the block and releases the result in it; if that version crashes in the same
block again, the block is dropped as any other misuse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_graph.context import Context
from agent_graph.routing import Limits, route
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.header_facts import HeaderFacts, Releaser, Typedef
from fuzzkit.release_names import result_releaser
from nodes.improvement_blocks import reapply_releases
from nodes.memory_manager import revert_failed

HARNESS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:CALL */
  uri = ur_parse(text);
  /* LF improve: call ur_escape on the input */
  {
    ur_char *result2 = NULL;
    result2 = ur_escape(text);
    if (result2 != NULL) free(result2);
  }
  /* LF improve: call ur_build on the input */
  {
    char *base = NULL;
    ur_char *result3 = NULL;
    base = lf_take_str(&lf_opt, 16);
    if (base == NULL) goto lf_skip_2;
    result3 = (ur_char *)ur_build((const ur_char *)text, (const ur_char *)base);
    lf_skip_2: ;
    free(base);
  }
  /* @LF:CLEANUP */
  ur_free(uri);
  return 0;
}
"""
BUILD = FunctionDecl("ur_build", "ur_char *",
                     (Param("uri", "const ur_char *"), Param("base", "const ur_char *")))
ESCAPE = FunctionDecl("ur_escape", "ur_char *", (Param("s", "const ur_char *"),))
FACTS = HeaderFacts(typedefs=[Typedef("ur_char", "unsigned char", "unsigned char")])
BEST = {"version": 1, "code": "int LLVMFuzzerTestOneInput(void) { return 0; }", "lines_percent": 5.0,
        "build": {"version": 1, "ok": True}, "run": {"version": 1, "usable": True}}


def _state(tmp_path: Path, callee: str = "ur_build", code: str = HARNESS, **extra: Any) -> dict[str, Any]:
    frames = [{"function": "malloc", "file": "", "line": 0},
              {"function": callee, "file": "/src/uri.c", "line": 90},
              {"function": "LLVMFuzzerTestOneInput", "file": "harness.c", "line": 16}]
    change = {"kind": "improve", "version": 2,
              "directions": ["call ur_escape on the input", "call ur_build on the input"], **extra}
    return {"best": BEST, "harness_version": 2, "harness_code": code, "phase": "optimization",
            "build": {"version": 2, "ok": True}, "run": {"version": 2, "crashed": True, "usable": False},
            "crash": {"version": 2, "kind": "leak", "frames": frames}, "last_change": change,
            "counters": {"harness_versions": 2}, "api": [BUILD.to_dict(), ESCAPE.to_dict()],
            "header_facts": FACTS.to_dict(), "project": "p", "function": "ur_parse",
            "work_dir": str(tmp_path)}


def test_the_leaked_result_is_released_in_its_block_and_the_block_kept(tmp_path: Path) -> None:
    update = revert_failed(_state(tmp_path), Context())  # type: ignore[arg-type]
    code = update["harness_code"]
    block = code[code.index("call ur_build"):code.index("@LF:CLEANUP")]
    assert "if (result3 != NULL) free((void *)result3);" in block
    assert block.index("lf_skip_2: ;") < block.index("free((void *)result3)")  # reached after a skip too
    assert "ur_escape(text)" in code and code.count("{") == code.count("}")
    assert update["harness_version"] == 3
    assert update["last_change"]["released"] == ["call ur_build on the input"]
    assert "improvement.block_repaired" in (tmp_path / "events.jsonl").read_text()
    merged = {**_state(tmp_path), **update, "counters": {"harness_versions": 3},
              "analysis": {"archetype": "stateless_parser"}}
    assert route(merged, Limits()).next == "build"  # type: ignore[arg-type]


def test_a_block_that_leaks_again_after_its_repair_is_dropped(tmp_path: Path) -> None:
    update = revert_failed(_state(tmp_path, released=["call ur_build on the input"]), Context())  # type: ignore[arg-type]
    assert "ur_build" not in update["harness_code"] and update["counters"]["dropped_blocks"] == 1


def test_a_leak_from_elsewhere_or_of_a_released_result_drops_the_block(tmp_path: Path) -> None:
    update = revert_failed(_state(tmp_path, callee="ur_internal_alloc"), Context())  # type: ignore[arg-type]
    assert "ur_build" not in update["harness_code"]
    freed = HARNESS.replace("    free(base);\n", "    free(base);\n    ur_release(result3);\n")
    update = revert_failed(_state(tmp_path, code=freed), Context())  # type: ignore[arg-type]
    assert "ur_build" not in update["harness_code"]


def test_the_releaser_is_the_headers_then_the_librarys_own_free_then_free() -> None:
    documented = HeaderFacts(typedefs=FACTS.typedefs, releasers=[
        Releaser(function="ur_string_release", releases="what ur_build allocates", evidence="documentation")])
    assert result_releaser(BUILD, documented, []) == "ur_string_release"
    own_free = FunctionDecl("ur_free", "void", (Param("p", "void *"),)).to_dict()
    other = FunctionDecl("ur_mem_free", "void", (Param("p", "void *"),)).to_dict()
    assert result_releaser(BUILD, FACTS, [other, own_free]) == "ur_free"
    assert result_releaser(BUILD, FACTS, [other]) == "free"
    node = FunctionDecl("ur_build_node", "ur_node *", ())
    by_type = HeaderFacts(releasers=[Releaser(function="ur_node_free", releases="ur_node *",
                                              evidence="parameter type")])
    assert result_releaser(node, by_type, []) == "ur_node_free"
    assert result_releaser(node, FACTS, []) is None  # an object nothing in the header releases


def test_the_changes_other_blocks_that_keep_a_result_of_that_type_release_it_too(tmp_path: Path) -> None:
    """Two string builders added at once leak twice; one repair releases both (a block of the
    best version, which ran clean, and a result of another type are left as they are)."""
    code = HARNESS.replace("    if (result2 != NULL) free(result2);\n", "").replace(
        "  /* @LF:CLEANUP */",
        "  /* LF improve: call ur_port on the input */\n  {\n    int result4 = 0;\n"
        "    result4 = ur_port(uri);\n  }\n  /* @LF:CLEANUP */")
    state = _state(tmp_path, code=code)
    state["api"].append(FunctionDecl("ur_port", "int", (Param("uri", "ur_uri *"),)).to_dict())
    kept = "/* LF improve: call ur_escape on the input */"
    state["best"] = {**BEST, "code": ""}
    update = revert_failed(state, Context())  # type: ignore[arg-type]
    out = update["harness_code"]
    assert "if (result2 != NULL) free((void *)result2);" in out
    assert "if (result3 != NULL) free((void *)result3);" in out
    assert "result4 != NULL" not in out
    assert update["last_change"]["released"] == ["call ur_escape on the input", "call ur_build on the input"]
    state["best"] = {**BEST, "code": kept}  # the escape block was there before: it ran clean
    update = revert_failed(state, Context())  # type: ignore[arg-type]
    out = update["harness_code"]
    assert "result2 != NULL" not in out and "free((void *)result3)" in out


def test_the_run_remembers_the_release_for_a_later_improvement_adding_the_call(tmp_path: Path) -> None:
    """A repaired block measured as noise goes back to the best version; the next improvement may
    add the same call, and gets the release the repair found instead of the same leak."""
    update = revert_failed(_state(tmp_path), Context())  # type: ignore[arg-type]
    assert update["extras"] == {"released_results": {"ur_build": "free"}}
    later = {**_state(tmp_path), "extras": update["extras"]}
    code, again = reapply_releases(HARNESS, later)  # type: ignore[arg-type]
    assert again == ["ur_build"] and "if (result3 != NULL) free((void *)result3);" in code
    assert code.count("free((void *)") == 1  # the escape block releases its own result already
    assert reapply_releases(code, later) == (code, [])  # type: ignore[arg-type]
    assert reapply_releases(HARNESS, _state(tmp_path)) == (HARNESS, [])  # type: ignore[arg-type]
    # Another function returning the same type, added later in the run: released the same way.
    escape_again = HARNESS.replace("    if (result2 != NULL) free(result2);\n", "")
    code, again = reapply_releases(escape_again, later)  # type: ignore[arg-type]
    assert again == ["ur_build", "ur_escape"] and "if (result2 != NULL) free((void *)result2);" in code


def test_a_releaser_of_a_named_plain_text_type_frees_only_that_type() -> None:
    """``typedef const char *ur_path`` with ``ur_path_free(ur_path)``: a block's ``char *`` from
    ``ur_expand`` went to ``ur_path_free`` (an overflow inside it); it goes to the library's free."""
    facts = HeaderFacts(typedefs=[Typedef("ur_path", "const char *", "const char *")],
                        releasers=[Releaser(function="ur_path_free", releases="ur_path",
                                            evidence="parameter type")])
    own_free = FunctionDecl("ur_free", "void", (Param("p", "void *"),)).to_dict()
    expand = FunctionDecl("ur_expand", "char *", (Param("s", "const char *"),))
    assert result_releaser(expand, facts, [own_free]) == "ur_free"
    made = FunctionDecl("ur_make_path", "ur_path", (Param("s", "const char *"),))
    assert result_releaser(made, facts, [own_free]) == "ur_path_free"
