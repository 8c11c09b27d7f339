"""Which functions a group of flag macros is for, from the header's comments (fuzzkit.header_macros)."""

from __future__ import annotations

from pathlib import Path

from agents.offline.synth_choices import high_flags, scoped_flags
from agents.offline.type_table import read_types, using
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.header_facts import HeaderFacts, Macro
from fuzzkit.header_macros import field_flags, option_owner_words, scope_groups

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


FIELD_HEADER = """\
typedef struct { void *code; const char *re_endp; size_t count; } zq_regex;
int zq_compile(zq_regex *re, const char *pattern, int cflags);
#define ZQ_ICASE    0x0100
#define ZQ_PEND     0x0800  /* GNU feature: pass the end of the pattern by re_endp */
#define ZQ_COUNT    0x1000  /* the count field is filled in */
#define ZQ_NOSPEC   0x2000  /* the pattern is a literal: count nothing */
"""


def test_a_word_naming_one_option_taker_names_its_group_however_many_functions_share_it() -> None:
    def fn(name: str, *types: str) -> FunctionDecl:
        return FunctionDecl(name, "int", tuple(Param("", t) for t in types))

    # The converter takes an unnamed 32-bit option word; three functions of its context share its
    # word and take none; the prefix names every function.
    api = [fn("zq_pattern_convert", "const char *", "size_t", "uint32_t"), fn("zq_convert_context_create"),
           fn("zq_convert_context_copy", "void *"), fn("zq_convert_context_free", "void *"),
           fn("zq_compile", "const char *", "size_t", "uint32_t"), fn("zq_match", "void *", "uint32_t"),
           fn("zq_dfa_match", "void *", "uint32_t"), fn("zq_jit_match", "void *", "uint32_t")]
    words = option_owner_words(api)
    assert "convert" in words and "pattern" in words and "compile" in words
    assert "match" not in words  # three option takers share it
    assert "zq" not in words


def test_a_flag_whose_comment_names_a_field_is_never_drawn_for_an_option_word(tmp_path: Path) -> None:
    path = tmp_path / "zq.h"
    path.write_text(FIELD_HEADER)
    where = {line.split()[1]: (int(line.split()[2], 16), str(path), n)
             for n, line in enumerate(FIELD_HEADER.splitlines(), 1) if line.startswith("#define")}
    flags = field_flags(where, {"code", "re_endp", "count"})
    # A field of its own name, or one the comment calls a field; a plain word ("count nothing") is none.
    assert [(f.name, f.value, f.fields) for f in flags] == [("ZQ_PEND", 0x800, ["re_endp"]),
                                                           ("ZQ_COUNT", 0x1000, ["count"])]
    # Kept or not by the prompt's budget, the flags' bits stay out, under any constant's name.
    kept = [Macro(name, value, 0) for name, (value, _p, _l) in where.items()]
    others = [Macro("ZQ_OTHER_MODE", 0x800, 1), Macro("ZQ_OTHER_B", 0x4000, 1)]
    for macros in ([*kept, *others], others):
        facts = HeaderFacts(macros=macros, field_flags=flags)
        text = facts.render()
        assert "field_flags" in text and HeaderFacts.from_dict(facts.to_dict()).field_flags == flags
        with using(read_types(text)):
            picks = high_flags("cflags", "int")
        assert 0x4000 in picks and 0x800 not in picks and 0x1000 not in picks
    with using(read_types(HeaderFacts(macros=kept, field_flags=flags).render())):
        assert {0x100, 0x2000} <= set(high_flags("cflags", "int"))
