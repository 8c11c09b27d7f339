"""A library that frees the fuzz input it was handed (an invented API, an archive library's report).

``acme_source_t *acme_source_buffer_create(const void *, uint64_t, int, acme_error_t *)``: its
header names no parameters; a nonzero third argument hands the buffer over, and the library
frees it when the source is released. The harness drew that number from option bytes, so the
library freed libFuzzer's own copy of the input, and libFuzzer read it back (a use-after-free
outside every project frame). That is the harness giving away what it does not own: judged
misuse, and the drawn number beside the input becomes 0.
"""

from __future__ import annotations

from agents.offline.fixer_free import keep_input_owned
from fuzzkit.triage import INPUT_GIVEN_AWAY, triage

REPORT = """\
==2==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000005e50 at pc 0x55 bp 0x7f sp 0x7f
READ of size 3 at 0x602000005e50 thread T0
    #0 0x55bcbffcf325 in MemcmpInterceptorCommon(void*, int (*)(void const*, void const*, unsigned long), void const*, void const*, unsigned long) (/w/harness+0x7f325)
    #1 0x55bcbffcf819 in __interceptor_memcmp (/w/harness+0x7f819)
    #2 0x55bcbff9b3ea in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) (/w/harness+0x4b3ea)
    #3 0x55bcbff9aa29 in fuzzer::Fuzzer::RunOne(unsigned char const*, unsigned long, bool, fuzzer::InputInfo*, bool, bool*) (/w/harness+0x4aa29)

0x602000005e50 is located 0 bytes inside of 3-byte region [0x602000005e50,0x602000005e53)
freed by thread T0 here:
    #0 0x55bcc0037962 in free (/w/harness+0xe7962)
    #1 0x55bcc00744d3 in buffer_free /src/acme-1.0/lib/acme_source_buffer.c:415:2
    #2 0x55bcc0076750 in acme_source_free /src/acme-1.0/lib/acme_source_free.c:64:11
    #3 0x55bcc0072b36 in LLVMFuzzerTestOneInput /w/harness.c:87:23
    #4 0x55bcbff9b303 in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) (/w/harness+0x4b303)

previously allocated by thread T0 here:
    #0 0x55bcc0037c0e in malloc (/w/harness+0xe7c0e)
    #1 0x7f8af0ca958b in operator new(unsigned long) (/lib/x86_64-linux-gnu/libstdc++.so.6+0xa958b)
    #2 0x55bcbff9aa29 in fuzzer::Fuzzer::RunOne(unsigned char const*, unsigned long, bool, fuzzer::InputInfo*, bool, bool*) (/w/harness+0x4aa29)
    #3 0x55bcbff9c189 in fuzzer::Fuzzer::MutateAndTestOne() (/w/harness+0x4c189)

SUMMARY: AddressSanitizer: heap-use-after-free (/w/harness+0x7f325)
"""  # noqa: E501

HARNESS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int arg2 = 0;
  int arg1 = 0;
  acme_error_t error;
  acme_source_t *result = NULL;
  lf_input_t lf_in = {data, size};
  arg2 = (int)lf_take_int(&lf_in, 0, 255);
  arg1 = (int)lf_take_pick(&lf_in, lf_set_v, sizeof lf_set_v / sizeof lf_set_v[0]);
  size = lf_in.size;
  acme_error_init_with_code(&error, arg1);
  result = acme_source_buffer_create((const void *)data, (uint64_t)size, arg2, &error);
  if (result != NULL) acme_source_free(result);
  return 0;
}
"""


def test_a_freed_input_buffer_is_the_harness_giving_it_away() -> None:
    found = triage("heap-use-after-free", REPORT.splitlines(), "harness.c", near_init=False)
    assert found.buffer_origin == "fuzzer-input"
    assert found.misuse_hint.startswith(INPUT_GIVEN_AWAY)


def test_the_drawn_number_beside_the_input_becomes_zero() -> None:
    hint = triage("heap-use-after-free", REPORT.splitlines(), "harness.c", near_init=False).misuse_hint
    fixed, how = keep_input_owned(HARNESS, f"kind: heap-use-after-free\nmisuse hint: {hint}\n")
    assert how is not None and "arg2" in how
    assert "arg2 = 0; /* the harness keeps its input */" in fixed
    assert "arg1 = (int)lf_take_pick(" in fixed  # not passed beside the input: still drawn
    assert keep_input_owned(HARNESS, "kind: heap-use-after-free\n") == (HARNESS, None)
