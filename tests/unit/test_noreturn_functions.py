"""A function declared never to return is called by no harness and chosen as no target.

An invented library reports errors through ``nr_error(ctx, msg)``, declared
``__attribute__((noreturn))`` behind a macro (it longjmps to the library's handler), and
``_Noreturn void nr_abort(void)``. The header facts say so in the notes block (data); the offline
engine reads it back and neither the improver nor the related functions offer them; the rest of
the API stays as it was.
"""

from __future__ import annotations

from pathlib import Path

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts_collect import collect_facts

HEADER = """\
#include <stddef.h>
#define NR_NORETURN __attribute__((__noreturn__))
typedef struct nr_ctx nr_ctx;
nr_ctx *nr_open(const char *data, size_t size);
void nr_close(nr_ctx *ctx);
int nr_parse(nr_ctx *ctx);
NR_NORETURN void nr_error(nr_ctx *ctx, const char *message);
_Noreturn void nr_abort(void);
int nr_count(nr_ctx *ctx);
"""
PROTOS = [line for line in HEADER.splitlines()
          if line.startswith(("nr_", "void", "int", "NR_NORETURN", "_Noreturn"))]
HARNESS = """\
#include "nr.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nr_ctx *ctx = NULL;
  int rc = 0;
  ctx = nr_open((const char *)data, size);
  if (ctx == NULL) return 0;
  rc = nr_parse(ctx);
  (void)rc;
  /* @LF:USE */
  /* @LF:CLEANUP */
  nr_close(ctx);
  return 0;
}
"""


def _types(tmp_path: Path) -> tuple[list, str]:
    header = tmp_path / "nr.h"
    header.write_text(HEADER)
    api = parse_prototypes("\n".join(p.replace("NR_NORETURN ", "").replace("_Noreturn ", "") for p in PROTOS))
    facts = collect_facts([header], [tmp_path], api=api)
    assert facts.noreturn == ["nr_abort", "nr_error"]
    return api, "\n".join(facts.render().splitlines()[1:])


def test_never_returning_functions_are_noted_as_data_and_never_offered(tmp_path: Path) -> None:
    api, types = _types(tmp_path)
    assert "noreturn:" in types and "# facts: notes v1" in types
    target = next(d for d in api if d.name == "nr_parse")
    with using(read_types(types, api)):
        related = analyze_function(target, api).related
        added = improve_harness(HARNESS, target, api, ["nr_error", "nr_abort", "nr_count"]).added_calls
    assert "nr_error" not in related and "nr_abort" not in related
    assert added == ["nr_count"], added
    # Without the facts, the error function is offered like any other.
    assert "nr_error" in improve_harness(HARNESS, target, api, ["nr_error", "nr_count"]).added_calls
