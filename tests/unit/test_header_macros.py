"""Which functions a group of flag macros is for, from the header's comments (fuzzkit.header_macros)."""

from __future__ import annotations

from pathlib import Path

from agents.offline.synth_choices import scoped_flags
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts import HeaderFacts, Macro
from fuzzkit.header_macros import scope_groups

HEADER = """\
/* Flags for zq_open(). The stream they make is read by zq_read() and
   zq_read_all(), which take their own flags below. */
#define ZQ_CREATE   0x1
#define ZQ_APPEND   0x2

/* These are for zq_read() and zq_read_all(). */

#define ZQ_PEEK     0x1
#define ZQ_WAIT     0x2  /* Not for zq_read_all() */
#define ZQ_GREEDY   0x4  /* zq_read_all() only */
#define ZQ_TRUSTED_INPUT 0x8

#define ZQ_UNDOCUMENTED 0x100
"""


def _macros(tmp_path: Path) -> tuple[list[Macro], dict[str, tuple[int, str, int]]]:
    path = tmp_path / "zq.h"
    path.write_text(HEADER)
    where: dict[str, tuple[int, str, int]] = {}
    for number, line in enumerate(HEADER.splitlines(), 1):
        if line.startswith("#define"):
            name, value = line.split()[1:3]
            where[name] = (int(value, 16), str(path), number)
    groups = {"ZQ_CREATE": 0, "ZQ_APPEND": 0, "ZQ_UNDOCUMENTED": 2}
    kept = [Macro(n, v, groups.get(n, 1)) for n, (v, _p, _l) in where.items()]
    return kept, where


def test_the_first_sentence_of_the_comment_above_a_group_names_its_functions(tmp_path: Path) -> None:
    kept, where = _macros(tmp_path)
    api = {"zq_open", "zq_read_8", "zq_read_all_8", "zq_close"}  # width variants of the names
    scoped = {m.name: m for m in scope_groups(kept, where, api)}
    assert scoped["ZQ_CREATE"].scope == ("zq_open",)  # not the readers of the second sentence
    assert scoped["ZQ_PEEK"].scope == ("zq_read_8", "zq_read_all_8")  # one blank line between
    assert scoped["ZQ_WAIT"].not_for == ("zq_read_all_8",) and not scoped["ZQ_WAIT"].only
    assert scoped["ZQ_GREEDY"].only == ("zq_read_all_8",)
    assert scoped["ZQ_UNDOCUMENTED"].scope == ()


def test_the_offline_model_reads_the_scopes_back_and_builds_each_functions_mask(tmp_path: Path) -> None:
    kept, where = _macros(tmp_path)
    facts = HeaderFacts(macros=scope_groups(kept, where, {"zq_open", "zq_read", "zq_read_all"}))
    text = facts.render()
    assert "- scope: [zq_read, zq_read_all]\n  constants: {ZQ_PEEK: 1," in text, text
    assert HeaderFacts.from_dict(facts.to_dict()).macros == facts.macros
    with using(read_types(text)):
        assert scoped_flags("zq_open", "flags", "int") == 0x3
        assert scoped_flags("zq_read", "flags", "unsigned int") == 0x3  # no GREEDY, no TRUSTED_INPUT
        assert scoped_flags("zq_read_all", "flags", "unsigned int") == 0x5  # no WAIT
        assert scoped_flags("zq_close", "flags", "int") == 0  # no comment names it
        assert scoped_flags("zq_read", "length", "size_t") == 0  # not an option word
