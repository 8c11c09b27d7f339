"""A read just past the NUL of text the harness terminated is the library's overread.

Invented markup library: ``ml_load_string(top, const char *s, cb)`` takes a NUL-terminated string
with no length; the harness hands it ``lf_strndup(data, size)``, the input and one terminator.
Its character reader trusts a UTF-8 lead byte and reads the continuation bytes past the NUL: a
heap-buffer-overflow in a block the harness allocated, which was judged the harness's wrong size.
"""

from __future__ import annotations

from fuzzkit.triage import Triage, triage

REPORT = """\
==2==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6020000532b4 at pc 0x55 bp 0x7f sp 0x7f
READ of size 1 at 0x6020000532b4 thread T0
    #0 0x558340a0a96a in ml_string_getc /src/ml-3.3/ml-file.c:2433:13
    #1 0x558340a06836 in ml_load_data /src/ml-3.3/ml-file.c:2058:16
    #2 0x558340a09d5a in ml_load_string /src/ml-3.3/ml-file.c:180:11
    #3 0x558340a02bba in LLVMFuzzerTestOneInput /w/harness.c:94:12
    #4 0x55834092b363 in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) (/w/harness+0x59363)

0x6020000532b4 is located 0 bytes to the right of 4-byte region [0x6020000532b0,0x6020000532b4)
allocated by thread T0 here:
    #0 0x5583409c7c6e in malloc (/w/harness+0xf5c6e)
    #1 0x558340a02b0e in {helper} /w/harness.c:51:21
    #2 0x558340a02b0e in LLVMFuzzerTestOneInput /w/harness.c:91:10
    #3 0x55834092b363 in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) (/w/harness+0x59363)

SUMMARY: AddressSanitizer: heap-buffer-overflow /src/ml-3.3/ml-file.c:2433:13 in ml_string_getc
"""  # noqa: E501


def _triage(helper: str, region: str = "0 bytes to the right of 4-byte region") -> Triage:
    text = REPORT.replace("{helper}", helper).replace("0 bytes to the right of 4-byte region", region)
    return triage("heap-buffer-overflow", text.splitlines(), "harness.c", near_init=False)


def test_a_read_past_a_terminated_copy_is_the_librarys() -> None:
    found = _triage("lf_strndup")
    assert found.category == "library" and found.buffer_origin == "harness"
    assert found.misuse_hint == ""


def test_a_harness_buffer_of_its_own_size_is_still_the_harness_size_to_check() -> None:
    """Not a terminated copy (a buffer the harness sized itself), or not just past the end."""
    assert "allocated by the harness" in _triage("make_room").misuse_hint
    beyond = _triage("lf_strndup", "2 bytes to the right of 4-byte region")
    assert "allocated by the harness" in beyond.misuse_hint
