"""libFuzzer's input is const: a parameter the function may write into gets a writable copy.

An improvement passed `(unsigned char *)data` as a key writer's output buffer; the library
wrote there, libFuzzer stopped with "fuzz target overwrites its const input", and the crash
was judged a library bug. Invented API; no library is named.
"""

from __future__ import annotations

import re

from fuzzkit.triage import triage
from tests.unit.test_offline_new_library import harness

API = """\
int qk_scramble(unsigned char *buf, size_t n);
int qk_checksum(const unsigned char *buf, size_t n);
"""

OVERWRITE = """\
==2== ERROR: libFuzzer: fuzz target overwrites its const input
    #0 0x55b614576d31 in __sanitizer_print_stack_trace (/out/harness+0x12cd31)
    #1 0x55b6144e9688 in fuzzer::PrintStackTrace() (/out/harness+0x9f688)
    #2 0x55b6144d0465 in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) (/out/h+0x8)
"""


def _call(code: str, name: str) -> str:
    found = re.search(rf"\b{name}\(([^;]*)\);", code)
    assert found, code
    return found.group(1)


def test_a_buffer_the_function_may_write_gets_a_copy_of_the_input() -> None:
    args = _call(harness(API, "qk_scramble"), "qk_scramble")
    assert not re.search(r"\bdata\b", args), args
    assert "size" in args


def test_a_const_buffer_still_gets_the_input_itself() -> None:
    code = harness(API, "qk_checksum")
    assert _call(code, "qk_checksum").startswith("(const unsigned char *)") and "lf_strndup" not in code


def test_overwriting_the_const_input_is_the_harness_s_doing() -> None:
    found = triage("overwrites-const-input", OVERWRITE.splitlines(), "harness.c", False)
    assert "const input buffer" in found.misuse_hint


KEYS = """\
typedef struct qk_key qk_key;
void qk_key_init(qk_key *k);
void qk_key_free(qk_key *k);
int qk_parse_key(qk_key *k, const unsigned char *key, size_t keylen);
int qk_write_der(qk_key *k, unsigned char *buf, size_t size);
"""


def test_an_improvement_gives_a_writer_a_buffer_of_its_own() -> None:
    """The key writer added after the parse writes into its buffer: never the input."""
    from agents.offline.improver import improve_harness
    from tests.unit.test_offline_new_library import api, fn

    first = harness(KEYS, "qk_parse_key")
    better = improve_harness(first, fn(KEYS, "qk_parse_key"), api(KEYS), ["qk_write_der"])
    assert "qk_write_der" in better.added_calls, better.code
    assert not re.search(r"\bdata\b", _call(better.code, "qk_write_der")), better.code
