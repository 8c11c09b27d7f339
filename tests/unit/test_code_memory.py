"""CodeMem entries for generated files, dependency edges, rendering and the read tools."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
import tiktoken

from agent_graph.memory.code_memory import (
    make_code_tools,
    read_code_mem,
    read_file,
    render_code_memory,
    summarize_c_file,
    update_code_memory,
)
from agent_graph.memory.tokens import count_text_tokens, set_encoding

API = {"cJSON_ParseWithOpts", "cJSON_PrintBuffered", "cJSON_PrintUnformatted", "cJSON_Minify",
       "cJSON_Duplicate", "cJSON_Compare", "cJSON_Delete", "cJSON_free", "cJSON_GetArraySize",
       "cJSON_Parse"}

HARNESS = r'''/* Fuzzes cJSON parsing with options, printing and duplication. Written by LogicFuzz.
 * The first input byte selects the options. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cJSON.h"
#include "fuzz_helpers.h"

#define MAX_INPUT 65536

struct opts { int require_null; int formatted; int prebuffer; };

static const struct opts DEFAULTS = { 0, 1, 64 };

static char *to_cstring(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text == NULL) return NULL;
  memcpy(text, data, size);
  text[size] = '\0';
  return text;
}

static struct opts read_opts(const uint8_t *data) {
  struct opts o = DEFAULTS;
  o.require_null = data[0] & 1;
  o.formatted = (data[0] >> 1) & 1;
  o.prebuffer = 1 + data[0] * 4;
  return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > MAX_INPUT) return 0;
  struct opts o = read_opts(data);
  char *text = to_cstring(data + 1, size - 1);
  if (!text) return 0;
  const char *end = NULL;
  /* cJSON_Fake(text) is not called: comments do not count */
  cJSON *json = cJSON_ParseWithOpts(text, &end, o.require_null);
  if (json != NULL) {
    char *printed = cJSON_PrintBuffered(json, o.prebuffer, o.formatted);
    if (printed) {
      cJSON_Minify(printed);
      cJSON_free(printed);
    }
    cJSON *copy = cJSON_Duplicate(json, 1);
    if (!cJSON_Compare(json, copy, 1)) {
      fuzz_log("copy differs: %s(%d)", "cJSON_Bogus(", cJSON_GetArraySize(json));
    }
    cJSON_Delete(copy);
    cJSON_Delete(json);
  }
  free(text);
  return 0;
}
'''

HELPERS_H = """#ifndef FUZZ_HELPERS_H
#define FUZZ_HELPERS_H
#include <stddef.h>
/* Logging for harnesses; silent unless FUZZ_VERBOSE is set. */
void fuzz_log(const char *fmt, ...);
static inline int fuzz_min(int a, int b) { return a < b ? a : b; }
typedef int (*fuzz_cb)(void *);
extern int fuzz_verbose;
#endif
"""

BUILD_SH = """#!/bin/sh
set -e
clang -g -fsanitize=fuzzer,address -I include harness.c fuzz_helpers.c libcjson.a -lm -o harness_fuzz
"""


@pytest.fixture(autouse=True)
def byte_tokens() -> Iterator[None]:
    set_encoding(tiktoken.Encoding(
        name="bytes_only", pat_str=r"[^\s]+|\s+",
        mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={},
    ))
    yield
    set_encoding(None)


def test_harness_entry() -> None:
    entry = summarize_c_file("harness.c", HARNESS, API)
    assert entry["path"] == "harness.c"
    assert entry["public_interface"] == ["int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)"]
    assert entry["helpers"] == ["static char *to_cstring(const uint8_t *data, size_t size)",
                                "static struct opts read_opts(const uint8_t *data)"]
    assert entry["dependency_edges"] == {
        "imports_from": ["stdint.h", "stdlib.h", "string.h", "cJSON.h", "fuzz_helpers.h"],
        "imported_by": []}
    assert entry["library_calls"] == ["cJSON_ParseWithOpts", "cJSON_PrintBuffered", "cJSON_Minify",
                                      "cJSON_free", "cJSON_Duplicate", "cJSON_Compare",
                                      "cJSON_GetArraySize", "cJSON_Delete"]
    assert entry["lines"] == HARNESS.count("\n")
    assert entry["core_purpose"] == (
        "Fuzzes cJSON parsing with options, printing and duplication. libFuzzer harness: calls "
        "cJSON_ParseWithOpts first, then 7 more library function(s); copies the input into a "
        "NUL-terminated buffer; derives options from leading input bytes")
    assert entry["sha"] == summarize_c_file("other.c", HARNESS)["sha"]
    assert entry["sha"] != summarize_c_file("harness.c", HARNESS + "\n")["sha"]
    assert json.loads(json.dumps(entry)) == entry  # plain data for the state


def test_without_an_api_list_calls_exclude_libc_and_local_helpers() -> None:
    entry = summarize_c_file("harness.c", HARNESS)
    assert entry["library_calls"] == ["cJSON_ParseWithOpts", "cJSON_PrintBuffered", "cJSON_Minify",
                                      "cJSON_free", "cJSON_Duplicate", "cJSON_Compare", "fuzz_log",
                                      "cJSON_GetArraySize", "cJSON_Delete"]


def test_header_and_script_entries() -> None:
    header = summarize_c_file("fuzz_helpers.h", HELPERS_H)
    assert header["public_interface"] == ["void fuzz_log(const char *fmt, ...)"]
    assert header["helpers"] == ["static inline int fuzz_min(int a, int b)"]
    assert header["core_purpose"] == ("Logging for harnesses; silent unless FUZZ_VERBOSE is set. "
                                      "C header declaring 1 function(s)")
    assert header["dependency_edges"]["imports_from"] == ["stddef.h"]
    memory = update_code_memory({}, "build.sh", BUILD_SH)
    script = memory["build.sh"]
    assert script["core_purpose"] == "build script running clang; produces harness_fuzz"
    assert script["dependency_edges"]["imports_from"] == ["harness.c", "fuzz_helpers.c", "libcjson.a",
                                                          "-lm"]


def test_update_recomputes_imported_by_and_is_pure() -> None:
    memory = update_code_memory({}, "harness.c", HARNESS, API)
    memory = update_code_memory(memory, "include/fuzz_helpers.h", HELPERS_H, API)
    memory = update_code_memory(memory, "build.sh", BUILD_SH, API)
    assert memory["include/fuzz_helpers.h"]["dependency_edges"]["imported_by"] == ["harness.c"]
    assert memory["harness.c"]["dependency_edges"]["imported_by"] == ["build.sh"]
    assert memory["build.sh"]["dependency_edges"]["imported_by"] == []
    before = copy.deepcopy(memory)
    without = HARNESS.replace('#include "fuzz_helpers.h"\n', "")
    after = update_code_memory(memory, "harness.c", without, API)
    assert memory == before
    assert after["include/fuzz_helpers.h"]["dependency_edges"]["imported_by"] == []
    assert after["harness.c"]["sha"] != memory["harness.c"]["sha"]


def files() -> dict[str, str]:
    return {"harness.c": HARNESS, "fuzz_helpers.h": HELPERS_H, "build.sh": BUILD_SH}


def full_memory() -> dict[str, Any]:
    memory: dict[str, Any] = {}
    for path, text in files().items():
        memory = update_code_memory(memory, path, text, API)
    return memory


def test_render_is_a_compact_section() -> None:
    text = render_code_memory(full_memory())
    assert text.startswith("## Code memory\n\n### build.sh (3 lines)\n")
    assert "### harness.c (54 lines)\nPurpose: Fuzzes cJSON parsing" in text
    assert "Interface: int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)" in text
    assert ("Depends: imports stdint.h, stdlib.h, string.h, cJSON.h, fuzz_helpers.h; "
            "imported by build.sh") in text
    assert "{" not in text
    assert render_code_memory({}) == "## Code memory\n\n(no files written yet)"
    harness_only = render_code_memory({"harness.c": full_memory()["harness.c"]})
    assert count_text_tokens(harness_only) < 0.5 * count_text_tokens(HARNESS)


def test_read_code_mem() -> None:
    memory = full_memory()
    answer = json.loads(read_code_mem(memory, ["harness.c", "missing.c", "src/fuzz_helpers.h"]))
    results = answer["results"]
    assert [(r["file_path"], r["status"]) for r in results] == [
        ("harness.c", "found"), ("missing.c", "no_summary"), ("fuzz_helpers.h", "found")]
    assert results[0]["summary_content"].startswith("### harness.c (54 lines)\nPurpose:")
    bare = json.loads(read_code_mem(memory, "harness.c"))["results"]
    assert [r["file_path"] for r in bare] == ["harness.c"]
    every = json.loads(read_code_mem(memory, None))["results"]
    assert [r["file_path"] for r in every] == ["build.sh", "fuzz_helpers.h", "harness.c"]


def test_read_file_redirects_to_the_entry() -> None:
    memory = full_memory()
    summary = json.loads(read_file(memory, "harness.c", files()))
    assert summary["status"] == "summary_found"
    assert summary["optimization"] == "redirected_to_read_code_mem"
    assert "cJSON_ParseWithOpts" in summary["summary_content"]
    full = json.loads(read_file(memory, "harness.c", files(), full=True))
    assert full == {"status": "full_content", "file_path": "harness.c", "content": HARNESS}
    no_entry = json.loads(read_file({}, "build.sh", files()))
    assert no_entry["status"] == "full_content" and no_entry["content"] == BUILD_SH
    missing = json.loads(read_file(memory, "nope.c", files()))
    assert missing["status"] == "not_found"
    assert missing["known_files"] == ["build.sh", "fuzz_helpers.h", "harness.c"]


def test_langchain_tools_answer_from_the_current_state() -> None:
    live: dict[str, Any] = {"memory": {}, "files": {}}
    tools = {t.name: t for t in make_code_tools(lambda: live["memory"], lambda: live["files"])}
    assert set(tools) == {"read_code_mem", "read_file"}
    assert json.loads(tools["read_code_mem"].invoke({"file_paths": ["harness.c"]}))["results"][0][
        "status"] == "no_summary"
    live["memory"], live["files"] = full_memory(), files()
    assert json.loads(tools["read_code_mem"].invoke({}))["results"][2]["file_path"] == "harness.c"
    assert json.loads(tools["read_file"].invoke({"file_path": "harness.c"}))["status"] == "summary_found"
    assert json.loads(tools["read_file"].invoke({"file_path": "harness.c", "full": True}))[
        "content"] == HARNESS
    schema = tools["read_file"].tool_call_schema.model_json_schema()
    assert set(schema["properties"]) == {"file_path", "full"}


def test_lexer_ignores_braces_in_literals_and_sees_through_extern_c() -> None:
    text = r'''#include "yaml.h"
#ifdef __cplusplus
extern "C" {
#endif
static const char *KEYS[] = { "{", "}", "a(b)" };
struct state { int (*cb)(int); };
int (*hook)(int) = 0;
int helper_count(void);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  const char *brace = "}{";
  char c = '}';
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return 0;
  yaml_parser_set_input_string(&parser, data, size);
  yaml_parser_delete(&parser);
  return helper_count() + (brace[0] == c);
}
#ifdef __cplusplus
}
#endif
'''
    entry = summarize_c_file("yaml_harness.c", text, {"yaml_parser_initialize",
                                                      "yaml_parser_set_input_string",
                                                      "yaml_parser_delete"})
    assert entry["public_interface"] == [
        "int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)"]
    assert entry["helpers"] == []
    assert entry["library_calls"] == ["yaml_parser_initialize", "yaml_parser_set_input_string",
                                      "yaml_parser_delete"]
    assert entry["core_purpose"] == ("libFuzzer harness: calls yaml_parser_initialize first, then 2 "
                                     "more library function(s)")
