"""A struct the target sets up, whose type has a releaser but no initializer or constructor by
name (``re_compile(re_t *preg, ...)`` / ``re_free(re_t *)``), is released after the target
succeeded; before, every compiled pattern leaked. Invented API."""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

TYPES = render_types("""```c
typedef struct { int re_magic; size_t re_nsub; void *re_code; } re_t;
```
Release functions:
- re_free releases re_t * (parameter type)
""")
API = """int re_compile(re_t *preg, const char *pattern, int cflags);
void re_free(re_t *preg);
"""


def _draft(api_text: str, types: str) -> str:
    with using(read_types(types)):
        api = parse_prototypes(api_text)
        arche = analyze_function(api[0], api).archetype
        code = write_harness(api[0], api, ["re.h"], arche, default_skeleton(arche)).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_the_struct_the_target_set_up_is_released_when_it_succeeded() -> None:
    code = _draft(API, TYPES)
    call = re.search(r"(\w+) = re_compile\(&(\w+),", code)
    assert call, code
    result, var = call.groups()
    flag = re.search(rf"if \(({result} [^)]*)\) ({var}_ready) = 1;", code)
    assert flag and code.index(call.group(0)) < flag.start(), code
    assert re.search(rf"if \({flag.group(2)}\) re_free\(&{var}\);", code), code


def test_without_a_releaser_nothing_is_released() -> None:
    code = _draft(API.replace("void re_free(re_t *preg);\n", ""), TYPES.split("Release")[0])
    assert "_ready" not in code and "re_free" not in code, code


def test_free_is_no_releaser_of_a_struct_on_the_stack() -> None:
    types = TYPES.split("Release")[0] + "Release functions:\n- free releases re_t * (by documentation)\n"
    code = _draft(API.replace("void re_free(re_t *preg);\n", ""), types)
    assert "free(&" not in code, code
