"""A read past libFuzzer's input, given with its exact size as the buffer's length, is the library's.

Invented API: ``ux_to_code_points(int set, const char *s, int len, uint32_t *out)`` decodes
multi-byte sequences and trusts a lead byte, reading past ``len``. The harness passes ``data``
and ``size`` as they are, so the read past the input is the library reading more than it was
told there is: a bug. The same report is misuse when the harness passed something else (a copy
without a length, an array of wider elements measured in bytes) or an empty input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.crash_analyzer import CrashAnalyzer, CrashFeasibilityAnalyzer
from agents.offline.model import OfflineChatModel
from fuzzkit.api import FunctionDecl, Param

DECODE = FunctionDecl("ux_to_code_points", "int", [Param("set", "int"), Param("s", "const char *"),
                                                   Param("len", "int"), Param("out", "uint32_t *")]).to_dict()
WIDE = FunctionDecl("ux_from_code_points", "int", [Param("cps", "const uint32_t *"), Param("n", "int"),
                                                   Param("out", "char *")]).to_dict()
HARNESS = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t *out = calloc(size + 1, sizeof(uint32_t));
  if (out == NULL) return 0;
  (void)CALL;
  free(out);
  return 0;
}
"""


def _crash(entry: str, size: int = 5) -> dict[str, Any]:
    return {"kind": "heap-buffer-overflow", "in_harness": False, "near_init": False,
            "summary": "SUMMARY: AddressSanitizer: heap-buffer-overflow ux.c:66 in ux_decode_utf8",
            "signature": f"heap-buffer-overflow@ux_decode_utf8<{entry}<LLVMFuzzerTestOneInput",
            "category": "library", "entry_function": entry, "access": "READ of size 1",
            "buffer_origin": "fuzzer-input", "input_size": size,
            "misuse_hint": "ux_decode_utf8 made a READ of size 1 at 0 bytes after 5-byte region, and that "
                           "region is libFuzzer's own input buffer, which the harness passed to "
                           f"{entry} unchanged",
            "frames": [{"function": "ux_decode_utf8", "file": "ux.c", "line": 66},
                       {"function": entry, "file": "ux.c", "line": 160},
                       {"function": "LLVMFuzzerTestOneInput", "file": "harness.c", "line": 4}]}


def verdict(call: str, crash: dict[str, Any], target: dict[str, Any] = DECODE, *, tmp: Path,
            body: str = "(void)CALL;") -> str:
    """The offline verdict on ``crash`` for the harness making ``call`` (in ``body``)."""
    reproducer = tmp / "crash-input"
    reproducer.write_bytes(b"\xf0" * crash["input_size"])
    crash = {**crash, "reproducer": str(reproducer)}
    state: dict[str, Any] = {"target": target, "api": [DECODE, WIDE], "crash": crash,
                             "harness_code": HARNESS.replace("(void)CALL;", body).replace("CALL", call)}
    model = OfflineChatModel()
    triage = CrashAnalyzer(model).run(CrashAnalyzer.variables(state, ()))
    state["crash_analysis"] = triage.output.model_dump()
    variables = CrashFeasibilityAnalyzer.variables(state, ())
    return str(CrashFeasibilityAnalyzer(model).run(variables).output.verdict)


def test_reading_past_the_length_it_was_given_is_a_library_bug(tmp_path: Path) -> None:
    call = "ux_to_code_points(1, (const char *)data, (int)size, out)"
    assert verdict(call, _crash("ux_to_code_points"), tmp=tmp_path) == "library_bug"


def test_it_stays_misuse_where_the_harness_did_not_say_how_long_the_input_is(tmp_path: Path) -> None:
    crash = _crash("ux_to_code_points")
    fixed = "ux_to_code_points(1, (const char *)data, 4, out)"
    assert verdict(fixed, crash, tmp=tmp_path) == "harness_misuse"
    assert verdict("ux_to_code_points(1, (const char *)data, (int)size, out)",
                   _crash("ux_to_code_points", size=0), tmp=tmp_path) == "harness_misuse"
    # bytes measured as elements of four bytes: the harness's mistake
    wide = "ux_from_code_points((const uint32_t *)data, (int)size, (char *)out)"
    assert verdict(wide, _crash("ux_from_code_points"), WIDE, tmp=tmp_path) == "harness_misuse"


CHUNKED = """  for (size_t lf_off = 0, lf_round = 0; lf_round < 4096; lf_round++) {
    const uint8_t *lf_chunk = data + lf_off;
    size_t lf_chunk_size = SIZE;
    (void)CALL;
    lf_off += lf_chunk_size;
    if (lf_off >= size) break;
  }"""


def test_a_piece_of_the_input_from_the_chunk_loop_with_its_exact_length_is_the_librarys_too(
        tmp_path: Path) -> None:
    # A parser resuming a sequence split between two pieces reads before or past the piece.
    call = "ux_to_code_points(1, (const char *)lf_chunk, (int)lf_chunk_size, out)"
    exact = CHUNKED.replace("SIZE", "size - lf_off < lf_chunk_max ? size - lf_off : lf_chunk_max")
    assert verdict(call, _crash("ux_to_code_points"), tmp=tmp_path, body=exact) == "library_bug"
    # A piece whose length is not clamped to what is left may run past the input: misuse.
    loose = CHUNKED.replace("SIZE", "lf_chunk_max")
    assert verdict(call, _crash("ux_to_code_points"), tmp=tmp_path, body=loose) == "harness_misuse"


def test_a_setup_call_handed_the_input_with_its_length_reads_past_it_the_librarys_too(tmp_path: Path) -> None:
    # The target is the wide encoder; the harness first decodes the input with its size.
    then = "(void)ux_from_code_points(out, 1, NULL)"
    setup = f"ux_to_code_points(1, (const char *)data, (int)size, out); {then}"
    assert verdict(setup, _crash("ux_to_code_points"), WIDE, tmp=tmp_path) == "library_bug"
    # ... and a setup call told a length of its own picking is still the harness's doing.
    picked = f"ux_to_code_points(1, (const char *)data, 64, out); {then}"
    assert verdict(picked, _crash("ux_to_code_points"), WIDE, tmp=tmp_path) == "harness_misuse"
