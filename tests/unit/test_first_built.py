"""A constructor that cannot be built gives way to the next, on the planner as it was (invented API).

``acme_source_buffer(acme_t *, data, len, freep)`` needs an ``acme_t``, which is opened from a
source: an archive library's three targets on its sources failed with "cannot build (nested too
deep)" although ``acme_source_buffer_create(data, len, freep, &error)`` needs no ``acme_t``.
"""

from __future__ import annotations

import re

from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness

API = """
typedef struct acme acme_t;
typedef struct acme_source acme_source_t;
typedef struct acme_error acme_error_t;
acme_source_t *acme_source_buffer(acme_t *za, const void *data, size_t len, int freep);
acme_source_t *acme_source_buffer_create(const void *data, size_t len, int freep, acme_error_t *error);
acme_t *acme_open_from_source(acme_source_t *src, int flags, acme_error_t *error);
void acme_source_free(acme_source_t *src);
int acme_close(acme_t *za);
long acme_source_seek_write(acme_source_t *src, long offset, int whence);
"""


def test_a_constructor_that_nests_too_deep_gives_way_to_one_that_builds() -> None:
    decls = parse_prototypes(API)
    target = next(f for f in decls if f.name == "acme_source_seek_write")
    skeleton = default_skeleton("object_lifecycle")
    code = write_harness(target, decls, ["acme.h"], "object_lifecycle", skeleton).code
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    assert "acme_source_buffer_create((const void *)data" in body
    assert body.count("{") == body.count("}")
    # what the failed tries planned left nothing behind: every variable declared is used
    for var in re.findall(r"(\w+) = (?:NULL|0);\n", body):
        assert len(re.findall(rf"\b{var}\b", body)) > 1, var
