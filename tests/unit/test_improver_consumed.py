"""An improvement never runs the target's processor again on the object the target fed.

``parse_chunk(ctx, data, n)`` leaves ``ctx`` past its input: ``parse_document(ctx)`` on that
same object parses a consumed (or pushed-and-terminated) context, which the library treats
as misuse (a timeout, an overflow, a leak). It gets an object of its own, made from the input.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness
from agents.offline.synth import default_skeleton, write_harness

HEADER = """
typedef struct acme_ctx acme_ctx;
typedef struct acme_code acme_code;
acme_ctx *acme_ctx_new(void);
acme_ctx *acme_ctx_from_memory(const char *buffer, int size);
void acme_ctx_free(acme_ctx *ctx);
int acme_parse_chunk(acme_ctx *ctx, const char *chunk, int size, int terminate);
int acme_parse_document(acme_ctx *ctx);
int acme_ctx_depth(acme_ctx *ctx);
acme_code *acme_compile(const char *pattern, int size);
void acme_code_free(acme_code *code);
int acme_parse_with(const acme_code *code, const char *subject, int size);
int acme_parse_selftest(const acme_code *code);
"""


def _improve(target_name: str, uncovered: list[str]) -> list[str]:
    api = parse_prototypes(HEADER)
    target = next(f for f in api if f.name == target_name)
    arche = analyze_function(target, api).archetype
    code = write_harness(target, api, ["acme.h"], arche, default_skeleton(arche)).code
    return improve_harness(code, target, api, uncovered).directions


def test_the_processor_the_target_ran_gets_a_new_object() -> None:
    directions = _improve("acme_parse_chunk", ["acme_parse_document", "acme_ctx_depth"])
    document = next(d for d in directions if "acme_parse_document" in d)
    assert "on a new" in document, directions


def test_other_calls_still_use_the_fed_object() -> None:
    directions = _improve("acme_parse_chunk", ["acme_ctx_depth"])
    assert directions and "on a new" not in directions[0], directions


def test_an_object_the_target_only_reads_stays_shared() -> None:
    # acme_parse_with takes its code as const: parsing with it does not consume it.
    directions = _improve("acme_parse_with", ["acme_parse_selftest"])
    assert directions and "on a new" not in directions[0], directions
