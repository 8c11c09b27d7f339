"""The toolchain seam: everything the graph's nodes ask of clang, libFuzzer and llvm-cov.

Nodes never call the build, run and coverage functions directly; they take a
:class:`Toolchain` from the run's context (``Context.toolchain``, a registered name). The
default, ``fuzzkit``, is the real one. Tests register a recorded toolchain under another name so
the whole graph (routing, memory, reducers, guards) runs in the fast tier without a compiler.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from fuzzkit.api import FunctionDecl
from fuzzkit.coverage import CoverageReport, measure_coverage
from fuzzkit.detect import prepare_library
from fuzzkit.dictionary import VERSION as DICTIONARY_VERSION
from fuzzkit.dictionary import library_dictionary
from fuzzkit.exports import defined_data, defined_functions, missing_functions
from fuzzkit.harness import HarnessBuild, build_harness
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.header_facts_collect import collect_facts
from fuzzkit.headers import inline_functions, parse_headers
from fuzzkit.library import LibraryBuild
from fuzzkit.param_docs import param_facts
from fuzzkit.runner import FuzzRun, run_fuzzer
from fuzzkit.seeds import seed_corpus
from fuzzkit.usage_index import header_macro_names, usage_index
from fuzzkit.usage_models import UsageIndex

DEFAULT = "fuzzkit"


class Toolchain(Protocol):
    """What a graph run needs from a compiler, a fuzzer and a coverage tool."""

    def prepare_library(self, source: dict[str, Any], build: Any) -> LibraryBuild:
        """Fetch and build the library a benchmark names (cached)."""

    def parse_api(self, lib: LibraryBuild) -> list[FunctionDecl]:
        """The functions the public headers declare and the built library defines.

        First declaration wins. A header may declare more than the build compiled (every
        code-unit width of an API, an optional part left out): such a function can never
        link, so no harness or improvement is offered it.
        """

    def missing_functions(self, lib: LibraryBuild, names: Sequence[str],
                          project: str) -> dict[str, str]:
        """The names the built library does not define, each with the reason to show."""

    def collect_facts(self, lib: LibraryBuild, api: Sequence[FunctionDecl]) -> HeaderFacts:
        """The header facts (typedefs, records, enums, status macros, releasers) behind ``api``."""

    def usage_index(self, lib: LibraryBuild, api: Sequence[FunctionDecl], facts: HeaderFacts) -> UsageIndex:
        """How the library's own tests, examples, tools and docs call ``api`` (never its fuzz harnesses)."""

    def build_harness(self, source: Path, lib: LibraryBuild, out: Path) -> HarnessBuild:
        """Compile and link a harness in its fuzzing and coverage flavours."""

    def seed_corpus(self, lib: LibraryBuild) -> str:
        """A directory of sample inputs the library's sources ship ("" when there are none)."""

    def fuzz_dictionary(self, lib: LibraryBuild) -> str:
        """A libFuzzer dictionary of the library's own tokens ("" when it has none)."""

    def run_fuzzer(self, binary: Path, out: Path, *, seconds: int, rss_limit_mb: int,
                   harness_name: str, dict_path: str = "", seed: int = 0, runs: int = 0) -> FuzzRun:
        """Fuzz a built harness for ``seconds`` (with ``dict_path``'s tokens); crashes are results.

        ``seed``, ``runs``: libFuzzer's ``-seed`` and ``-runs`` (0: a random seed, no input limit).
        """

    def run_inputs(self, binary: Path, inputs: Path, out: Path, *, rss_limit_mb: int,
                   harness_name: str) -> FuzzRun:
        """Run the built harness once on each file of ``inputs`` (no fuzzing); crashes are results."""

    def measure_coverage(self, cov_binary: Path, inputs: Sequence[Path], lib: LibraryBuild,
                         out: Path) -> CoverageReport:
        """Replay ``inputs`` through the coverage binary and report the library's coverage."""


@functools.lru_cache(maxsize=8)
def _inline_of(headers: tuple[str, ...], include_dirs: tuple[str, ...],
               defines: tuple[str, ...]) -> tuple[FunctionDecl, ...]:
    return tuple(inline_functions(headers, include_dirs, defines))


def _inline(lib: LibraryBuild) -> tuple[FunctionDecl, ...]:
    """The static inline functions of the library's headers (read once per build)."""
    return _inline_of(tuple(map(str, lib.headers)), tuple(map(str, lib.include_dirs)), tuple(lib.defines))


class Fuzzkit:
    """The real toolchain: clang with ASan and source coverage, libFuzzer, llvm-cov."""

    def prepare_library(self, source: dict[str, Any], build: Any) -> LibraryBuild:
        """prepare_library, by fuzzkit (see :class:`Toolchain`)."""
        return prepare_library(source, build)

    def parse_api(self, lib: LibraryBuild) -> list[FunctionDecl]:
        """parse_api, by fuzzkit (see :class:`Toolchain`)."""
        decls = parse_headers(lib.headers, lib.include_dirs, lib.defines)
        defined = defined_functions(lib)  # empty when llvm-nm gives no verdict: keep all
        api = [d for d in decls if not defined or d.name in defined]
        # The headers' static inline helpers too: a harness may call them (the header defines them).
        declared = {d.name for d in decls}
        return api + [d for d in _inline(lib) if d.name not in declared]

    def missing_functions(self, lib: LibraryBuild, names: Sequence[str],
                          project: str) -> dict[str, str]:
        """missing_functions, by fuzzkit (see :class:`Toolchain`)."""
        return missing_functions(lib, names, project)

    def collect_facts(self, lib: LibraryBuild, api: Sequence[FunctionDecl]) -> HeaderFacts:
        """collect_facts, by fuzzkit (see :class:`Toolchain`).

        The library's variables a header declares are kept only if the build defines them; the
        parameters documented as taking NULL, as UTF-8 text or as NUL-terminated (and the option
        constants documented so), the conditions they assert on parameters, and the documentation of
        functions the headers leave
        undocumented, are read from the headers' and sources' comments.
        """
        # An inline helper is read as what it is: a wrapper of the functions it calls, if it calls any.
        helpers = {d.name for d in _inline(lib)}
        read = param_facts([*lib.headers, *lib.sources], api)  # every file read once
        facts = collect_facts(lib.headers, lib.include_dirs, lib.defines, api, helpers, read.docs)
        facts.optional, facts.utf8, facts.terminated = read.optional, read.utf8, read.terminated.params
        facts.conditions = read.conditions
        values = {m.name: m.value for m in facts.macros} | {c: v for e in facts.enums for c, v in e.constants}
        facts.terminated_flags = {name: value if value is not None else values.get(name)
                                  for name, value in read.terminated.flags.items()}
        data = defined_data(lib)  # empty when llvm-nm gives no verdict: keep all
        facts.instances = [i for i in facts.instances if not data or i[0] in data]
        return facts

    def usage_index(self, lib: LibraryBuild, api: Sequence[FunctionDecl], facts: HeaderFacts) -> UsageIndex:
        """usage_index, by fuzzkit (see :class:`Toolchain`): the header's constants class arguments."""
        constants = [c for e in facts.enums for c, _v in e.constants] + [m.name for m in facts.macros]
        constants += sorted(header_macro_names(lib.headers))  # string and expression macros too
        return usage_index(lib, api, constants)

    def build_harness(self, source: Path, lib: LibraryBuild, out: Path) -> HarnessBuild:
        """build_harness, by fuzzkit (see :class:`Toolchain`)."""
        return build_harness(source, lib, out)

    def seed_corpus(self, lib: LibraryBuild) -> str:
        """seed_corpus, by fuzzkit (see :class:`Toolchain`): kept beside the library's build."""
        found = seed_corpus(Path(lib.root), Path(lib.fuzz_archive).parent / "seeds")
        return str(found or "")

    def fuzz_dictionary(self, lib: LibraryBuild) -> str:
        """fuzz_dictionary, by fuzzkit (see :class:`Toolchain`): kept beside the library's build.

        Made from the string literals of the sources coverage is measured on (the library's own).
        """
        sources = [Path(p) for p in (lib.coverage_files or lib.sources)]
        dest = Path(lib.fuzz_archive).parent / f"fuzz-v{DICTIONARY_VERSION}.dict"
        found = library_dictionary(sources, dest)
        return str(found or "")

    def run_fuzzer(self, binary: Path, out: Path, *, seconds: int, rss_limit_mb: int,
                   harness_name: str, dict_path: str = "", seed: int = 0, runs: int = 0) -> FuzzRun:
        """run_fuzzer, by fuzzkit (see :class:`Toolchain`)."""
        return run_fuzzer(binary, out, seconds=seconds, rss_limit_mb=rss_limit_mb, harness_name=harness_name,
                          dict_path=Path(dict_path) if dict_path else None, seed=seed, runs=runs)

    def run_inputs(self, binary: Path, inputs: Path, out: Path, *, rss_limit_mb: int,
                   harness_name: str) -> FuzzRun:
        """run_inputs, by fuzzkit (see :class:`Toolchain`): libFuzzer's ``-runs=0``."""
        return run_fuzzer(binary, out, seconds=60, rss_limit_mb=rss_limit_mb, harness_name=harness_name,
                          seed_dirs=[inputs], extra_args=["-runs=0"])

    def measure_coverage(self, cov_binary: Path, inputs: Sequence[Path], lib: LibraryBuild,
                         out: Path) -> CoverageReport:
        """measure_coverage, by fuzzkit (see :class:`Toolchain`)."""
        return measure_coverage(cov_binary, list(inputs), lib, out)


_LOCK = threading.Lock()
_FACTORIES: dict[str, Callable[[], Toolchain]] = {DEFAULT: Fuzzkit}


def register_toolchain(name: str, factory: Callable[[], Toolchain]) -> None:
    """Make ``Context(toolchain=name)`` resolve through ``factory`` (tests register recordings)."""
    if not name.strip():
        raise ValueError("a toolchain needs a non-empty name")
    with _LOCK:
        _FACTORIES[name] = factory


def toolchain_named(name: str) -> Toolchain:
    """The toolchain registered as ``name`` (empty: the real one).

    Raises:
        ValueError: No toolchain has that name; the message lists the registered ones.
    """
    with _LOCK:
        factory = _FACTORIES.get(name or DEFAULT)
        known = sorted(_FACTORIES)
    if factory is None:
        raise ValueError(f"toolchain {name!r} is not registered; known: {', '.join(known)}")
    return factory()


def toolchain_names() -> list[str]:
    """The registered toolchain names."""
    with _LOCK:
        return sorted(_FACTORIES)
