"""Phase-2 coverage improvement: uncovered functions become self-contained blocks."""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness, value
from agents.offline.synth import SLOTS, default_skeleton, marker, write_harness
from agents.offline.synth_api import ApiIndex
from tests.types_text import render_types
from tests.unit.test_offline_data import api, fn

UNCOVERED_CJSON = [
    "cJSON_PrintUnformatted",
    "cJSON_IsNumber",
    "cJSON_Duplicate",
    "cJSON_Compare",
    "cJSON_GetArrayItem",
    "cJSON_Minify",
    "cJSON_DetachItemFromArray",
    "cJSON_Delete",
    "cJSON_InitHooks",
    "cJSON_Version",
    "not_in_the_api",
]


def harness(lib: str, name: str, header: str) -> str:
    target = fn(lib, name)
    arche = analyze_function(target, list(api(lib))).archetype
    return write_harness(target, list(api(lib)), [header], arche, default_skeleton(arche)).code


def test_adds_calls_on_the_object_the_harness_holds_best_first() -> None:
    code = harness("cjson", "cJSON_Parse", "cJSON.h")
    imp = improve_harness(code, fn("cjson", "cJSON_Parse"), list(api("cjson")), UNCOVERED_CJSON)
    # The draft already prints its result: another printer waits behind a copy, and a second
    # call of the copy/compare kind behind the other kinds.
    assert imp.directions == [
        "call cJSON_Duplicate on result (cJSON)",
        "call cJSON_PrintUnformatted on result (cJSON)",
        "call cJSON_Minify on the input",
        "call cJSON_Compare on result (cJSON)",
    ]
    assert imp.added_calls[:2] == ["cJSON_Duplicate", "cJSON_PrintUnformatted"]
    assert re.search(
        r"if \(result != NULL\) \{\s+char \*\w+ = NULL;\s+\w+ = "
        r"cJSON_PrintUnformatted\(result\);",
        imp.code,
    )


def test_never_frees_or_reinitializes_what_the_harness_owns() -> None:
    code = harness("cjson", "cJSON_Parse", "cJSON.h")
    imp = improve_harness(
        code,
        fn("cjson", "cJSON_Parse"),
        list(api("cjson")),
        ["cJSON_Delete", "cJSON_InitHooks", "cJSON_IsNumber"],
    )
    assert imp.added_calls == ["cJSON_IsNumber"]
    assert imp.code.count("cJSON_Delete(result)") == 1


def test_blocks_release_what_they_allocate_and_markers_stay() -> None:
    code = harness("cjson", "cJSON_Parse", "cJSON.h")
    imp = improve_harness(
        code, fn("cjson", "cJSON_Parse"), list(api("cjson")), ["cJSON_Duplicate", "cJSON_Minify"]
    )
    dup = re.search(r"(\w+) = cJSON_Duplicate\(result, \w+\);", imp.code)
    assert dup and f"if ({dup.group(1)} != NULL) cJSON_Delete({dup.group(1)});" in imp.code
    for slot in SLOTS:
        assert imp.code.count(marker(slot)) == 1
    use = imp.code.index(marker("USE"))
    assert use < imp.code.index("cJSON_Duplicate(") < imp.code.index(marker("CLEANUP"))


def test_avoid_is_a_tabu_list_until_nothing_else_remains() -> None:
    code = harness("cjson", "cJSON_Parse", "cJSON.h")
    target, full = fn("cjson", "cJSON_Parse"), list(api("cjson"))
    imp = improve_harness(code, target, full, ["cJSON_Duplicate", "cJSON_IsNull"], avoid=["cJSON_Duplicate"])
    assert imp.added_calls == ["cJSON_IsNull"]
    only = improve_harness(code, target, full, ["cJSON_Duplicate"], avoid=["cJSON_Duplicate"])
    assert only.added_calls == ["cJSON_Duplicate"]


def test_max_new_calls_and_repeated_rounds_add_new_functions() -> None:
    code = harness("cjson", "cJSON_Parse", "cJSON.h")
    target, full = fn("cjson", "cJSON_Parse"), list(api("cjson"))
    first = improve_harness(code, target, full, UNCOVERED_CJSON, max_new_calls=2)
    assert len(first.directions) == 2
    second = improve_harness(first.code, target, full, UNCOVERED_CJSON, max_new_calls=2)
    assert second.directions[0].split()[1] not in {d.split()[1] for d in first.directions}
    assert "lf_skip_" in second.code
    labels = re.findall(r"^\s*(lf_skip_\d+): ;", second.code, re.M)
    assert len(labels) == len(set(labels))


def test_stream_harness_gains_a_deflate_run_on_its_own_stream() -> None:
    code = harness("zlib", "inflate", "zlib.h")
    imp = improve_harness(
        code, fn("zlib", "inflate"), list(api("zlib")), ["deflate", "inflateMark"], max_new_calls=2
    )
    assert "run deflate over the input on a new z_stream" in imp.directions
    assert "call inflateMark on stream (z_stream)" in imp.directions
    assert re.search(r"deflateInit2_\(&stream\d+,", imp.code)
    assert re.search(r"if \(stream\d+_ready\) deflateEnd\(&stream\d+\);", imp.code)


def test_parser_harness_gains_an_emitter_pipe() -> None:
    code = harness("yaml", "yaml_parser_parse", "yaml.h")
    imp = improve_harness(code, fn("yaml", "yaml_parser_parse"), list(api("yaml")), ["yaml_emitter_emit"])
    assert imp.directions == ["feed yaml_emitter_emit with items parsed from the input"]
    assert "yaml_emitter_set_output_string(" in imp.code
    assert "yaml_emitter_delete(&emitter" in imp.code


def test_foreign_harness_without_markers_gets_blocks_after_the_target_call() -> None:
    code = """\
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cJSON.h"
int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  char *s = malloc(Size + 1);
  if (!s) return 0;
  memcpy(s, Data, Size);
  s[Size] = 0;
  cJSON *json = cJSON_Parse(s);
  cJSON_Delete(json);
  free(s);
  return 0;
}
"""
    imp = improve_harness(code, fn("cjson", "cJSON_Parse"), list(api("cjson")), ["cJSON_GetArraySize"])
    assert imp.directions == ["call cJSON_GetArraySize on json (cJSON)"]
    assert imp.code.index("cJSON_GetArraySize(json)") < imp.code.index("cJSON_Delete(json)")
    assert "const uint8_t *data = Data;" in imp.code


def test_nothing_applicable_returns_the_code_unchanged() -> None:
    code = harness("cjson", "cJSON_Parse", "cJSON.h")
    imp = improve_harness(
        code, fn("cjson", "cJSON_Parse"), list(api("cjson")), ["cJSON_Parse", "cJSON_Delete", "nope"]
    )
    assert imp.code == code and imp.directions == [] and imp.added_calls == []


def test_improver_is_deterministic() -> None:
    code = harness("yaml", "yaml_parser_parse", "yaml.h")
    args = (
        code,
        fn("yaml", "yaml_parser_parse"),
        list(api("yaml")),
        ["yaml_parser_scan", "yaml_parser_load", "yaml_emitter_dump"],
    )
    assert improve_harness(*args) == improve_harness(*args)


def test_avoid_accepts_recorded_directions() -> None:
    code = harness("cjson", "cJSON_Parse", "cJSON.h")
    imp = improve_harness(
        code,
        fn("cjson", "cJSON_Parse"),
        list(api("cjson")),
        ["cJSON_Duplicate", "cJSON_IsNull"],
        avoid=["call cJSON_Duplicate on result (cJSON)"],
    )
    assert imp.added_calls == ["cJSON_IsNull"]


def test_a_machines_main_processor_ranks_with_parsers_by_its_name_not_a_vocabulary() -> None:
    idx = ApiIndex(parse_prototypes("""\
typedef struct lib_stream_s lib_stream;
int lib_wumpInit(lib_stream *strm, int level);
int lib_wump(lib_stream *strm, int flush);
int lib_wumpReset(lib_stream *strm);
unsigned long lib_wumpBound(lib_stream *strm, unsigned long len);
int lib_wumpEnd(lib_stream *strm);
"""))
    ranks = {n: value(idx, idx.by_name[n]) for n in ("lib_wump", "lib_wumpReset", "lib_wumpBound")}
    assert ranks == {"lib_wump": 1, "lib_wumpReset": 2, "lib_wumpBound": 5}


def _added_by_improving_kv_parse(prototypes: str, uncovered: list[str]) -> list[str]:
    """The calls the improver adds to ``kv_parse``'s first draft, given these uncovered functions."""
    kv = parse_prototypes("kv_doc *kv_parse(const char *text);\nvoid kv_free(kv_doc *d);\n" + prototypes)
    target = next(d for d in kv if d.name == "kv_parse")
    arche = analyze_function(target, kv).archetype
    code = write_harness(target, kv, ["kv.h"], arche, default_skeleton(arche)).code
    return improve_harness(code, target, kv, uncovered).added_calls


def test_reserved_names_are_internals_never_added() -> None:
    added = _added_by_improving_kv_parse(
        "void __kv_parse_content(const char *text, int len);\nint _Kv_count(const char *text);\n"
        "int kv_count(const char *text);\n", ["__kv_parse_content", "_Kv_count", "kv_count"])
    assert added == ["kv_count"]


def test_allocator_wrappers_are_never_added() -> None:
    """``kv_mem_realloc(doc, ptr, n)`` takes the document and a buffer: a block that hands it a
    buffer of its own and frees that after (the call freed it) crashed every improvement."""
    added = _added_by_improving_kv_parse(
        "void *kv_mem_realloc(kv_doc *d, void *ptr, size_t size);\n"
        "void *kv_MemMalloc(kv_doc *d, size_t size);\nint kv_count(kv_doc *d);\nint kv_depth(kv_doc *d);\n",
        ["kv_mem_realloc", "kv_MemMalloc", "kv_depth"])
    assert added == ["kv_depth"]


KV_TYPES = """\
```c
typedef struct kv_doc kv_doc;
typedef kv_doc *kv_doc_p;  /* struct kv_doc * */
typedef kv_doc_p kv_hdoc_p;  /* struct kv_doc * */
struct kv_doc;
```
"""


def test_an_object_held_through_a_pointer_typedef_is_reused() -> None:
    """``kv_hdoc_p result`` holds a document: calls on documents use it (not a new one), also
    when the call's name shares no more with another maker's than with the target's."""
    from agents.offline.type_table import read_types, using

    with using(read_types(render_types(KV_TYPES))):
        kv = parse_prototypes(
            "kv_hdoc_p kv_hread_memory(const char *buf, int size);\nvoid kv_doc_free(kv_doc_p d);\n"
            "kv_doc_p kv_parse_text(const char *text);\nint kv_hdoc_dump(kv_hdoc_p d, char **out);\n"
        )
        target = kv[0]
        arche = analyze_function(target, kv).archetype
        code = write_harness(target, kv, ["kv.h"], arche, default_skeleton(arche)).code
        assert "kv_hdoc_p result" in code and "kv_doc_free(result)" in code
        imp = improve_harness(code, target, kv, ["kv_hdoc_dump"])
    assert imp.directions == ["call kv_hdoc_dump on result (kv_doc)"]


def test_a_block_needing_an_object_without_a_known_releaser_is_not_added() -> None:
    """free() on a node that owns strings leaks them (and may not be its releaser): optional
    follow-up code is dropped instead."""
    kv = parse_prototypes(
        "kv_doc *kv_read(const char *text);\nvoid kv_doc_free(kv_doc *d);\n"
        "kv_node *kv_new_ref(kv_doc *d, const char *name);\nint kv_is_id(kv_doc *d, kv_node *n);\n"
        "int kv_doc_count(kv_doc *d);\n"
    )
    target = kv[0]
    arche = analyze_function(target, kv).archetype
    code = write_harness(target, kv, ["kv.h"], arche, default_skeleton(arche)).code
    assert "kv_new_ref" not in code  # the first draft's follow-up calls follow the same rule
    imp = improve_harness(code, target, kv, ["kv_is_id"])
    assert imp.added_calls == [] and imp.code == code


GUARD_API = parse_prototypes("""
acme_code *acme_compile(const char *pattern, size_t len, int *err);
acme_match *acme_match_new(acme_code *code);
int acme_exec(const acme_code *code, const char *subject, size_t len, acme_match *md);
int acme_copy_named(acme_match *md, const char *name, char *out, size_t *outlen);
int acme_code_info(const acme_code *code, int what);
void acme_match_free(acme_match *md);
void acme_code_free(acme_code *code);
""")

GUARD_HARNESS = """#include <stdint.h>
#include <stddef.h>
#include "acme.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  acme_code *code = NULL;
  acme_match *md = NULL;
  int err = 0;
  int result = 0;
  code = acme_compile("a+", 2, &err);
  if (code == NULL) goto lf_cleanup;
  md = acme_match_new(code);
  if (md == NULL) goto lf_cleanup;
  /* @LF:CALL */
  result = acme_exec(code, (const char *)data, size, md);
  (void)result;
  /* @LF:USE */
  /* @LF:CLEANUP */
  lf_cleanup: ;
  if (md != NULL) acme_match_free(md);
  if (code != NULL) acme_code_free(code);
  return 0;
}
"""


def test_a_call_on_what_the_target_wrote_runs_only_when_the_target_succeeded() -> None:
    target = next(f for f in GUARD_API if f.name == "acme_exec")
    out = improve_harness(GUARD_HARNESS, target, GUARD_API, ["acme_copy_named", "acme_code_info"]).code
    copy = out[out.index("call acme_copy_named"):]
    info = out[out.index("call acme_code_info"):]
    # md went in through a non-const pointer: read it only after a successful match.
    assert re.search(r"if \(md != NULL && result >= 0\) \{", copy.split("\n")[1])
    # code was only read by the target: its block needs no such test.
    assert "result" not in info.split("\n")[1]


def test_calls_that_drive_what_was_built_rank_with_parsers_and_code_loaders_never_run() -> None:
    """``stmt_step(stmt)`` and ``regex_exec(re, ...)`` run what the target built; a function that
    loads code from a file (an extension, a plugin) would run whatever a fuzz-made path names."""
    lib = parse_prototypes(
        "int kv_step(kv_stmt *s);\nint kv_exec(kv_db *d, const char *sql);\n"
        "int kv_changes(kv_db *d);\nint kv_load_extension(kv_db *d, const char *file, const char *proc);\n"
        "int kv_prepare(kv_db *d, const char *sql, int n, kv_stmt **out);\nint kv_finalize(kv_stmt *s);\n"
        "kv_db *kv_new(void);\nvoid kv_close(kv_db *d);\n"
    )
    idx = ApiIndex(lib)
    by = {f.name: f for f in lib}
    assert value(idx, by["kv_step"]) == value(idx, by["kv_exec"]) == 1 < value(idx, by["kv_changes"])
    code = harness_for(lib, "kv_prepare")
    assert re.search(r"kv_step\(out_v\);", code)  # the first draft steps what kv_prepare made
    uncovered = ["kv_changes", "kv_load_extension", "kv_exec"]
    imp = improve_harness(code, by["kv_prepare"], lib, uncovered)
    assert "kv_load_extension" not in imp.added_calls
    assert imp.added_calls.index("kv_exec") < imp.added_calls.index("kv_changes")


def harness_for(lib: list, name: str) -> str:
    target = next(f for f in lib if f.name == name)
    arche = analyze_function(target, lib).archetype
    return write_harness(target, lib, ["kv.h"], arche, default_skeleton(arche)).code


def test_a_kind_of_call_the_harness_already_makes_on_an_object_waits_behind_the_others() -> None:
    """Four serializers of one document reach one serializer's code: one, then other kinds."""
    from agents.offline.cdecl import parse_prototypes

    header = """
    typedef struct ed_doc ed_doc;
    ed_doc *ed_parse(const char *buffer, int size);
    void ed_free(ed_doc *doc);
    char *ed_dump(ed_doc *doc);
    char *ed_dump_pretty(ed_doc *doc);
    char *ed_dump_ascii(ed_doc *doc);
    char *ed_serialize(ed_doc *doc);
    ed_doc *ed_copy(ed_doc *doc);
    int ed_validate_run(ed_doc *doc);
    """
    full = parse_prototypes(header)
    target = next(f for f in full if f.name == "ed_parse")
    arche = analyze_function(target, full).archetype
    code = write_harness(target, full, ["ed.h"], arche, default_skeleton(arche)).code
    pool = ["ed_dump", "ed_dump_pretty", "ed_dump_ascii", "ed_serialize", "ed_copy", "ed_validate_run"]
    imp = improve_harness(code, target, full, [n for n in pool if f"{n}(" not in code], max_new_calls=3)
    dumps = [c for c in imp.added_calls if c.startswith(("ed_dump", "ed_serialize"))]
    assert len(dumps) <= 1 and {"ed_copy", "ed_validate_run"} <= set(imp.added_calls), imp.added_calls
