"""The four API shapes a prototype does not explain, learned from the library's own code.

Each invented library (:mod:`tests.usage_fixtures`) is built with the real toolchain and its
target's first draft written by the offline model from the real prompt. With the usage index
the draft makes, configures, feeds and releases the way the library's test, example or tool
does, and fuzzing it finds nothing (the libraries have no bug); without it (``--no-usage``) the
draft breaks the rule and the fuzzer says so. The fuzz harness each tree ships is never read.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fuzzkit.harness import build_harness
from fuzzkit.library import LibraryBuild
from fuzzkit.runner import run_fuzzer
from tests.usage_drive import first_draft, prepared

pytestmark = pytest.mark.toolchain

SHAPES = {
    "hnd": "hnd_decode",  # an integer handle only an opener makes
    "em": "em_read_header",  # an error manager set up before reading
    "cbs": "cbs_read_frame",  # input only through read callbacks
    "pr": "pr_count",  # an object whose obvious releaser frees only its parts
    "ver": "ver_parse",  # a constructor that checks the header's version string
    "sj": "sj_read",  # errors longjmp to a buffer the caller set with setjmp
    "ms": "ms_read_header",  # a reader callback set after making, over a buffer a writer filled
}


def _fuzz(tmp: Path, state: dict, code: str) -> tuple[bool, str]:
    """Build the draft and fuzz it briefly: (crashed, the sanitizer's kind)."""
    src = tmp / "harness.c"
    src.write_text(code)
    built = build_harness(src, LibraryBuild.from_dict(state["library"]), tmp / "build")
    assert built.ok, built.errors
    seeds = tmp / "seeds"
    seeds.mkdir()
    for i, sample in enumerate([b"", b"R1R2", b"EM\x00\x10", b"F\x02\x01\x00\x02\x00", b"a,b,c"]):
        (seeds / f"s{i}").write_bytes(sample)
    run = run_fuzzer(
        Path(built.fuzz_binary), tmp / "run", seconds=4, seed_dirs=[seeds], extra_args=["-seed=1"]
    )
    return run.crashed, run.crash.kind if run.crash else ""


@pytest.mark.parametrize("lib", sorted(SHAPES))
def test_the_usage_draft_runs_and_the_prototype_draft_does_not(tmp_path: Path, lib: str) -> None:
    with_usage = prepared(tmp_path / "on", lib, SHAPES[lib])
    code, notes, prompt = first_draft(with_usage)
    assert "## Usage in the library's own code" in prompt
    assert (
        "LLVMFuzzerTestOneInput" not in prompt.split("## Usage in the library's own code")[1].split("## ")[0]
    )
    assert "follows" in " ".join(notes) or lib in ("pr", "ver", "sj"), notes
    crashed, kind = _fuzz(tmp_path / "on", with_usage, code)
    assert not crashed, (kind, code)

    without = prepared(tmp_path / "off", lib, SHAPES[lib], usage=False)
    code_off, _notes, prompt_off = first_draft(without)
    assert "## Usage in the library's own code" not in prompt_off
    crashed_off, kind_off = _fuzz(tmp_path / "off", without, code_off)
    assert crashed_off, code_off


def test_the_protocols_name_what_the_usage_does(tmp_path: Path) -> None:
    code, _n, _p = first_draft(prepared(tmp_path / "h", "hnd", "hnd_decode"))
    assert re.search(r"hnd_open\(HND_READ, HND_FMT_PACKED, &h\)", code), code  # the test's constants
    code, _n, _p = first_draft(prepared(tmp_path / "e", "em", "em_read_header"))
    assert code.index("em_std_error(&") < code.index("em_read_header("), code
    code, _n, _p = first_draft(prepared(tmp_path / "c", "cbs", "cbs_read_frame"))
    assert "mem_read" in code and re.search(r"for \(int lf_i = 0; lf_i < \d+ &&", code), code
    code, _n, _p = first_draft(prepared(tmp_path / "p", "pr", "pr_count"))
    assert "pr_dispose(" in code, code
    # The example is a helper given its buffer (no replay): the synthesizer takes the constant.
    code, notes, _p = first_draft(prepared(tmp_path / "v", "ver", "ver_parse"))
    assert "ver_create((const char *)VER_VERSION_STRING)" in code, code
    assert any("from the library's own code (VER_VERSION_STRING)" in n for n in notes), notes


def test_a_reader_set_after_making_reads_the_input_and_each_maker_keeps_its_releaser(tmp_path: Path) -> None:
    state = prepared(tmp_path, "ms", "ms_read_header")
    assert "#define BUF_SIZE 256" in str(state["library_usage"])  # the record's size travels with it
    code, notes, _p = first_draft(state)
    assert re.search(r"memcpy\(buf\.data, lf_buf, lf_fill_buf\);", code), code  # the input is the buffer
    assert "buf.len = lf_fill_buf;" in code, code
    assert code.index("ms_set_read_fn(") < code.index("ms_read_header("), code
    assert "ms_destroy_read_struct(&p)" in code and "ms_destroy_write_struct" not in code, code
    crashed, kind = _fuzz(tmp_path, state, code)
    assert not crashed, (kind, code)


def test_the_fuzz_harness_is_never_read(tmp_path: Path) -> None:
    state = prepared(tmp_path, "hnd", "hnd_decode")
    # The shipped harness opens with HND_FMT_RAW; the library's test with HND_FMT_PACKED.
    assert "HND_FMT_RAW" not in str(state["library_usage"])
    assert "HND_FMT_PACKED" in str(state["library_usage"])


def test_a_control_record_gets_the_fields_its_usage_sets_and_passes_the_version_check(tmp_path: Path) -> None:
    # cr_encode returns at once unless the record's version is CR_VERSION and its size fits the
    # pixels; past those checks it aborts (a bug only a described image reaches).
    state = prepared(tmp_path / "on", "cr", "cr_encode")
    code, notes, _p = first_draft(state)
    assert code.index("image.version = CR_VERSION;") < code.index("cr_encode("), code
    assert re.search(r"width_v = \(unsigned int\)lf_take_int\(&lf_in, 1, 64\);", code), code
    assert any("set before cr_encode" in n for n in notes), notes
    crashed, kind = _fuzz(tmp_path / "on", state, code)
    assert crashed and kind, code  # reached past the version check

    without = prepared(tmp_path / "off", "cr", "cr_encode", usage=False)
    code_off, _n, _p = first_draft(without)
    assert "CR_VERSION" not in code_off
    crashed_off, _kind = _fuzz(tmp_path / "off", without, code_off)
    assert not crashed_off, code_off  # a zeroed record: only the error path runs
