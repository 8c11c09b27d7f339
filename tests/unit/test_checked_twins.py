"""A function with a checked twin (``zz_unpack`` beside ``zz_unpack_safe``) is for trusted input.

An invented codec API shaped like compression libraries that ship a fast, unchecked decoder and
a checked one: the improver added the unchecked decoder on the fuzz input to a harness of the
checked one, and its overrun (the one its header warns of) ended the run as a crash. Neither the
improver nor the related-call list offers it now; with no twin it is offered as before.
"""

from __future__ import annotations

from agents.offline.improver import improve_harness
from fuzzkit.api import FunctionDecl, Param


def _codec(name: str) -> FunctionDecl:
    return FunctionDecl(name, "int", (Param("src", "const unsigned char *"), Param("src_len", "size_t"),
                                      Param("dst", "unsigned char *"), Param("dst_len", "size_t *")))


SAFE, FAST, OTHER = _codec("zz_unpack_safe"), _codec("zz_unpack"), _codec("zz_unpack2")

HARNESS = """#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include "zz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:SETUP */
  unsigned char *out = NULL;
  size_t out_len = 4096;
  int rc = 0;
  out = (unsigned char *)malloc(out_len);
  if (out == NULL) goto lf_cleanup;
  /* @LF:CALL */
  rc = zz_unpack_safe(data, size, out, &out_len);
  (void)rc;
  /* @LF:USE */
  /* @LF:CLEANUP */
  lf_cleanup: ;
  free(out);
  return 0;
}
"""


def test_the_improver_leaves_an_unchecked_twin_alone() -> None:
    made = improve_harness(HARNESS, SAFE, [SAFE, FAST, OTHER], ["zz_unpack", "zz_unpack2"])
    assert "zz_unpack2" in made.added_calls, made.added_calls
    assert "zz_unpack" not in made.added_calls, made.added_calls
    alone = improve_harness(HARNESS, SAFE, [SAFE, _codec("zz_unpack_fast")], ["zz_unpack_fast"])
    assert alone.added_calls == ["zz_unpack_fast"], alone.added_calls  # no `_safe` twin of its own
