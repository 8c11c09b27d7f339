"""Parameters declared as fixed-size arrays compile and carry the input.

``kx`` (written here) derives a shared secret from two 32-byte keys and hashes a message into a
64-byte digest, declared the way crypto headers do (``const uint8_t key[32]``). A harness that
declared ``uint8_t[32] key;`` never compiled; one that passed a short string read past it. The
library traps on one key prefix, which only a harness that fills the key from the input reaches.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import (
    assert_finds_crash_in,
    assert_runs_clean,
    header_facts,
    offline_draft,
    tiny_library,
)

pytestmark = pytest.mark.toolchain

KX_HEADER = """\
#ifndef KX_H
#define KX_H
#include <stddef.h>
#include <stdint.h>
void kx_shared(uint8_t shared[32], const uint8_t secret[32], const uint8_t peer[32]);
void kx_hash(uint8_t digest[64], const uint8_t *message, size_t message_size);
#endif
"""

KX_SOURCE = """\
#include "kx.h"
#include <string.h>
static void kx_weak_key(void) { __builtin_trap(); }
void kx_shared(uint8_t shared[32], const uint8_t secret[32], const uint8_t peer[32]) {
  if (memcmp(secret, "KEY!", 4) == 0) kx_weak_key();
  for (int i = 0; i < 32; i++) shared[i] = (uint8_t)(secret[i] ^ peer[i]);
}
void kx_hash(uint8_t digest[64], const uint8_t *message, size_t message_size) {
  memset(digest, 0, 64);
  for (size_t i = 0; i < message_size; i++) digest[i % 64] ^= message[i];
}
"""


@pytest.fixture(scope="module")
def kx_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("kxlib"), "kx", KX_HEADER, KX_SOURCE, cache)


def test_an_input_key_array_is_filled_from_the_input(kx_lib: LibraryBuild, tmp_path: Path) -> None:
    code = offline_draft(kx_lib, header_facts(kx_lib), "kx_shared")
    assert "uint8_t secret[32];" in code, code
    assert_finds_crash_in(code, kx_lib, tmp_path, "kx_weak_key")


def test_an_output_array_is_a_local_of_its_size(kx_lib: LibraryBuild, tmp_path: Path) -> None:
    code = offline_draft(kx_lib, header_facts(kx_lib), "kx_hash")
    assert "uint8_t digest[64];" in code, code
    assert_runs_clean(code, kx_lib, tmp_path)
