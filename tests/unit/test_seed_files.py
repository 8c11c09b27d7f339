"""Which of a library's shipped files seed its fuzz runs, and how they are laid out."""

from __future__ import annotations

from pathlib import Path

from fuzzkit.seeds import MAX_BYTES, PAD, sample_files, seed_corpus


def _tree(root: Path) -> None:
    files = {
        "test/images/small.tif": b"II*\x00small",
        "test/images/other.tif": b"II*\x00other-image",
        "test/images/README.txt": b"about the images",
        "tests/files/good.xz": b"\xfd7zXZ\x00stream",
        "tests/check_read.c": b"int main(void) { return 0; }",
        "tests/Makefile.am": b"check_PROGRAMS = check_read",
        "tests/run.sh": b"#!/bin/sh",
        "tests/big.bin": b"x" * (MAX_BYTES + 1),
        "tests/empty.bin": b"",
        "src/decode.c": b"int decode(void);",
        "src/table.dat": b"not under a data directory",
        "debian/tests/control": b"Tests: x",
        "examples/sample.json": b"{\"a\": 1}",
    }
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def test_test_and_example_data_is_taken_source_and_build_files_are_not(tmp_path: Path) -> None:
    _tree(tmp_path)
    chosen = sorted(p.relative_to(tmp_path).as_posix() for p in sample_files(tmp_path))
    # README.txt is documentation by name; too big, empty, code, scripts and debian/ are left out
    assert chosen == ["examples/sample.json", "test/images/other.tif", "test/images/small.tif",
                      "tests/files/good.xz"]


def test_each_seed_is_there_as_it_is_and_padded_for_option_bytes(tmp_path: Path) -> None:
    _tree(tmp_path / "src-tree")
    seeds = seed_corpus(tmp_path / "src-tree", tmp_path / "cache" / "seeds")
    assert seeds is not None
    contents = sorted(p.read_bytes() for p in seeds.iterdir())
    assert b"II*\x00small" in contents and b"II*\x00small" + bytes(PAD) in contents
    assert len(contents) == 8
    again = seed_corpus(tmp_path / "src-tree", tmp_path / "cache" / "seeds")  # made once
    assert again == seeds and len(list(seeds.iterdir())) == 8


def test_a_library_without_sample_files_has_no_seed_directory(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.c").write_text("int f(void) { return 0; }\n")
    assert seed_corpus(tmp_path, tmp_path / "cache" / "seeds") is None
