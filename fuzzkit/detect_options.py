"""When a configure step stops on something missing: the option the build lists for it.

A distribution's source may leave out a component the upstream tree bundles (configure: "the
bundled libfoo sources are not present"), or the machine may lack an optional dependency
(CMake: "Could NOT find Foo"). The build usually has a switch for it: ``./configure --help``
lists ``--with-external-foo``, ``--with-system-foo``, ``--without-foo`` or ``--disable-foo``;
the CMake cache (what ``cmake -LH`` prints) and the ``option()`` declarations of the
``CMakeLists.txt`` files hold ``USE_SYSTEM_FOO`` or ``WITH_FOO``. The words of the missing
component, read from the error, are matched against the words of the option names; no
library is named here. One option is chosen: one taking the component from the system first
when the bundled copy is what is missing, one turning the part off first otherwise.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from fuzzkit.detect_tree import read_text
from fuzzkit.errors import ToolchainError

# A failure that is about something absent (not a compiler test that failed, a syntax error...).
_ABSENT = re.compile(r"not (?:be )?(?:present|found|available|installed)|missing|could not find|cannot find|"
                     r"can't find|no such file|no package|were not met|does(?: not|n't) exist|"
                     r"(?:is|are) (?:required|needed)", re.I)
# What stopped the step: CMake's "Could NOT find" of a required package comes inside an error
# block; on its own it is a warning about an optional one.
_CAUSE = re.compile(r"\berror\b", re.I)
_SYSTEM = frozenset("system external extern shared installed sys host".split())
_BUNDLED = frozenset("bundled included internal builtin embedded vendored vendor own private local".split())
_ACTION = frozenset("with without enable disable use build have support want prefer force no skip".split())
# Words that say what kind of thing is missing or what is wrong with it, never which thing it is.
_GENERIC = _SYSTEM | _BUNDLED | _ACTION | frozenset(
    """a an the of for in on at to by from and or is are be been was were it its this that not
    error errors warning configure cmake make present found find missing required require requires
    needed need cannot can could does exist exists available installed install please using
    file files source sources src directory directories dir folder tree copy path package packages
    library libraries lib libs module modules header headers dev development version option options
    third party thirdparty submodule submodules git checkout call stack line see log""".split())
_OPTION = re.compile(r"^\s*(?:cmake_dependent_)?option\s*\(\s*(\w+)", re.M | re.I)  # CMake's declarations
_DRIVE = {"with": True, "enable": True, "without": False, "disable": False}
_FLIP = {"with": "without", "without": "with", "enable": "disable", "disable": "enable"}


@dataclass(frozen=True)
class Retry:
    """The one option to try after a configure step stopped on something missing."""

    option: str
    missing: str  # the words of the missing component, as the error gave them
    cause: str  # the error line
    source: str  # where the option is listed ("./configure --help", "the CMake cache")


@dataclass(frozen=True)
class Candidate:
    """An option that may remedy a missing component, spelled the way that would."""

    arg: str
    subject: frozenset[str]
    from_system: bool  # takes the component from the system (else turns the part off)
    as_listed: bool  # the help lists this very spelling (not its other polarity)
    order: int


def _norm(word: str) -> str:
    """One spelling per name: ``libfoo`` and ``foo`` are one component."""
    return word[3:] if word.startswith("lib") and len(word) > 4 else word


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9+]+", text.lower()) if w]


def _subject(words: Collection[str]) -> frozenset[str]:
    return frozenset(_norm(w) for w in words if w not in _GENERIC and not w.isdigit())


def _cause(output: str) -> str | None:
    """The error line of a failure about something absent (CMake's message follows its header)."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if _CAUSE.search(line):
            text = line.strip()
            if text.startswith("CMake Error"):  # the message: the indented lines below `at FILE:LINE`
                block = itertools.takewhile(lambda ln: ln[:1].isspace() and ln.strip(), lines[i + 1:i + 4])
                text = " ".join(ln.strip() for ln in block) or text
            if _ABSENT.search(text):
                return re.sub(r"\s+", " ", text)
    return None


def _choose(candidates: list[Candidate], cause: str, given: Collection[str]) -> Candidate | None:
    """The candidate naming most of the missing component; its kind decides ties (module docstring)."""
    words = _words(cause)
    missing = _subject(words)
    bundled_missing = bool(set(words) & (_BUNDLED | {"present"}))
    named = {c.arg for c in candidates if c.arg in cause}  # an error that names its own remedy
    best: tuple[tuple[int, ...], Candidate] | None = None
    for c in candidates:
        hit = c.subject & missing
        if c.arg in given or not hit:
            continue
        key = (c.arg not in named, hit != c.subject, c.from_system != bundled_missing, not c.as_listed,
               -len(hit), len(c.subject - hit), c.order)
        best = min(best, (key, c), key=lambda b: b[0]) if best else (key, c)
    return best[1] if best else None


def autoconf_candidates(help_text: str) -> list[Candidate]:
    """Each ``--with/--without/--enable/--disable`` option ``--help`` lists, turned the useful way."""
    found: dict[str, Candidate] = {}
    pattern = r"(?<![\w-])--(with|without|enable|disable)-([a-z0-9][a-z0-9_+.-]*[a-z0-9+])"
    for i, m in enumerate(re.finditer(pattern, help_text, re.I)):
        verb, rest = m[1].lower(), m[2].lower()
        words = set(_words(rest))
        if not _subject(words):
            continue  # names no component (`--enable-shared`)
        from_system = bool(words & (_SYSTEM | _BUNDLED))
        want = bool(words & _SYSTEM)  # on for the system's copy; off for the bundled one or the part
        spelled = verb if _DRIVE[verb] == want else _FLIP[verb]
        candidate = Candidate(f"--{spelled}-{rest}", _subject(words), from_system, spelled == verb, i)
        if candidate.arg not in found or candidate.as_listed:
            found[candidate.arg] = candidate
    return list(found.values())


def cmake_candidates(cache_text: str, declared: list[str]) -> list[Candidate]:
    """Boolean cache entries and declared ``option()`` names, each set the useful way.

    An entry already holding that value is no candidate: setting it again changes nothing.
    """
    current = dict(re.findall(r"^(\w+):BOOL=(.*)$", cache_text, re.M))
    found: list[Candidate] = []
    for i, name in enumerate(dict.fromkeys([*current, *declared])):
        words = set(_words(name))
        if name.startswith("CMAKE_") or not _subject(words):
            continue  # CMake's own settings, or a switch naming no component (BUILD_SHARED_LIBS)
        negated = bool(words & {"without", "disable", "no", "skip"})
        want = bool(words & _SYSTEM) != negated
        value = "ON" if want else "OFF"
        same = {"ON", "TRUE", "1", "YES"} if want else {"OFF", "FALSE", "0", "NO"}
        if current.get(name, "").upper() in same:
            continue
        from_system = bool(words & (_SYSTEM | _BUNDLED))
        found.append(Candidate(f"-D{name}={value}", _subject(words), from_system, True, i))
    return found


def autoconf_retry(output: str, help_text: str, given: Collection[str]) -> Retry | None:
    """The option to run ``./configure`` with once more, after it failed printing ``output``."""
    cause = _cause(output)
    chosen = _choose(autoconf_candidates(help_text), cause, given) if cause else None
    return Retry(chosen.arg, _shown(chosen, cause), cause, "./configure --help") if chosen and cause else None


def cmake_retry(output: str, tree: Path, build: Path, given: Collection[str]) -> Retry | None:
    """The ``-DNAME=VALUE`` to run CMake's configure with once more, after it failed printing ``output``."""
    cause = _cause(output)
    if not cause:
        return None
    declared = [m for f in sorted(tree.rglob("CMakeLists.txt")) + sorted(tree.rglob("*.cmake"))
                if not f.is_relative_to(build) for m in _OPTION.findall(read_text(f))]
    given_names = {re.sub(r"^-D(\w+).*", r"\1", g) for g in given}
    candidates = [c for c in cmake_candidates(read_text(build / "CMakeCache.txt"), declared)
                  if c.arg.partition("=")[0][2:] not in given_names]
    chosen = _choose(candidates, cause, given)
    return Retry(chosen.arg, _shown(chosen, cause), cause, "the CMake cache and options") if chosen else None


def _shown(chosen: Candidate, cause: str) -> str:
    """The error's own words for the component the option names (``libfoo``)."""
    return " ".join(dict.fromkeys(w for w in _words(cause) if _norm(w) in chosen.subject)) or cause


def with_retry(step: Callable[[list[str], bool], object], log: Path, what: str,
               retry_for: Callable[[str], Retry | None]) -> Retry | None:
    """Run ``step([], False)``; when it stops on something missing, ``step([option], True)`` once.

    ``step(extra, append)`` runs the configure step with ``extra`` options, appending its output
    to ``log`` when ``append``. The log says which option was tried and why, and so does the
    error when the second run fails too.

    Returns:
        The retry that made the step pass, or None when the first run passed.

    Raises:
        ToolchainError: The step failed, and no option names what is missing or it failed again.
    """
    try:
        step([], False)
        return None
    except ToolchainError:
        retry = retry_for(read_text(log))
        if retry is None:
            raise
    with log.open("a") as out:
        out.write(f"\n*** logicfuzz: {what} stopped on a missing {retry.missing} ({retry.cause});\n"
                  f"*** trying once more with {retry.option}, which {retry.source} lists for it\n\n")
    try:
        step([retry.option], True)
    except ToolchainError as again:
        tail = again.message.partition("\n")[2]
        raise ToolchainError(f"{what} stopped on a missing {retry.missing} ({retry.cause}); tried again with "
                             f"{retry.option} (which {retry.source} lists for it), which failed too:\n{tail}",
                             ) from again
    return retry
