"""A stream the library's own code opened itself becomes one writing nowhere in the replay.

An invented URI library's test parses a string, then prints the result to a report file it opened
with ``fopen`` (not the library's call, so the usage keeps only the variable). Replayed with that
variable zeroed, every input crashed inside the C library's ``fputs`` and the target never ran;
now the stream is ``/dev/null``, closed at the end, and the replay keeps the print.
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from agents.offline.type_table import read_types, using
from agents.offline.usage import usage_draft
from fuzzkit.usage_models import Arg, CallSite, UsageFunction, UsageIndex
from fuzzkit.usage_protocols import target_usage
from tests.types_text import render_types

API = """
typedef struct uq_uri uq_uri;
uq_uri *uq_create(void);
int uq_parse(uq_uri *uri, const char *str);
void uq_print(FILE *stream, uq_uri *uri);
void uq_free(uq_uri *uri);
"""
TYPES = ("```c\ntypedef struct uq_uri uq_uri;\n```\nRelease functions:\n"
         "- uq_free releases uq_uri * (parameter type)\n")


def _usage(closes: bool) -> UsageIndex:
    uri = Arg(text="uri", kind="object", var="uri")
    out = Arg(text="o", kind="variable", var="o")
    calls = [CallSite(function="uq_create", result="uri", result_var="uri", line=3),
             CallSite(function="uq_parse", args=[uri, Arg(text="str", kind="data", var="str")], line=4),
             CallSite(function="uq_print", args=[out, uri], line=5),
             CallSite(function="uq_free", args=[uri], line=6)]
    calls += [CallSite(function="fclose", args=[out], line=7)] if closes else []
    return UsageIndex(functions=[UsageFunction(
        file="tests/t.c", name="handle", origin="test", calls=calls,
        variables={"uri": "uq_uri *", "o": "FILE *", "str": "const char *"})])


def _replay(closes: bool) -> str:
    decls = parse_prototypes(API)
    facts = target_usage(_usage(closes), decls[1], decls, {}, {}).facts
    with using(read_types(render_types(TYPES))):
        replayed = usage_draft(facts, decls[1], decls, ["uq.h"])
    assert replayed is not None
    return replayed[0]


def test_an_unmade_stream_writes_to_dev_null_and_is_closed() -> None:
    code = _replay(closes=False)
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    assert 'FILE *o = fopen("/dev/null", "w+");' in body and "FILE *o = 0;" not in body
    closed = body.index("if (o != NULL) fclose(o);")
    assert body.index("uq_parse(uri") < body.index("uq_print(o, uri);") < closed


def test_a_stream_the_usage_closes_is_closed_once() -> None:
    code = _replay(closes=True)
    assert code.count("fclose(o)") == 1, code
