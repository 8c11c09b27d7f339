"""A crash while libFuzzer loads a corpus of real files is one file's, not a setup error.

Before ``INITED`` libFuzzer either runs the empty input (a crash there fails on every input: the
harness's setup) or runs the files of a corpus it was given (the library's own sample files).
A SEGV deep in an image decoder on one sample file is input-dependent: it is not "near
initialization", so the verdict does not call it harness misuse for that reason (a real bug of
an image reader was dismissed so: found from a sample file, judged a setup error).
"""

from __future__ import annotations

from fuzzkit.crash import parse_sanitizer_report

HEAD = """\
INFO: Running with entropic power schedule (0xFF, 100).
INFO: Seed: 4252095171
INFO: Loaded 1 modules   (11873 inline 8-bit counters): 11873 [0x1, 0x2),
"""
CORPUS = "INFO:       90 files found in /seeds\nINFO: seed corpus: files: 90 min: 131b max: 47749b\n"
EMPTY = "INFO: A corpus is not provided, starting from an empty corpus\n"
REPORT = """\
AddressSanitizer:DEADLYSIGNAL
=================================================================
==2==ERROR: AddressSanitizer: SEGV on unknown address 0x602400000d44 (pc 0x1 bp 0x2 sp 0x3 T0)
==2==The signal is caused by a WRITE memory access.
    #0 0x1 in put_tile /src/img/get_image.c:1540:19
    #1 0x2 in get_strip /src/img/get_image.c:1126:9
    #2 0x3 in img_read_rgba /src/img/get_image.c:621:14
    #3 0x4 in LLVMFuzzerTestOneInput /src/fuzz/harness.c:112:12
SUMMARY: AddressSanitizer: SEGV /src/img/get_image.c:1540:19 in put_tile
"""


def test_a_crash_on_a_corpus_file_is_not_near_initialization() -> None:
    on_file = parse_sanitizer_report(HEAD + CORPUS + REPORT, "harness.c")
    assert on_file is not None and not on_file.near_init
    assert "before fuzzing proper" not in on_file.misuse_hint


def test_a_crash_on_the_first_input_of_an_empty_corpus_is() -> None:
    first = parse_sanitizer_report(HEAD + EMPTY + REPORT, "harness.c")
    assert first is not None and first.near_init
    assert "before fuzzing proper" in first.misuse_hint
