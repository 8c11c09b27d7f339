"""The header's release functions travel in the ``## Types`` section as data, not as sentences.

:meth:`fuzzkit.header_facts.HeaderFacts.render` writes a short line a person reads and a
``# facts: releasers v1`` block; :func:`agents.offline.type_table.read_types` reads the block
back with the same model, so the line's wording is free and a broken block is an error.
"""

from __future__ import annotations

import json

import pytest

from agents.offline.type_table import read_types
from fuzzkit.facts_block import FactsBlockError, render_facts
from fuzzkit.header_facts import NOTES_KIND, DocumentedReturn, FunctionNotes, HeaderFacts, Releaser

FACTS = HeaderFacts(releasers=[
    Releaser(function="db_close", releases="db *", evidence="parameter type", heap=True),
    Releaser(function="db_free", releases="what db_exec allocates", evidence="by documentation"),
    Releaser(function="db_close", releases="what db_open allocates", evidence="by documentation"),
], returns={"db_open": "0 on success"})


def _read(text: str) -> tuple[list[tuple[str, str]], set[str], dict[str, str]]:
    table = read_types(text)
    return table.releasers, table.frees_heap, table.returns


def test_the_section_names_each_releaser_once_and_carries_the_rest_as_data() -> None:
    text = FACTS.render()
    assert "Release functions: db_close, db_free (" in text
    assert "```yaml\n# facts: releasers v1\n" in text
    releasers = [("db_close", "db *"), ("db_free", "what db_exec allocates"),
                 ("db_close", "what db_open allocates")]
    assert _read(text) == (releasers, {"db_close"}, {"db_open": "0 on success"})


def test_rewording_or_dropping_the_human_line_changes_nothing_the_engine_reads() -> None:
    text = FACTS.render()
    line = next(x for x in text.splitlines() if x.startswith("Release functions:"))
    reworded = text.replace(line, "Functions that give memory back (see below):")
    assert reworded != text
    assert _read(reworded) == _read(text) == _read(text.replace(line + "\n", ""))


def test_sentences_about_releasers_are_not_read_as_facts() -> None:
    """The old bullets (``- f releases T (why; the library allocates it)``) are prose now."""
    prose = "Release functions:\n- db_close releases db * (parameter type; the library allocates it)\n"
    assert _read(prose) == ([], set(), {})


def test_lines_inside_the_block_are_not_read_as_notes() -> None:
    """Block-style YAML (``- function: db_close``) looks like a return note (``- f: text``)."""
    text = ("```yaml\n# facts: releasers v1\nreleasers:\n- function: db_close\n  releases: db *\n"
            "  evidence: parameter type\n  heap: true\n```\n"
            "Documented return values:\n- db_open: 0 on success\n")
    returns = [DocumentedReturn(function="db_open", text="0 on success")]
    text += render_facts(NOTES_KIND, FunctionNotes(returns=returns))
    assert _read(text) == ([("db_close", "db *")], {"db_close"}, {"db_open": "0 on success"})


@pytest.mark.parametrize(("entry", "wrong"), [
    ("{function: db_close, evidence: parameter type}", "releases"),  # a field missing
    ("{function: db_close, releases: db *, evidence: parameter type, heap: maybe}", "heap"),
    ("{function: db_close, releases: db *, evidence: parameter type, frees: all}", "frees"),  # unknown
])
def test_a_malformed_releasers_block_is_an_error_naming_block_and_field(entry: str, wrong: str) -> None:
    text = f"```yaml\n# facts: releasers v1\nreleasers:\n- {entry}\n```\n"
    with pytest.raises(FactsBlockError, match="the releasers facts block does not fit ReleaserFacts") as err:
        read_types(text)
    assert wrong in str(err.value)


def test_a_releasers_block_that_is_no_yaml_is_an_error() -> None:
    with pytest.raises(FactsBlockError, match="releasers facts block"):
        read_types("```yaml\n# facts: releasers v1\nreleasers: [ {function: x\n```\n")


def test_the_heap_flag_survives_the_state_round_trip() -> None:
    data = json.loads(json.dumps(FACTS.to_dict()))
    assert data["releasers"][0] == {"function": "db_close", "releases": "db *", "evidence": "parameter type",
                                    "heap": True}
    assert HeaderFacts.from_dict(data).releasers == FACTS.releasers
