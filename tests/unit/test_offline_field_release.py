"""A buffer a call leaves in a field of a record passed by pointer is released (in the first
draft for the target, inside the block for a coverage block's call), unless the record has a
release function of its own. Invented names."""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """\
int dec_init_config(dec_config *config);
int dec_decode(const uint8_t *data, size_t data_size, dec_config *config);
uint8_t *dec_decode_rgb(const uint8_t *data, size_t data_size, int *width, int *height);
void dec_free(void *ptr);
void dec_free_buffer(dec_buffer *buffer);
"""

RAW_TYPES = """\
```c
typedef struct dec_buffer dec_buffer;
typedef struct dec_config dec_config;
struct dec_buffer { uint8_t *rgba; size_t size; int is_external; };
struct dec_config { int use_threads; dec_buffer output; };
```
Release functions:
- dec_free_buffer releases dec_buffer * (parameter type)
"""
TYPES = render_types(RAW_TYPES)


def _draft(api_text: str, types: str) -> str:
    with using(read_types(types)):
        api = parse_prototypes(api_text)
        target = next(d for d in api if d.name == "dec_decode")
        arche = analyze_function(target, api).archetype
        return write_harness(target, api, ["dec.h"], arche, default_skeleton(arche)).code


def test_the_decoders_output_field_is_released_in_the_first_draft() -> None:
    code = _draft(API, TYPES)
    released = re.search(r"dec_free_buffer\(&(\w+)\.output\);", code)
    assert released, code
    assert code.index("dec_decode(") < released.start()


def test_a_record_with_its_own_release_function_frees_its_fields_itself() -> None:
    code = _draft(API + "void dec_config_free(dec_config *config);\n",
                  render_types(RAW_TYPES + "- dec_config_free releases dec_config * (parameter type)\n"))
    assert "dec_config_free(" in code, code
    assert not re.search(r"dec_free_buffer\(&\w+\.output\)", code), code


def test_a_coverage_block_releases_what_its_call_leaves_in_its_own_record() -> None:
    with using(read_types(TYPES)):
        api = parse_prototypes(API)
        target = next(d for d in api if d.name == "dec_decode_rgb")
        arche = analyze_function(target, api).archetype
        code = write_harness(target, api, ["dec.h"], arche, default_skeleton(arche)).code
        assert "dec_decode(" not in code
        improved = improve_harness(code, target, api, ["dec_decode"]).code
    block = improved[improved.index("LF improve"):]
    call = block.index("dec_decode(")
    released = re.search(r"dec_free_buffer\(&(\w+)\.output\);", block)
    assert released, improved
    # inside the block (its record is a local of the block), after the call, on every path
    assert call < released.start() < block.index("\n  }")
    assert re.search(rf"memset\(&{released.group(1)}, 0,", block[:call]), improved
