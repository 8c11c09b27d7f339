"""A failed assertion on the called function's own parameters is the harness's broken precondition.

Cipher and codec libraries state preconditions with ``assert``: ``bk_encrypt`` takes whole blocks
only (``assert(!(length % BK_BLOCK_SIZE))``). A harness passing the input's size straight through
aborts on the first odd-sized input. That is not a library bug: the offline triage says harness
misuse, and the repair checks the same condition on the harness's arguments before the call, after
which the harness runs clean. An assertion deeper in the library, on its own state, stays a bug.
Real clang build and libFuzzer runs; invented library.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.crash_analyzer import report_text, stack_text
from agents.offline.crash_roles import judge_feasibility
from agents.offline.fixer_precondition import guard_precondition
from agents.offline.prompt_reader import read_prompt
from fuzzkit.api import FunctionDecl
from fuzzkit.crash import CrashReport
from fuzzkit.headers import parse_header
from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import crash_of, tiny_library

pytestmark = pytest.mark.toolchain

HEADER = """\
#ifndef BK_H
#define BK_H
#include <stddef.h>
#include <stdint.h>
#define BK_BLOCK_SIZE 8
typedef struct bk_ctx { uint8_t key[BK_BLOCK_SIZE]; unsigned rounds; } bk_ctx;
void bk_encrypt(const bk_ctx *ctx, size_t length, uint8_t *dst, const uint8_t *src);
unsigned bk_digest(size_t length, const uint8_t *src);
#endif
"""

SOURCE = """\
#include "bk.h"
#include <assert.h>
#define BK_PRIVATE_LIMIT 64
void bk_encrypt(const bk_ctx *ctx, size_t length, uint8_t *dst, const uint8_t *src) {
  assert(!(length % BK_BLOCK_SIZE));
  for (size_t i = 0; i < length; i++) dst[i] = src[i] ^ ctx->key[i % BK_BLOCK_SIZE];
}
static unsigned mix(unsigned state, uint8_t byte) {
  assert(state != 0x2a2a2a2au);  /* the library's own state: a bug if it is ever reached */
  return state * 31u + byte;
}
unsigned bk_digest(size_t length, const uint8_t *src) {
  unsigned h = 0;
  for (size_t i = 0; i < length; i++) h = (src[i] == '*' && i > 2) ? 0x2a2a2a2au : mix(h, src[i]);
  return h;
}
"""

ENCRYPT = """\
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "bk.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bk_ctx ctx;
  uint8_t *out = NULL;
  memset(&ctx, 0, sizeof ctx);
  out = (uint8_t *)malloc(size + 1);
  if (out == NULL) goto lf_cleanup;
  bk_encrypt(&ctx, (size_t)size, out, data);
  lf_cleanup: ;
  free(out);
  return 0;
}
"""

DIGEST = """\
#include <stdint.h>
#include "bk.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 6 || data[3] != '*') return 0;
  bk_digest(size, data);
  return 0;
}
"""


def _library(tmp_path: Path, cache: Path) -> tuple[LibraryBuild, list[FunctionDecl]]:
    lib = tiny_library(tmp_path / "bk", "bk", HEADER, SOURCE, cache)
    return lib, parse_header(Path(lib.headers[0]), lib.include_dirs, lib.defines)


def _verdict(crash: CrashReport, code: str, api: list[FunctionDecl]) -> dict[str, object]:
    data = crash.to_dict()
    shown = [d for d in api if d.name in {f.function for f in crash.frames}]
    prompt = (f"## Target function\n{api[0].prototype()}\n\n## Crash triage\n{report_text(data)}\n\n"
              f"## Stack\n{stack_text(data)}\n\n## Library functions in the stack\n```c\n"
              + "\n".join(d.prototype() for d in shown) + f"\n```\n\n## Current harness\n```c\n{code}```\n")
    reply, _code = judge_feasibility(read_prompt("ROLE: crash_feasibility_analyzer", prompt))
    return json.loads(json.dumps(reply))


def test_the_harness_breaking_an_asserted_precondition_is_repaired_by_checking_it(
    tmp_path: Path, cache: Path
) -> None:
    lib, api = _library(tmp_path, cache)

    crash = crash_of(ENCRYPT, lib, tmp_path / "v1")
    assert crash is not None and crash.kind == "deadly-signal", "the odd-sized input never aborted"
    assert crash.assertion == "!(length % BK_BLOCK_SIZE)" and crash.entry_function == "bk_encrypt"
    verdict = _verdict(crash, ENCRYPT, api)
    assert verdict["verdict"] == "harness_misuse", verdict
    assert "length" in str(verdict["reasoning"]) and "BK_BLOCK_SIZE" in str(verdict["fix_hint"])

    triage = report_text(crash.to_dict()) + "\nstack:\n" + stack_text(crash.to_dict())
    fixed, how = guard_precondition(ENCRYPT, triage, api)
    assert how and "bk_encrypt" in how
    # the length is rounded down to whole blocks (the call still happens on most inputs)
    assert "size_t lf_arg1 = (size_t)((size_t)size);" in fixed
    assert "bk_encrypt(&ctx, lf_arg1, out, data)" in fixed
    assert "#if defined(BK_BLOCK_SIZE)\n  lf_arg1 -= lf_arg1 % (BK_BLOCK_SIZE);\n  #endif" in fixed, fixed
    assert crash_of(fixed, lib, tmp_path / "v2") is None
    assert guard_precondition(fixed, triage, api) == (fixed, None)  # once

    # An upper bound clamps; any other condition is checked, and the input left by the
    # block's own exit when it does not hold.
    def asserting(condition: str) -> str:  # the same crash with another failed assertion (as data)
        stack = stack_text(crash.to_dict())
        return report_text({**crash.to_dict(), "assertion": condition}) + "\nstack:\n" + stack

    most = asserting("length <= BK_BLOCK_SIZE")
    clamped = guard_precondition(ENCRYPT, most, api)[0]
    assert "if (lf_arg1 > (BK_BLOCK_SIZE)) lf_arg1 = (BK_BLOCK_SIZE);" in clamped
    other = asserting("length > 0 && dst != src")
    in_block = ENCRYPT.replace("  bk_encrypt(", "  {\n  if (size > 9) goto lf_skip;\n  bk_encrypt(").replace(
        "  lf_cleanup: ;", "  lf_skip: ;\n  }\n  lf_cleanup: ;")
    checked, how = guard_precondition(in_block, other, api)
    assert how and "if (!(((size_t)size) > 0 && (out) != (data))) goto lf_skip;" in checked, checked

    # A name only the library's source knows is never copied into the harness (a macro is
    # tested with #if defined, so one private to the source leaves the check out).
    private = asserting("!(length % bk_block_size)")
    assert guard_precondition(ENCRYPT, private, api) == (ENCRYPT, None)


def test_an_assertion_on_the_librarys_own_state_deeper_down_stays_a_library_bug(
    tmp_path: Path, cache: Path
) -> None:
    lib, api = _library(tmp_path, cache)
    crash = crash_of(DIGEST, lib, tmp_path / "d1")
    assert crash is not None and crash.assertion == "state != 0x2a2a2a2au", crash
    assert _verdict(crash, DIGEST, [api[1], api[0]])["verdict"] == "library_bug"
