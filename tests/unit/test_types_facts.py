"""The ``## Types`` section's facts travel as data: rendered from models, read back with them.

:meth:`fuzzkit.header_facts.HeaderFacts.render` writes short lines a person reads and fenced
facts blocks (:mod:`fuzzkit.facts_block`); :func:`agents.offline.type_table.read_types` reads
the blocks with the same models. Rewording a line changes nothing the engine reads; a block
that does not fit its model is a :class:`~fuzzkit.facts_block.FactsBlockError`.
"""

from __future__ import annotations

import pytest

from agents.offline.type_table import TypeTable, read_types
from fuzzkit.facts_block import FactsBlockError, read_facts
from fuzzkit.header_facts import (
    CONSTANTS_KIND,
    CONSTANTS_LEGEND,
    DECLARATIONS_KIND,
    DECLARATIONS_LEGEND,
    MAX_FIELDS,
    NOTES_KIND,
    ConstantFacts,
    DeclarationFacts,
    Enum,
    FunctionNotes,
    HeaderFacts,
    Macro,
    Record,
    Typedef,
)
from fuzzkit.header_wrappers import Wrapper

SIZE = "sizeof(vx_config)"
FACTS = HeaderFacts(
    instances=[("vx_utf8", "const vx_codec"), ("vx_default", "vx_config *")],
    retains=["vx_set_name"], consumes=["vx_list_push"], adopts=["vx_take_text"],
    inside_only=["vx_depth"], internal=["vx_swap"], borrows=["vx_error"],
    optional={"vx_open": ["path", "mode"]}, utf8={"vx_open": ["path"]},
    wrappers=[Wrapper("vx_init_internal", ("cfg", "VX_ABI", SIZE), "vx_init", ("cfg",)),
              Wrapper("vx_init_internal", ("cfg", "level", SIZE), "vx_preset", ("cfg", "level"))],
    returns={"vx_open": "Returns 0 on success: a 'quoted' text, with # and - and: colons.",
             "vx_close": "-1 on error"},
)


def _notes_of(table: TypeTable) -> tuple[object, ...]:
    return (table.instances, table.retains, table.consumes, table.adopts, table.inside_only,
            table.borrows, table.optional, table.returns, table.fixed_args, table.arg_names)


def test_the_notes_block_round_trips_to_the_same_models() -> None:
    text = FACTS.render()
    assert "```yaml\n# facts: notes v1\n" in text
    assert read_facts(text, NOTES_KIND, FunctionNotes) == FACTS.notes()
    assert HeaderFacts.from_dict(FACTS.to_dict()).notes() == FACTS.notes()


def test_the_engine_reads_the_notes_from_the_block() -> None:
    table = read_types(FACTS.render())
    assert table.instances == [("vx_utf8", "const vx_codec"), ("vx_default", "vx_config *")]
    assert (table.retains, table.consumes) == ({"vx_set_name"}, {"vx_list_push"})
    assert table.adopts == {"vx_take_text"}
    assert table.inside_only == {"vx_depth", "vx_swap"} and table.borrows == {"vx_error"}
    assert table.optional == {"vx_open": {"path", "mode"}}
    assert table.returns == FACTS.returns
    assert table.fixed_args == {"vx_init_internal": {2: SIZE}}
    assert table.arg_names == {"vx_init_internal": {0: "cfg", 1: "level"}}


def test_rewording_or_dropping_the_human_lines_changes_nothing_the_engine_reads() -> None:
    text = FACTS.render()
    human = [x for x in text.splitlines() if x.startswith(("- retains:", "- returns:", "Documented"))]
    assert len(human) == 3
    reworded = text
    for line in human:
        reworded = reworded.replace(line, "- vx_open: these words say something else entirely")
    dropped = "\n".join(x for x in text.splitlines() if x not in human)
    assert _notes_of(read_types(reworded)) == _notes_of(read_types(dropped)) == _notes_of(read_types(text))


def test_sentences_about_documented_behaviour_are_not_read_as_facts() -> None:
    """The old bullets (``- f keeps its pointer arguments``, ``- f: text``) are prose now."""
    prose = ("- vx_set_name keeps its pointer arguments (documentation)\n- vx_open accepts NULL for path\n"
             "Documented return values:\n- vx_open: 0 on success\n- extern const vx_codec vx_utf8;\n"
             "- vx_init_internal(cfg, VX_ABI) in vx_init(cfg)")
    assert _notes_of(read_types(prose)) == _notes_of(TypeTable())


@pytest.mark.parametrize("body, says", [
    ("retains: vx_set_name: [x]", "mapping values are not allowed"),
    ("retains: {vx_set_name: 1}", "retains"),
    ("keeps: [vx_set_name]", "keeps"),
    ("wrappers:\n- {function: f, caller: g}", "args"),
])
def test_a_malformed_notes_block_is_an_error_naming_what_is_wrong(body: str, says: str) -> None:
    text = f"Documented behaviour of functions, as data:\n```yaml\n# facts: notes v1\n{body}\n```"
    with pytest.raises(FactsBlockError, match="notes facts block") as err:
        read_types(text)
    assert says in str(err.value)


CONSTANTS = HeaderFacts(
    enums=[Enum("vx_mode", (("VX_FAST", 0), ("VX_SLOW", 1)), False), Enum("vx_ret", (("VX_OK", 0),
                                                                          ("NULL", -1)), True)],
    macros=[Macro("VX_READ", 1, 3, ("vx_open", "vx_reopen")), Macro("VX_WAIT", 2, 3, ("vx_open", "vx_reopen"),
                                                                   not_for=("vx_reopen",)),
            Macro("VX_GREEDY", 4, 3, ("vx_open", "vx_reopen"), only=("vx_open",)), Macro("VX_MAX", 9, 7)],
    typedefs=[Typedef("vx_mode_t", "enum vx_mode", "enum vx_mode")],
)


def _constants_of(table: TypeTable) -> tuple[object, ...]:
    return (table.constants, table.groups, table.enum_members, table.flag_scope, table.flag_only,
            table.flag_not_for)


def test_the_constants_block_round_trips_and_the_engine_reads_it() -> None:
    text = CONSTANTS.render()
    assert "```yaml\n# facts: constants v1\n" in text and "#define VX_" not in text
    assert read_facts(text, CONSTANTS_KIND, ConstantFacts) == CONSTANTS.constants()
    assert HeaderFacts.from_dict(CONSTANTS.to_dict()).constants() == CONSTANTS.constants()
    table = read_types(text)
    assert table.constants == {"VX_FAST": 0, "VX_SLOW": 1, "VX_OK": 0, "NULL": -1, "VX_READ": 1, "VX_WAIT": 2,
                               "VX_GREEDY": 4, "VX_MAX": 9}
    assert table.groups == [["VX_FAST", "VX_SLOW"], ["VX_OK", "NULL"], ["VX_READ", "VX_WAIT", "VX_GREEDY"],
                            ["VX_MAX"]]
    assert table.enum_members == {"vx_mode": ["VX_FAST", "VX_SLOW"], "vx_mode_t": ["VX_FAST", "VX_SLOW"],
                                  "vx_ret": ["VX_OK", "NULL"]}
    assert table.flag_scope == dict.fromkeys(["VX_READ", "VX_WAIT", "VX_GREEDY"],
                                             frozenset({"vx_open", "vx_reopen"}))
    assert table.flag_only == {"VX_GREEDY": frozenset({"vx_open"})}
    assert table.flag_not_for == {"VX_WAIT": frozenset({"vx_reopen"})}


def test_rewording_the_constants_legend_changes_nothing_the_engine_reads() -> None:
    text = CONSTANTS.render()
    reworded = text.replace(CONSTANTS_LEGEND, "enum vx_other { VX_NOT_A_FACT = 5 };\n#define VX_NOR_THIS 3")
    assert reworded != text
    assert _constants_of(read_types(reworded)) == _constants_of(read_types(text))


@pytest.mark.parametrize("body, says", [
    ("enums:\n- {name: vx_mode, constants: {VX_FAST: fast}}", "constants.VX_FAST"),
    ("macros:\n- {constants: {VX_READ: 1}, scope: vx_open}", "scope"),
    ("defines: {VX_READ: 1}", "defines"),
])
def test_a_malformed_constants_block_is_an_error_naming_what_is_wrong(body: str, says: str) -> None:
    with pytest.raises(FactsBlockError, match="constants facts block") as err:
        read_types(f"```yaml\n# facts: constants v1\n{body}\n```")
    assert says in str(err.value)


DECLARATIONS = HeaderFacts(
    typedefs=[Typedef("vx_doc_p", "vx_doc *", "struct vx_doc *"),
              Typedef("vx_doc", "struct vx_doc", "struct vx_doc"),
              Typedef("vx_cb", "int (*)(void *, int)", "int (*)(void *, int)"),
              Typedef("vx_fn", "void *(size_t)", "void *(size_t)"),
              Typedef("vx_opts", "struct vx_opts", "struct vx_opts")],
    records=[Record("struct", "vx_doc", (), (("name", "char *"), ("level", "int"), ("tags", "char[8]"),
                                             ("free_fn", "void (*)(void *)"), ("", "union {...}")),
                    False, (("level", 0, 9),)),
             Record("struct", "vx_state", (), (), True),
             Record("struct", "", ("vx_opts",), (("flags", "unsigned int"),), False)],
)


def _declarations_of(table: TypeTable) -> tuple[object, ...]:
    return table.typedefs, table.canonical, table.records


def test_the_types_block_round_trips_and_the_engine_reads_it() -> None:
    text = DECLARATIONS.render()
    assert "```yaml\n# facts: types v1\n" in text and "```c" not in text
    assert read_facts(text, DECLARATIONS_KIND, DeclarationFacts) == DECLARATIONS.declarations()
    assert HeaderFacts.from_dict(DECLARATIONS.to_dict()).declarations() == DECLARATIONS.declarations()
    table = read_types(text)
    assert table.typedefs["vx_doc_p"] == "vx_doc *" and table.canonical["vx_doc_p"] == "struct vx_doc *"
    assert table.canonical["vx_cb"] == "int (*)(void *, int)"
    assert table.canonical["vx_fn"] == "void * (*)(size_t)"  # a function type is used through pointers
    doc = table.record("vx_doc")
    assert doc is not None and table.record("struct vx_doc") is doc
    assert doc.fields == (("name", "char *"), ("level", "int"), ("tags", "char"))
    assert doc.functions == ("free_fn",) and doc.ranges == (("level", 0, 9),)
    state = table.record("struct vx_state")
    assert state is not None and state.opaque and not state.fields
    assert table.typedefs["vx_opts"] == "struct {...}" and table.record("vx_opts").fields == (
        ("flags", "unsigned int"),)


def test_only_the_first_fields_travel_and_the_rest_are_counted() -> None:
    fields = tuple((f"f{i}", "int") for i in range(25))
    many = HeaderFacts(records=[Record("struct", "big", (), fields, False)])
    record = many.declarations().records[0]
    assert len(record.fields) == MAX_FIELDS and record.more_fields == 25 - MAX_FIELDS
    assert len(read_types(many.render()).record("big").fields) == MAX_FIELDS


def test_rewording_the_types_legend_or_adding_c_lines_changes_nothing_the_engine_reads() -> None:
    text = DECLARATIONS.render()
    c_lines = "```c\ntypedef int vx_other;\nstruct vx_more { int a; };\n```"
    reworded = text.replace(DECLARATIONS_LEGEND, c_lines)
    assert reworded != text
    assert _declarations_of(read_types(reworded)) == _declarations_of(read_types(text))


@pytest.mark.parametrize("body, says", [
    ("typedefs:\n- [vx_doc]", "typedefs.0"),
    ("records:\n- {tag: vx_doc, fields: [a, int]}", "fields"),
    ("records:\n- {kind: struct, tag: vx_doc, ranges: {a: [1]}}", "ranges.a"),
])
def test_a_malformed_types_block_is_an_error_naming_what_is_wrong(body: str, says: str) -> None:
    with pytest.raises(FactsBlockError, match="types facts block") as err:
        read_types(f"```yaml\n# facts: types v1\n{body}\n```")
    assert says in str(err.value)
