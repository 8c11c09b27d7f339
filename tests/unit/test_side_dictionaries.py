"""bench/harness_compare.py: which dictionary each harness of a comparison is fuzzed with.

``own`` (the default) gives each side the one it comes with: LogicFuzz's harnesses the library's
literal dictionary ``logicfuzz run`` used, each upstream harness the dictionary shipped beside
it; ``same`` gives both sides LogicFuzz's (the harnesses alone compared); ``none`` none.
"""

from __future__ import annotations

from pathlib import Path

from bench.harness_compare import BuiltSide, side_dictionaries


def _side(paths: list[Path]) -> BuiltSide:
    side = BuiltSide()
    for p in paths:
        side.builds.append(object())  # type: ignore[arg-type]  # only counted here
        side.names.append(p.name)
        side.sources.append(p)
    return side


def test_each_side_gets_its_own_dictionary_or_the_same_or_none(tmp_path: Path) -> None:
    fuzz = tmp_path / "fuzz"
    fuzz.mkdir()
    for name in ("xml.c", "uri.c", "html.c"):
        (fuzz / name).write_text("")
    (fuzz / "xml.dict").write_text('"<"\n')
    (fuzz / "html.dict").write_text('"<"\n')
    mine = tmp_path / "fuzz.dict"
    up = _side([fuzz / "xml.c", fuzz / "uri.c"])
    lf = _side([tmp_path / "t1" / "harness.c", tmp_path / "t2" / "harness.c"])
    assert side_dictionaries(up, "upstream", "own", mine) == [fuzz / "xml.dict", None]
    assert side_dictionaries(lf, "logicfuzz", "own", mine) == [mine, mine]
    assert side_dictionaries(up, "upstream", "same", mine) == [mine, mine]
    assert side_dictionaries(up, "upstream", "none", mine) == [None, None]
    assert side_dictionaries(lf, "logicfuzz", "none", mine) == [None, None]
