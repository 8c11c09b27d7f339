"""An added call that fills a field of the harness's own record has that field released.

A harness holds ``acme_config config`` (zeroed at the top) for its target; an improvement block
calls ``acme_decode(data, size, &config)``, which leaves an output buffer in ``config.output``
that only ``acme_free_buffer`` frees. The block cannot release it (the record outlives it), so
the release goes before the harness returns; without it every input leaks (a crash round
judged misuse, and the block dropped). A record not zeroed where it is declared gets no such
release: on an early jump the field would be garbage.
"""

from __future__ import annotations

from agents.offline.improver import improve_harness
from agents.offline.type_table import read_types, using
from tests.unit.test_actionable_lessons import ACME as API
from tests.unit.test_actionable_lessons import ACME_TYPES as TYPES

HARNESS = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  acme_config config;
  memset(&config, 0, sizeof config);
  acme_idec *idec = NULL;
  int width = 0;
  if (acme_init_config(&config) != 0) goto lf_cleanup;
  idec = acme_idecode(data, size, &config);
  if (idec == NULL) goto lf_cleanup;
  /* @LF:CALL */
  acme_idec_area(idec, &width);
  /* @LF:USE */
  /* @LF:CLEANUP */
  lf_cleanup: ;
  if (idec != NULL) acme_idec_delete(idec);
  return 0;
}
"""


def _improved(code: str) -> str:
    target = next(f for f in API if f.name == "acme_idec_area")
    with using(read_types(TYPES)):
        made = improve_harness(code, target, API, ["acme_decode"])
    assert "acme_decode" in made.added_calls, made
    return made.code


def test_the_field_an_added_call_fills_is_released_before_returning() -> None:
    code = _improved(HARNESS)
    assert "acme_decode((const uint8_t *)data, (size_t)size, &config)" in code, code
    assert "acme_free_buffer(&config.output);\n  return 0;" in code, code
    assert code.count("acme_free_buffer(") == 1, code


def test_a_record_not_zeroed_where_it_is_declared_gets_no_release() -> None:
    code = _improved(HARNESS.replace("  memset(&config, 0, sizeof config);\n", ""))
    assert "acme_free_buffer" not in code, code
