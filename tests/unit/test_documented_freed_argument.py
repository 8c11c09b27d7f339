"""A call documented to free its first argument, handing back one of its type, replaces it.

``acme_bin *acme_body_build(acme_bin *body, size_t len, const uint8_t *data)`` (an invented
API) is documented "@return The body so far or NULL on error. If NULL, @p body will have been
de-allocated.": the name makes (``build``), so it is no realloc-like call by its shape, and a
harness releasing both ``body`` and the result freed the body twice on every input.
"""

from __future__ import annotations

import re
from pathlib import Path

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts_collect import collect_facts

HEADER = """\
#include <stddef.h>
#include <stdint.h>
typedef struct acme_bin { size_t length; uint8_t *s; } acme_bin;
acme_bin *acme_new_binary(size_t size);
void acme_delete_binary(acme_bin *b);
/**
 * Re-assemble payloads into a body.
 *
 * @param body The body so far, or NULL the first time.
 * @param len  The length of @p data.
 * @param data The payload.
 *
 * @return The body so far or NULL on error. If NULL, @p body will have been de-allocated.
 */
acme_bin *acme_body_build(acme_bin *body, size_t len, const uint8_t *data);
/**
 * Length of @p b. The returned count is freed by nobody.
 * @param b The body.
 */
size_t acme_body_length(acme_bin *b);
"""


def _facts(tmp_path: Path) -> tuple[list, str]:
    header = tmp_path / "acme.h"
    header.write_text(HEADER)
    protos = [line for line in HEADER.splitlines() if line.startswith(("acme", "void", "size_t"))]
    api = parse_prototypes("\n".join(protos))
    facts = collect_facts([header], [tmp_path], api=api)
    return api, "\n".join(facts.render().splitlines()[1:])


def test_the_documentation_names_the_argument_the_call_frees(tmp_path: Path) -> None:
    _, types = _facts(tmp_path)
    assert read_types(types).consumes == {"acme_body_build"}  # not acme_body_length


def test_the_harness_releases_only_the_result(tmp_path: Path) -> None:
    api, types = _facts(tmp_path)
    target = next(d for d in api if d.name == "acme_body_build")
    with using(read_types(types)):
        arche = analyze_function(target, api).archetype
        code = write_harness(target, api, ["acme.h"], arche, default_skeleton(arche)).code
    call = re.search(r"(\w+) = acme_body_build\((\w+), ", code)
    assert call, code
    result, arg = call.groups()
    body = code[call.end():]
    assert re.search(rf"^\s*{arg} = NULL;", body, re.M), code  # given up whatever the call returned
    assert f"if ({result} != NULL) {arg} = NULL;" not in body
    assert f"acme_delete_binary({result});" in body
