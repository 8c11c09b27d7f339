r"""One vocabulary: no word list outside ``fuzzkit/vocabulary.yaml``.

A literal in the product's Python (a tuple, list, set or dict key, a string split into words, a
regular expression's alternation) that holds two words of one vocabulary group (two release
verbs, two C statement keywords, two C library allocators...) is a list of its own that the next
fix to the vocabulary would miss: the test names each one and fails. Docstrings and comments are
prose, not lists, and are not read; a string is read as a list only when it is split into words
or is a regular expression's alternation (``free|destroy``). C's own words are C's grammar in a
regular expression (``(struct|union)\s+``): they count in collections only, and type spellings
(``type``, ``sign``: ``"unsigned char"``, a role kind ``"int"``) not at all: tables of C types
are spellings, not keywords.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from fuzzkit import vocabulary

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fuzzkit", "agents", "nodes", "agent_graph", "long_term_memory", "logicfuzz")
LOADER = ROOT / "fuzzkit" / "vocabulary.py"
# Literals that hold two words of one group on purpose, each with its reason.
EXEMPT = {
    ("fuzzkit/usage_lexical.py", "c.statement", ("if", "while")): "the statements a condition follows",
    ("agents/offline/c_helpers.py", "libc.memory", ("strndup", "tmpfile")): "names of the harness's helpers",
    ("fuzzkit/detect_options.py", "verbs.make", ("copy", "make")): "English words of a build's messages",
    # Searched inside a name, where close_session's `end` would match `append` and `send`.
    ("agents/offline/synth_arche.py", "verbs.close_session", ("close", "flush")): "substrings",
    ("fuzzkit/select_functions.py", "verbs.release", ("close", "end", "free")): "suffixes (`fd_close`)",
    ("fuzzkit/select_functions.py", "verbs.close_session", ("close", "end")): "suffixes (`fd_close`)",
    ("fuzzkit/select_functions.py", "verbs.release", ("close", "free")): "suffixes (`xfree`)",
}
# A word one side of an alternation's bar: `(free|destroy)`, `\b(?:new|create)_`, `^END|EOF$`.
_ALTERNATIVE = re.compile(r"(?:(?<=[|(:^])|(?<=^))([A-Za-z_]\w*)(?=[|)$]|$)")


def groups() -> dict[str, frozenset[str]]:
    """The groups a literal must not copy: verb kinds, C's keyword groups, the C library's memory functions.

    The vocabulary's ``patterns`` (words a name is searched for, nouns among them) are built from
    these where they can and are not groups of their own here.
    """
    found = {f"verbs.{k}": vocabulary.words_of(k) for k in vocabulary.KINDS}
    found |= {f"c.{g}": vocabulary.c_words(g) for g in vocabulary.C_GROUPS if g not in ("type", "sign")}
    released_by = vocabulary.libc_released_by()
    found["libc.memory"] = frozenset(released_by) | frozenset(released_by.values())
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of string statements: docstrings and bare strings used as comments."""
    return {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}


def _words_of_literal(node: ast.AST, prose: set[int], split: set[int]) -> tuple[list[str], bool]:
    """The words a literal lists (nothing when it is no list), and whether it is a regular expression."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)], False
    if isinstance(node, ast.Dict):
        return [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)], False
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in prose:
        return [], False
    if id(node) in split:
        return node.value.split(), False
    return [m.group(1) for m in _ALTERNATIVE.finditer(node.value)
            if "|" in node.value[max(m.start() - 1, 0):m.end() + 1]], True


def _split_receivers(tree: ast.AST) -> set[int]:
    """The ids of string literals split into words (``"a b c".split()``)."""
    return {id(n.func.value) for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == "split" and not n.args
            and isinstance(n.func.value, ast.Constant)}


Exemption = tuple[str, str, tuple[str, ...]]


def word_lists(source: str, path: str = "<source>", used: set[Exemption] | None = None) -> list[str]:
    """Each literal of ``source`` holding two words of one group, as ``path:line: group: words``.

    ``used`` collects the exemptions that matched.
    """
    tree = ast.parse(source)
    prose, split, vocab = _docstrings(tree), _split_receivers(tree), groups()
    out = []
    for node in ast.walk(tree):
        words, regex = _words_of_literal(node, prose, split)
        for name, members in vocab.items():
            hit = tuple(sorted({w for w in words if w in members}))
            if len(hit) < 2 or regex and name.startswith("c."):
                continue
            if (path, name, hit) in EXEMPT:
                (used if used is not None else set()).add((path, name, hit))
            else:
                out.append(f"{path}:{node.lineno}: {name}: {', '.join(hit)}")  # type: ignore[attr-defined]
    return out


def _sources() -> list[tuple[str, str]]:
    return [(str(path.relative_to(ROOT)), path.read_text()) for package in PACKAGES
            for path in sorted((ROOT / package).rglob("*.py")) if path != LOADER]


def test_no_word_list_outside_the_vocabulary() -> None:
    found: list[str] = []
    used: set[Exemption] = set()
    for path, text in _sources():
        found += word_lists(text, path, used)
    advice = "word lists of their own (ask fuzzkit.vocabulary; add words to fuzzkit/vocabulary.yaml):"
    assert not found, "\n".join([advice, *found])
    assert used == set(EXEMPT), f"exemptions no literal needs any more: {set(EXEMPT) - used}"


@pytest.mark.parametrize(
    "planted",
    [
        'VERBS = ("free", "destroy")',
        'VERBS = {"create", "new"}',
        'NAME = re.compile(r"\\w*(?:free|destroy)\\w*")',
        'WORDS = "if while for".split()',
        'ALLOC = {"malloc": 1, "calloc": 2}',
        'def f(x):\n    return x in ["parse", "decode"]',
    ],
)
def test_a_planted_word_list_is_found(planted: str) -> None:
    assert word_lists(planted)


@pytest.mark.parametrize(
    "prose",
    [
        'def f():\n    """Free what you create, then destroy the parser and free the buffer."""',
        'MESSAGE = "the harness must free or destroy what it makes"',
        'PAIR = ("init", "destroy")',  # two groups: a lifecycle, not a list of one kind
        'TYPE = "unsigned char"',
        'KIND = r.kind in ("int", "bool")',
        'TAGGED = re.compile(r"\\b(struct|union)\\s+(\\w+)")',
    ],
)
def test_prose_and_pairs_of_kinds_are_no_word_list(prose: str) -> None:
    assert not word_lists(prose)


def test_the_vocabulary_holds_what_every_layer_asks_for() -> None:
    assert {"free", "destroy", "end", "close"} <= vocabulary.words_of("release")
    assert vocabulary.ordered("release")[0] == "delete"
    assert {"if", "sizeof"} <= vocabulary.c_words("statement")
    assert vocabulary.libc_released_by()["strdup"] == "free"
    assert vocabulary.libc_headers()["memcpy"] == "<string.h>"
    assert vocabulary.has_verb("acmeFreeDoc", "release")
    assert not vocabulary.has_verb("acmeDocAppend", "release")
