"""A lifecycle verb fused with the noun of a type the API passes: ``ac_newstate``, ``ac_freestate``.

An invented interpreter API, shaped like small embeddable interpreters whose names are one word
after the prefix: without the rule its constructor read as "other", so the harness called the
target on a NULL state (SEGV on every input), and its destructor was never called.
"""

from __future__ import annotations

from agents.offline.synth_api import ApiIndex
from fuzzkit.api import FunctionDecl, Param

STATE = Param("S", "ac_State *")
API = [
    FunctionDecl("ac_newstate", "ac_State *", (Param("alloc", "void *"), Param("flags", "int")), "ac.h"),
    FunctionDecl("ac_freestate", "void", (STATE,), "ac.h"),
    FunctionDecl("ac_dostring", "int", (STATE, Param("source", "const char *")), "ac.h"),
    FunctionDecl("ac_newline", "int", (STATE,), "ac.h"),
    *(FunctionDecl(f"ac_push{n}", "void", (STATE,), "ac.h") for n in ("nil", "true", "false")),
]


def test_a_verb_fused_with_a_type_noun_is_that_verb() -> None:
    idx = ApiIndex(API)
    life = idx.lifecycle("ac_State")
    assert life.create == ["ac_newstate"] and life.destroy == ["ac_freestate"], life
    assert idx.destructor("ac_State", "ac_newstate") == "ac_freestate"


def test_a_verb_fused_with_a_word_no_type_has_stays_a_plain_word() -> None:
    idx = ApiIndex(API)
    assert idx.kind(idx.by_name["ac_newline"]) == "other"  # no `line` type: a newline is no object
    assert idx.verbs("ac_dostring") == []
