"""A toolchain that records what the real one answered, and one that plays a recording back.

The graph tests run in the fast tier through :class:`ReplayToolchain`: every build, fuzz run
and coverage measurement comes from a cassette recorded with the real clang, libFuzzer and
llvm-cov on the tests' ``kv`` library (:data:`RECORD`). Results are keyed by the harness
source, so a harness the recording never saw is an error that says how to
re-record, never a made-up result. Paths are stored relative to the directory each call was
given, so a cassette holds no path of the machine that recorded it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fuzzkit.api import FunctionDecl
from fuzzkit.coverage import CoverageReport
from fuzzkit.harness import HarnessBuild
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.library import LibraryBuild
from fuzzkit.runner import FuzzRun
from fuzzkit.toolchain import Fuzzkit, Toolchain
from fuzzkit.usage_models import UsageIndex

OUT = "{out}"
RECORD = ("LOGICFUZZ_RECORD_CASSETTE=tests/graph/cassettes/kv.json "
          "python -m pytest tests/graph -m toolchain")
REPO = str(Path(__file__).resolve().parent.parent)
MACHINE_PATH = re.compile(r"/(?:tmp|root|home|work|var/tmp)/")
MAX_FILE_BYTES = 64 * 1024


class MissingRecording(LookupError):
    """The cassette has no answer for this call."""


def source_key(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()[:16]


def _swap(value: Any, old: str, new: str) -> Any:
    """``value`` with ``old`` replaced by ``new`` in every string it holds."""
    if isinstance(value, str):
        return value.replace(old, new) if old else value
    if isinstance(value, list):
        return [_swap(v, old, new) for v in value]
    if isinstance(value, tuple):
        return tuple(_swap(v, old, new) for v in value)
    if isinstance(value, dict):
        return {k: _swap(v, old, new) for k, v in value.items()}
    return value


def _scrub(value: Any, roots: dict[str, str]) -> Any:
    """``value`` with each root directory replaced by its placeholder, longest root first."""
    for root in sorted(roots, key=len, reverse=True):
        value = _swap(value, root, roots[root])
    return value


def _files_under(out: Path, paths: Sequence[str], text: Sequence[str],
                 roots: dict[str, str]) -> dict[str, str]:
    """Small files the run left (log, crash inputs), base64, by path relative to ``out``.

    The ``text`` ones (the log) are scrubbed of the recording machine's directories first.
    """
    kept = {}
    for raw in paths:
        path = Path(raw)
        if path.is_file() and path.stat().st_size <= MAX_FILE_BYTES:
            data = path.read_bytes()
            if raw in text:
                data = _scrub(data.decode("utf-8", "replace"), roots).encode("utf-8")
            kept[str(path.relative_to(out))] = base64.b64encode(data).decode()
    return kept


def _key_beside(binary: Path) -> str:
    """The key of the harness source a binary was built from (the build node writes it beside)."""
    sources = sorted(Path(binary).parent.glob("*.c"))
    return source_key(sources[0].read_text(encoding="utf-8")) if sources else ""


class RecordingToolchain:
    """Forwards every call to ``inner`` (the real toolchain) and keeps its answers."""

    def __init__(self, inner: Toolchain | None = None) -> None:
        self.inner = inner or Fuzzkit()
        self.cassette: dict[str, Any] = {"library": None, "builds": {}, "runs": {}, "coverage": {}}
        self._binary_key: dict[str, str] = {}
        self._roots: dict[str, str] = {}

    def _keep(self, value: Any, out: Path | None = None) -> Any:
        roots = dict(self._roots)
        if out is not None:
            roots[str(out)] = OUT
        return _scrub(value, roots)

    def prepare_library(self, source: dict[str, Any], build: Any) -> LibraryBuild:
        lib = self.inner.prepare_library(source, build)
        build_dir = Path(lib.log_path).parent
        self._roots = {REPO: "{repo}", str(build_dir.parent): "{cache}", str(build_dir): "{build}",
                       lib.root: "{source}", str(Path(lib.root).parent): "{sources}"}
        if source.get("path"):
            self._roots[str(source["path"])] = "{source}"
        self.cassette["library"] = self._keep(lib.to_dict())
        return lib

    def parse_api(self, lib: LibraryBuild) -> list[FunctionDecl]:
        api = self.inner.parse_api(lib)
        self.cassette["api"] = [d.to_dict() for d in api]
        return api

    def missing_functions(self, lib: LibraryBuild, names: Sequence[str],
                          project: str) -> dict[str, str]:
        missing = self.inner.missing_functions(lib, names, project)
        self.cassette.setdefault("missing", {}).update(
            {n: missing.get(n, "") for n in names})
        return missing

    def collect_facts(self, lib: LibraryBuild, api: Sequence[FunctionDecl]) -> HeaderFacts:
        facts = self.inner.collect_facts(lib, api)
        self.cassette["facts"] = self._keep(facts.to_dict())
        return facts

    def usage_index(self, lib: LibraryBuild, api: Sequence[FunctionDecl], facts: HeaderFacts) -> UsageIndex:
        index = self.inner.usage_index(lib, api, facts)
        self.cassette["usage"] = index.model_dump(mode="json")
        return index

    def build_harness(self, source: Path, lib: LibraryBuild, out: Path) -> HarnessBuild:
        result = self.inner.build_harness(source, lib, out)
        key = source_key(source.read_text(encoding="utf-8"))
        self.cassette["builds"][key] = self._keep(result.to_dict(), out)
        for binary in (result.fuzz_binary, result.cov_binary):
            if binary:
                self._binary_key[str(binary)] = key
        return result

    def seed_corpus(self, lib: LibraryBuild) -> str:
        return ""  # a recording replays the runs it recorded: they started from no seeds

    def fuzz_dictionary(self, lib: LibraryBuild) -> str:
        return ""  # ... and fuzzed with no dictionary

    def run_inputs(self, binary: Path, inputs: Path, out: Path, *, rss_limit_mb: int,
                   harness_name: str) -> FuzzRun:
        raise AssertionError("a recording has no seed corpus, so it never runs seeds")

    def run_fuzzer(self, binary: Path, out: Path, *, seconds: int, rss_limit_mb: int,
                   harness_name: str, dict_path: str = "", seed: int = 0, runs: int = 0) -> FuzzRun:
        run = self.inner.run_fuzzer(binary, out, seconds=seconds, rss_limit_mb=rss_limit_mb,
                                    harness_name=harness_name, dict_path=dict_path, seed=seed, runs=runs)
        roots = {**self._roots, str(out): OUT}
        files = _files_under(out, [run.log_path, *run.crash_files], [run.log_path], roots)
        self.cassette["runs"][self._binary_key.get(str(binary)) or _key_beside(binary)] = {
            "run": self._keep(run.to_dict(), out), "files": files}
        return run

    def measure_coverage(self, cov_binary: Path, inputs: Sequence[Path], lib: LibraryBuild,
                         out: Path) -> CoverageReport:
        report = self.inner.measure_coverage(cov_binary, inputs, lib, out)
        key = self._binary_key.get(str(cov_binary)) or _key_beside(cov_binary)
        self.cassette["coverage"][key] = self._keep(
            report.to_dict(), out)
        return report

    def merge_into(self, other: dict[str, Any]) -> dict[str, Any]:
        """``other`` (an earlier cassette) with this recording's answers added."""
        merged = {**other, **{k: v for k, v in self.cassette.items()
                              if k not in ("builds", "runs", "coverage", "missing")}}
        for part in ("builds", "runs", "coverage", "missing"):
            merged[part] = {**(other.get(part) or {}), **(self.cassette.get(part) or {})}
        return merged


def machine_paths(cassette: dict[str, Any]) -> list[str]:
    """Directories of the recording machine a cassette still names (the files' text included)."""
    texts = [json.dumps(cassette)]
    for run in (cassette.get("runs") or {}).values():
        texts += [base64.b64decode(b).decode("utf-8", "replace") for b in run["files"].values()]
    return sorted({m.group(0) for t in texts for m in MACHINE_PATH.finditer(t)})


class ReplayToolchain:
    """Answers from a cassette; nothing is compiled or run."""

    def __init__(self, cassette: dict[str, Any] | Path) -> None:
        if isinstance(cassette, Path):
            cassette = json.loads(cassette.read_text(encoding="utf-8"))
        self.cassette = cassette
        self.calls: list[tuple[str, str]] = []
        self._binary_key: dict[str, str] = {}

    def _need(self, part: str, key: str) -> Any:
        try:
            return self.cassette[part][key]
        except (KeyError, TypeError):
            raise MissingRecording(
                f"no recorded {part} for harness {key}; re-record the cassette with `{RECORD}`"
            ) from None

    def prepare_library(self, source: dict[str, Any], build: Any) -> LibraryBuild:
        self.calls.append(("prepare_library", ""))
        return LibraryBuild.from_dict(self.cassette["library"])

    def parse_api(self, lib: LibraryBuild) -> list[FunctionDecl]:
        return [FunctionDecl.from_dict(d) for d in self.cassette["api"]]

    def missing_functions(self, lib: LibraryBuild, names: Sequence[str],
                          project: str) -> dict[str, str]:
        recorded = self.cassette.get("missing") or {}
        return {n: recorded[n] or f"{n} is not defined" for n in names
                if n not in recorded or recorded[n]}

    def collect_facts(self, lib: LibraryBuild, api: Sequence[FunctionDecl]) -> HeaderFacts:
        return HeaderFacts.from_dict(self.cassette.get("facts"))

    def usage_index(self, lib: LibraryBuild, api: Sequence[FunctionDecl], facts: HeaderFacts) -> UsageIndex:
        # Cassettes recorded before the usage index hold none: the run sees an empty index.
        return UsageIndex.model_validate(self.cassette.get("usage") or {})

    def build_harness(self, source: Path, lib: LibraryBuild, out: Path) -> HarnessBuild:
        key = source_key(source.read_text(encoding="utf-8"))
        self.calls.append(("build_harness", key))
        result = HarnessBuild.from_dict(_swap(self._need("builds", key), OUT, str(out)))
        for binary in (result.fuzz_binary, result.cov_binary):
            if binary:
                self._binary_key[str(binary)] = key
        return result

    def seed_corpus(self, lib: LibraryBuild) -> str:
        return ""

    def fuzz_dictionary(self, lib: LibraryBuild) -> str:
        return ""

    def run_inputs(self, binary: Path, inputs: Path, out: Path, *, rss_limit_mb: int,
                   harness_name: str) -> FuzzRun:
        raise AssertionError("a recording has no seed corpus, so it never runs seeds")

    def run_fuzzer(self, binary: Path, out: Path, *, seconds: int, rss_limit_mb: int,
                   harness_name: str, dict_path: str = "", seed: int = 0, runs: int = 0) -> FuzzRun:
        key = self._binary_key.get(str(binary)) or _key_beside(binary)
        self.calls.append(("run_fuzzer", key))
        recorded = self._need("runs", key)
        for rel, blob in recorded["files"].items():
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(base64.b64decode(blob))
        (out / "corpus").mkdir(parents=True, exist_ok=True)
        return FuzzRun.from_dict(_swap(recorded["run"], OUT, str(out)))

    def measure_coverage(self, cov_binary: Path, inputs: Sequence[Path], lib: LibraryBuild,
                         out: Path) -> CoverageReport:
        key = self._binary_key.get(str(cov_binary)) or _key_beside(cov_binary)
        self.calls.append(("measure_coverage", key))
        return CoverageReport.from_dict(self._need("coverage", key))
