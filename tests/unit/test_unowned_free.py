"""A release of memory the harness does not own comes out, through the offline fixer's prompt.

Invented API: ``sx_select(unsigned char **out, unsigned char *outlen, const unsigned char *in,
unsigned int inlen)`` points ``*out`` into ``in``. The first draft frees ``*out`` (no releaser is
documented), which ASan reports as a ``bad-free`` in the harness's cleanup. The repair removes
that release and nothing else; a bad free of the harness's own buffer is not touched.
"""

from __future__ import annotations

from agents.offline.fixer_free import drop_unowned_free

HARNESS = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned char *out_v = NULL;
  uint8_t *out_buf = NULL;
  int rc = 0;
  out_buf = (uint8_t *)malloc(64);
  if (out_buf == NULL) goto lf_cleanup;
  rc = sx_select(&out_v, (unsigned char *)out_buf, (const unsigned char *)data, (unsigned int)size);
  (void)rc;
  lf_cleanup: ;
  free(out_buf);
  if (out_v != NULL) free(out_v);
  return 0;
}
"""


def _triage(line: int) -> str:
    return ("kind: bad-free\nsummary: SUMMARY: AddressSanitizer: bad-free in free\n"
            f"stack:\n#0 free ?:?\n#1 LLVMFuzzerTestOneInput /run/v1/harness.c:{line}\n")


def test_the_release_of_what_a_call_pointed_into_the_input_comes_out() -> None:
    code, how = drop_unowned_free(HARNESS, _triage(11))
    assert how and "out_v" in how
    assert "free(out_v)" not in code and "free(out_buf);" in code
    assert code.count("\n") == HARNESS.count("\n") - 1


def test_the_harness_own_buffer_and_other_crashes_are_left_alone() -> None:
    assert drop_unowned_free(HARNESS, _triage(10)) == (HARNESS, None)  # malloc'd by the harness
    assert drop_unowned_free(HARNESS, _triage(11).replace("bad-free", "double-free")) == (HARNESS, None)
    assert drop_unowned_free(HARNESS, _triage(99)) == (HARNESS, None)
