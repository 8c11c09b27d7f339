"""A record the library allocates is made by its constructor, not zeroed on the caller's stack.

``tg_entry_t *tg_entry_new(void)``, ``void tg_entry_initialize(tg_entry_t *, tg_tag_t tag)``,
``void tg_entry_unref(tg_entry_t *)`` (an invented API). The record's fields are public, so a
harness could declare one and hand it to the initializer; but the initializer needs what the
constructor set up (its allocator), and the releaser frees the pointer it is given: on a
camera-metadata library every draft that dumped an entry this way crashed (SEGV in the
releaser). With a constructor that takes nothing, the object comes from it; an initializer
that takes more than the object (a tag) then fills it, one taking the object alone does not
run again what the constructor did.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from fuzzkit.api import FunctionDecl, Param

E = Param("e", "tg_entry_t *")
DUMP = FunctionDecl("tg_entry_dump", "void", (E, Param("indent", "unsigned int")), "tg.h")
NEW = FunctionDecl("tg_entry_new", "tg_entry_t *", (), "tg.h")
INIT = FunctionDecl("tg_entry_initialize", "void", (E, Param("tag", "int")), "tg.h")
API = [DUMP, NEW, INIT, FunctionDecl("tg_entry_unref", "void", (E,), "tg.h"),
       FunctionDecl("tg_entry_get_value", "const char *", (E, Param("val", "char *"),
                                                           Param("maxlen", "unsigned int")), "tg.h")]


def draft(api: list[FunctionDecl]) -> str:
    analysis = analyze_function(DUMP, api)
    return write_harness(DUMP, api, ["tg.h"], analysis.archetype, default_skeleton(analysis.archetype),
                         rules=analysis.rules).code


def test_the_entry_comes_from_its_constructor_then_its_initializer() -> None:
    code = draft(API)
    assert "tg_entry_t tg" not in code and "memset(&entry" not in code, code
    made, init, call = (code.index(s) for s in
                        ("= tg_entry_new();", "tg_entry_initialize(", "tg_entry_dump("))
    assert made < init < call
    assert "tg_entry_unref(&" not in code and "tg_entry_unref(" in code


def test_an_initializer_of_the_object_alone_is_not_run_again() -> None:
    bare = FunctionDecl("tg_entry_initialize", "void", (E,), "tg.h")
    code = draft([DUMP, NEW, bare, *API[3:]])
    assert "= tg_entry_new();" in code and "tg_entry_initialize(" not in code, code
