"""The fuzzing dictionary read from a library's string literals, the dictionaries libraries ship
beside their own fuzz harnesses, and which of them each side of a comparison gets
(``bench/harness_compare.py``). Invented sources; each test states one rule."""

from __future__ import annotations

from pathlib import Path

from benchkit.harness_compare import BuiltSide, side_dictionaries
from fuzzkit.dictionary import (
    code_points,
    decode_literal,
    entry,
    library_dictionary,
    literals,
    shipped_dictionary,
    tokens,
    write_dictionary,
)

SOURCE = r"""
#include "never-a-token.h"
/* "commented" out */
// "also commented"
static const char *kw[] = {"BEGIN", "COMMIT", "ROLLBACK"};
static const unsigned char magic[] = "\x89QX\r\n";
int f(char c) {
  if (c == '"') return 1;            /* a character, not a literal's start */
  log_msg("cannot open %s: %d", "x");
  emit("<!DOCTYPE");
  emit("COMMIT"); fetch("http://x.test/a"); /* "x */
  return report("unterminated string in line");
}
"""


def _tokens(tmp_path: Path, text: str = SOURCE) -> dict[bytes, int]:
    src = tmp_path / "lib.c"
    src.write_text(text)
    return dict(tokens([src]))


def test_escapes_are_decoded_to_the_bytes_the_library_compares() -> None:
    assert decode_literal(r"\x89QX\r\n") == b"\x89QX\r\n"
    assert decode_literal(r"a\101\"b") == b'aA"b'
    assert decode_literal(r"\u00e9") is None  # not guessed


def test_literals_skip_comments_includes_and_character_constants() -> None:
    found = list(literals(SOURCE))
    assert b"BEGIN" in found and b"<!DOCTYPE" in found and b"http://x.test/a" in found
    assert not {b"commented", b"also commented", b"never-a-token.h"} & set(found)
    assert not [t for t in found if b"return" in t]  # '"' opened no literal


def test_whole_short_literals_and_the_words_of_longer_ones_are_kept_formats_are_not(tmp_path: Path) -> None:
    got = _tokens(tmp_path)
    assert got[b"COMMIT"] == 2 and got[b"\x89QX\r\n"] == 1
    assert b"cannot open %s: %d" not in got and b"cannot" in got  # a format's words still count
    assert b"unterminated" in got and b"unterminated string in line" not in got  # too long whole
    assert b"in" not in got  # words are at least 3 characters


def test_entries_are_written_most_frequent_first_in_libfuzzers_format(tmp_path: Path) -> None:
    assert entry(b'a"b\\c\x00') == r'"a\x22b\x5Cc\x00"'
    src = tmp_path / "lib.c"
    src.write_text(SOURCE)
    dest = tmp_path / "lib.dict"
    assert write_dictionary([src], dest, limit=3) == 3
    lines = [ln for ln in dest.read_text().splitlines() if not ln.startswith("#")]
    assert lines[0] == '"COMMIT"' and len(lines) == 3


TEXT_SOURCE = r"""
/* Decodes UTF-8, then checks joiners and digits. */
int check(const unsigned *cp, int n, int i) {
  switch (cp[i]) {
  case 0x200C: return i > 0;              /* a code point compared: kept */
  case 0x00B7: return cp[i - 1] == 0x006C;  /* U+006C is ASCII: reachable as it is */
  }
  if (cp[i] >= 0x0660 && cp[i] <= 0x0669) return 2;
  if (cp[i] == 0xD800) return -1;         /* a surrogate has no UTF-8 */
  return (n << 0x1000) + (n & 0xFFFF) + size(0x2028);  /* shifted, masked, passed: not compared */
}
"""


def test_code_points_the_decoded_text_is_compared_with_are_added_in_utf8(tmp_path: Path) -> None:
    got = code_points([TEXT_SOURCE])
    assert set(got) == {b"\xe2\x80\x8c", b"\xc2\xb7", b"\xd9\xa0", b"\xd9\xa9"}
    assert code_points([TEXT_SOURCE.replace("UTF-8", "bytes")]) == {}  # no UTF-8: numbers only
    src = tmp_path / "text.c"
    src.write_text(TEXT_SOURCE + 'const char *name = "joiner";\n')
    dest = tmp_path / "text.dict"
    assert write_dictionary([src], dest) == 5
    assert r'"\xE2\x80\x8C"' in dest.read_text().splitlines() and '"joiner"' in dest.read_text()


def test_the_library_dictionary_is_made_once_and_none_without_literals(tmp_path: Path) -> None:
    src = tmp_path / "lib.c"
    src.write_text(SOURCE)
    dest = tmp_path / "build" / "fuzz.dict"
    assert library_dictionary([src], dest) == dest
    dest.write_text('"KEPT"\n')  # a second call reads what the first wrote
    assert library_dictionary([src], dest) == dest and dest.read_text() == '"KEPT"\n'
    bare = tmp_path / "bare.c"
    bare.write_text("int g(int x) { return x + 1; }\n")
    assert library_dictionary([bare], tmp_path / "other" / "fuzz.dict") is None


def _shipped_tree(tmp_path: Path) -> Path:
    """``fuzz/`` with three harnesses, two of them with a dictionary of their own."""
    fuzz = tmp_path / "fuzz"
    fuzz.mkdir()
    for name in ("xml.c", "html.c", "uri.c"):
        (fuzz / name).write_text("")
    (fuzz / "xml.dict").write_text('"<"\n')
    (fuzz / "html.dict").write_text('"<"\n')
    return fuzz


def test_a_shipped_dictionary_is_the_harnesss_own_else_the_one_of_its_directory(tmp_path: Path) -> None:
    fuzz = _shipped_tree(tmp_path)
    assert shipped_dictionary(fuzz / "xml.c") == fuzz / "xml.dict"
    assert shipped_dictionary(fuzz / "uri.c") is None  # two others: neither is uri's
    one = tmp_path / "ossfuzz"
    (one / "config").mkdir(parents=True)
    (one / "fuzz.c").write_text("")
    (one / "config" / "fuzz.dict").write_text('"x"\n')
    assert shipped_dictionary(one / "fuzz.c") == one / "config" / "fuzz.dict"


def _side(paths: list[Path]) -> BuiltSide:
    side = BuiltSide()
    for p in paths:
        side.builds.append(object())  # type: ignore[arg-type]  # only counted here
        side.names.append(p.name)
        side.sources.append(p)
    return side


def test_each_comparison_side_gets_its_own_dictionary_or_the_same_or_none(tmp_path: Path) -> None:
    """``own``: LogicFuzz's harnesses the literal dictionary, each upstream harness the one shipped
    beside it; ``same``: the literal one for both; ``none``: none."""
    fuzz = _shipped_tree(tmp_path)
    mine = str(tmp_path / "fuzz.dict")
    up = _side([fuzz / "xml.c", fuzz / "uri.c"])
    lf = _side([tmp_path / "t1" / "harness.c", tmp_path / "t2" / "harness.c"])
    assert side_dictionaries(up, "upstream", "own", mine) == [fuzz / "xml.dict", None]
    assert side_dictionaries(lf, "logicfuzz", "own", mine) == [Path(mine)] * 2
    assert side_dictionaries(lf, "logicfuzz", "own", "") == [None, None]  # no literals: no dictionary
    assert side_dictionaries(up, "upstream", "same", mine) == [Path(mine)] * 2
    assert side_dictionaries(up, "upstream", "none", mine) == [None, None]
    assert side_dictionaries(lf, "logicfuzz", "none", mine) == [None, None]
