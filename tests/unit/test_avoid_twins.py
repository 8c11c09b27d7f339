"""A call that crashed by misuse teaches about its family: the same signature, named alike.

``avoid_call(F)`` learned on one target leaves out F in the next target's improvement; a function
with F's canonical signature whose name shares a word with F's past the prefix (a sibling parser
of the same context, a sibling converter of the same object) is left out too, and the note says
which lesson did it. Types are compared through the prompt's Types section, so two typedef names
of one struct are one type.
"""

from __future__ import annotations

from agents.offline import type_table
from agents.offline.cdecl import parse_prototypes
from agents.offline.lesson_apply import ActionableLesson, avoid_notes, avoided_calls, twins_of
from long_term_memory.experience.lessons import parse_action, parse_scope
from tests.types_text import render_types

TYPES = """typedef struct qq_ctx *qq_ctx_p; /* struct qq_ctx * */
typedef struct qq_ctx *qq_html_ctx_p; /* struct qq_ctx * */
typedef struct qq_obj *qq_obj_p; /* struct qq_obj * */"""

API = parse_prototypes("""
int qq_parse_document(qq_ctx_p ctx);
int qq_html_parse_document(qq_html_ctx_p ctx);
int qq_parse_entity(qq_ctx_p ctx);
int qq_reset(qq_ctx_p ctx);
int qq_parse_chunk(qq_ctx_p ctx, const char *chunk, int size);
qq_obj_p qq_convert_number(qq_obj_p obj);
qq_obj_p qq_convert_string(qq_obj_p obj);
qq_obj_p qq_copy(qq_obj_p obj);
int qq_check(const char *text, int size);
int qq_scan(const char *text, int size);
""")
BY = {f.name: f for f in API}


def lesson(function: str) -> ActionableLesson:
    return ActionableLesson("MEM-0000beef", f"Calling {function} crashed", parse_scope({"name": function}),
                            parse_action(f"avoid_call({function})"))


def test_twins_share_the_canonical_signature_and_a_word_of_the_name() -> None:
    with type_table.using(type_table.read_types(render_types(TYPES))):
        assert twins_of("qq_parse_document", API) == ["qq_html_parse_document", "qq_parse_entity"]
        assert twins_of("qq_convert_number", API) == ["qq_convert_string"]
        assert twins_of("qq_reset", API) == []  # same signature, no word in common
        assert twins_of("qq_check", API) == []  # qq_scan: same signature, no word in common
    # without the Types section a typedef name is not known to hide a pointer: no family by shape
    assert twins_of("qq_parse_document", API) == []


def test_the_lesson_leaves_out_the_call_and_its_twins_but_never_the_target() -> None:
    with type_table.using(type_table.read_types(render_types(TYPES))):
        avoided = avoided_calls([lesson("qq_parse_document")], BY["qq_parse_chunk"], API)
        assert sorted(avoided) == ["qq_html_parse_document", "qq_parse_document", "qq_parse_entity"]
        on_twin = avoided_calls([lesson("qq_parse_document")], BY["qq_parse_entity"], API)
        assert "qq_parse_entity" not in on_twin and "qq_parse_document" in on_twin
        notes = avoid_notes(["qq_parse_document", "qq_parse_entity"], avoided, "add")
    assert notes == [
        "applied [MEM-0000beef] avoid_call(qq_parse_document): did not add qq_parse_document, "
        "which crashed another harness of this library",
        "applied [MEM-0000beef] avoid_call(qq_parse_document): did not add qq_parse_entity, "
        "a sibling of qq_parse_document (its signature or its object, named alike); "
        "qq_parse_document crashed another harness of this library"]


def test_within_a_run_a_failed_direction_makes_its_twins_tabu_too() -> None:
    from agent_graph.memory.local_memory_render import render_local_memory
    from agents.offline.prompt_reader import read_prompt
    from agents.offline.roles import _tabu

    memory = {"attempted_directions": [{"direction": "call qq_parse_document on a new qq_ctx",
                                        "outcome": "Failed", "source_ref": "v2",
                                        "evidence": "did not run cleanly (leak)"}]}
    facts = read_prompt("ROLE: enhancer", "## Attempted directions\n" + render_local_memory(memory))
    with type_table.using(type_table.read_types(render_types(TYPES))):
        assert _tabu(facts, API) == ["qq_html_parse_document", "qq_parse_document", "qq_parse_entity"]
    memory["attempted_directions"][0]["outcome"] = "Partial"
    facts = read_prompt("ROLE: enhancer", "## Attempted directions\n" + render_local_memory(memory))
    with type_table.using(type_table.read_types(render_types(TYPES))):
        assert _tabu(facts, API) == []
