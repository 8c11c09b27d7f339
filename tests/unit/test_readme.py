"""The README's quick start stays true: two commands, and CI runs the second one verbatim."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def quick_start_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_quick_start_is_two_commands() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    assert "logicfuzz run benchmarks/cjson.yaml" in commands[0]
    assert (REPO / "benchmarks" / "cjson.yaml").is_file()


def test_ci_runs_the_readme_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == quick_start_commands()[1]


_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def broken_links(doc: Path) -> list[str]:
    """Relative links of ``doc`` whose file (or heading anchor) does not exist."""
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto: ...
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(f"{doc.name}: {target} (no such file)")
        elif anchor and dest.is_file() and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{doc.name}: {target} (no such heading)")
    return broken


def test_every_relative_link_in_the_readme_and_docs_resolves() -> None:
    docs = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    assert len(docs) > 8
    assert [b for d in docs for b in broken_links(d)] == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# A heading\n")
    doc = tmp_path / "doc.md"
    doc.write_text("[ok](there.md#a-heading) [web](https://example.org) [gone](missing.md) "
                   "[bad](there.md#no-heading)\n```\n[in code](ignored.md)\n```\n")
    assert broken_links(doc) == ["doc.md: missing.md (no such file)",
                                 "doc.md: there.md#no-heading (no such heading)"]


def test_the_readme_stays_short() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= 300
