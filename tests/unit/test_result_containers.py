"""A result container (match data) is filled by a search before a reader walks it, and a reader
is never called on one nothing filled. Invented regex-like API."""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_fill import fillers
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct rx_code rx_code;
typedef struct rx_match_data rx_match_data;
typedef struct rx_context rx_context;
rx_code *rx_compile(const unsigned char *pattern, size_t length, uint32_t options, int *errorcode,
                    size_t *erroroffset);
void rx_code_free(rx_code *code);
rx_context *rx_context_create(void);
void rx_context_free(rx_context *ctx);
rx_match_data *rx_match_data_create(uint32_t ovecsize);
rx_match_data *rx_match_data_create_from_pattern(const rx_code *code);
void rx_match_data_free(rx_match_data *match_data);
int rx_match(const rx_code *code, const unsigned char *subject, size_t length, size_t startoffset,
             uint32_t options, rx_match_data *match_data, rx_context *ctx);
int rx_substring_length_byname(rx_match_data *match_data, const unsigned char *name, size_t *length);
uint32_t rx_get_ovector_count(rx_match_data *match_data);
int rx_jit_match(const rx_code *code, const unsigned char *subject, size_t length, size_t startoffset,
                 uint32_t options, rx_match_data *match_data, rx_context *ctx);
int rx_substitute(const rx_code *code, const unsigned char *subject, size_t length, rx_match_data *match_data,
                  unsigned char *out, size_t *outlen);
rx_code *rx_search_group(rx_code *code, rx_match_data *match_data, const unsigned char *name);
int rx_exec_into(rx_code *code, rx_match_data *match_data, const unsigned char *subject);
"""
TYPES = render_types("""```c
typedef struct rx_code rx_code;
typedef struct rx_match_data rx_match_data;
typedef struct rx_context rx_context;
```
Release functions:
- rx_code_free releases rx_code * (parameter type)
- rx_context_free releases rx_context * (parameter type)
- rx_match_data_free releases rx_match_data * (parameter type)
""")


def _draft(name: str, uncovered: list[str] | None = None) -> str:
    with using(read_types(TYPES)):
        api = parse_prototypes(API)
        target = next(d for d in api if d.name == name)
        arche = analyze_function(target, api).archetype
        code = write_harness(target, api, ["rx.h"], arche, default_skeleton(arche)).code
        if uncovered:
            code = improve_harness(code, target, api, uncovered).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_the_container_is_recognised_by_the_search_that_fills_it() -> None:
    with using(read_types(TYPES)):
        idx = ApiIndex(parse_prototypes(API))
        # the plain search first: a JIT-only variant fails on code compiled without it
        assert [f.name for f in fillers(idx, "rx_match_data")] == ["rx_match", "rx_jit_match"]
        assert fillers(idx, "rx_context") == []  # a context passed along is no container
        assert fillers(idx, "rx_code") == []  # const: read, not filled
        # a lookup that returns what it found, and an object before the input, fill nothing
        assert "rx_search_group" not in [f.name for f in fillers(idx, "rx_match_data")]
        assert "rx_exec_into" not in [f.name for f in fillers(idx, "rx_match_data")]


def test_a_reader_gets_a_container_a_search_filled() -> None:
    code = _draft("rx_substring_length_byname")
    match = re.search(r"rx_match\(\w+, [^;]*, (\w+), \w+\);", code)
    assert match, code
    read = re.search(rf"rx_substring_length_byname\({match.group(1)}, \(const unsigned char \*\)data", code)
    assert read and match.start() < read.start(), code
    # only after a successful search: one stopped by a bad option records nothing
    rc = re.search(r"(\w+) = rx_match\(", code)
    assert rc and re.search(rf"if \(!\({rc.group(1)} [^)]*\)\) goto", code[rc.end():read.start()]), code


def test_the_search_itself_fills_its_container() -> None:
    code = _draft("rx_match")
    assert code.count("rx_match(") == 1, code


def test_no_reader_walks_a_container_nothing_filled() -> None:
    code = _draft("rx_match_data_create_from_pattern", ["rx_substring_length_byname"])
    result = re.search(r"(\w+) = rx_match_data_create_from_pattern\(", code)
    assert result, code
    assert not re.search(rf"rx_substring_length_byname\({result.group(1)}\b", code), code
    block = code[code.index("LF improve"):]
    assert block.index("rx_match(") < block.index("rx_substring_length_byname("), code


def test_a_function_that_takes_the_container_further_on_gets_it_empty() -> None:
    code = _draft("rx_substitute")  # it matches on its own
    assert "rx_match(" not in code and "rx_jit_match(" not in code, code
