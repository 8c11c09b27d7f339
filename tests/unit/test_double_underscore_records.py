"""A library whose names hold a double underscore (``AB__Entry``) still has its records read.

Only a name that starts with two underscores is reserved (the C library's own); an API that
spells its types ``PREFIX__Name`` had none of its records in the header facts, so nothing saw the
fields of a record the harness passes by address (a leak repair freeing the bytes left there,
field ranges, the record's own release).
"""

from __future__ import annotations

from pathlib import Path

from agents.offline.cdecl import parse_prototypes
from fuzzkit.header_facts_collect import collect_facts

HEADER = """\
#include <stdint.h>
typedef uint8_t AB__byte;
typedef struct { uint32_t length; AB__byte *entry; } AB__Entry;
struct __ab_private { int x; };
int AB__entry_from_pair(AB__Entry *entry, const char *name, struct __ab_private *p);
"""


def test_records_named_with_a_double_underscore_are_read(tmp_path: Path) -> None:
    (tmp_path / "ab.h").write_text(HEADER)
    api = parse_prototypes(HEADER.splitlines()[-1])
    facts = collect_facts([tmp_path / "ab.h"], [tmp_path], api=api)
    records = {r.names[0] if r.names else r.tag: r for r in facts.records}
    assert "AB__Entry" in records, [r.names for r in facts.records]
    assert records["AB__Entry"].fields == (("length", "uint32_t"), ("entry", "AB__byte *"))
    assert "__ab_private" not in records  # a reserved name stays out
