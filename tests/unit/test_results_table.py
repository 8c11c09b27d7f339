"""scripts/results_table.py: the README's results tables are copies of the docs/results/ files."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.results_table import ResultsError, default_files, render, stale_blocks

RESULT = """# Toy bench

- command: `python bench/toy.py lib.yaml`
- commit: abc1234
- machine: x86_64, 2 cores

| library | ratio |
|---|---|
| toy | 1.00x |

| second | table |
|---|---|
| b | 2 |
"""


def test_every_results_block_of_the_readme_and_docs_matches_its_file() -> None:
    assert [(doc.name, stale_blocks(doc)) for doc in default_files() if stale_blocks(doc)] == []
    readme = default_files()[0].read_text()
    assert readme.count("<!-- results:") >= 4


def test_a_block_is_filled_from_its_file_and_a_hand_edit_is_found(tmp_path: Path) -> None:
    results = tmp_path / "docs" / "results"
    results.mkdir(parents=True)
    (results / "toy.md").write_text(RESULT)
    doc = tmp_path / "README.md"
    doc.write_text("text\n<!-- results:toy -->\nold\n<!-- /results:toy -->\n"
                   "<!-- results:toy#2 -->\n<!-- /results:toy#2 -->\n")
    assert stale_blocks(doc, results) == ["toy", "toy#2"]
    doc.write_text(render(doc, results))
    text = doc.read_text()
    assert "| toy | 1.00x |\n\nFrom [docs/results/toy.md](docs/results/toy.md): command " \
           "`python bench/toy.py lib.yaml`; commit abc1234.\n<!-- /results:toy -->" in text
    assert "| b | 2 |" in text and stale_blocks(doc, results) == []
    doc.write_text(text.replace("1.00x", "1.50x"))
    assert stale_blocks(doc, results) == ["toy"]


def test_a_block_naming_no_file_or_no_such_table_says_what_to_do(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "toy.md").write_text(RESULT)
    doc = tmp_path / "README.md"
    doc.write_text("<!-- results:gone -->\n<!-- /results:gone -->\n")
    with pytest.raises(ResultsError, match="docs/results/gone.md, which does not exist; write it with"):
        render(doc, results)
    doc.write_text("<!-- results:toy#3 -->\n<!-- /results:toy#3 -->\n")
    with pytest.raises(ResultsError, match="has 2 table"):
        render(doc, results)
