"""Benchmark YAML files: oss-fuzz-gen's target format plus where the source comes from.

Example (for a made-up library ``acme``)::

    project: acme
    language: c
    target_path: fuzzing/acme_read_fuzzer.c
    target_name: acme_read_fuzzer
    source: {apt: acme}
    build: {sources: [acme.c], include_dirs: [.], headers: [acme.h]}   # optional: detected
    functions:
      - name: acme_parse
        signature: "acme_node * acme_parse(const char * value)"
        return_type: "acme_node *"
        params: [{name: value, type: "const char *"}]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from fuzzkit.api import FunctionDecl, Param
from fuzzkit.detect import BuildSpec
from fuzzkit.inputs import InputError, check_function_name, check_project_name
from fuzzkit.safe_yaml import load_yaml_file
from fuzzkit.source import SourceSpec, apt_has_source

LANGUAGES = ("c",)


class BenchmarkError(ValueError):
    """A benchmark file that cannot be used, with what to change."""


class ParamSpec(BaseModel):
    """One parameter as oss-fuzz-gen writes it."""

    name: str = ""
    type: str


class FunctionSpec(BaseModel):
    """One target function."""

    name: str
    signature: str = ""
    return_type: str = "void"
    params: list[ParamSpec] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _identifier(cls, name: str) -> str:
        return check_function_name(name)

    def decl(self, header: str = "") -> FunctionDecl:
        """As the shared C API data model."""
        params = tuple(
            Param(name=p.name or f"arg{i}", type=_clang_spelling(p.type))
            for i, p in enumerate(self.params)
        )
        return FunctionDecl(self.name, _clang_spelling(self.return_type), params, header)


class Benchmark(BaseModel):
    """A whole benchmark file."""

    project: str
    language: str = "c"
    target_path: str = ""
    target_name: str = ""
    functions: list[FunctionSpec]
    source: SourceSpec
    build: BuildSpec | None = None
    upstream_harnesses: list[str] = Field(default_factory=list)
    path: str = ""

    @field_validator("project")
    @classmethod
    def _safe_project(cls, project: str) -> str:
        return check_project_name(project)

    @field_validator("language")
    @classmethod
    def _known_language(cls, language: str) -> str:
        if language.strip().lower() not in LANGUAGES:
            raise ValueError(
                f"language {language!r} is not supported: LogicFuzz writes C harnesses for C "
                "libraries; write `language: c` (or leave it out)"
            )
        return language.strip().lower()

    def function(self, name: str) -> FunctionSpec:
        """The function named ``name`` (BenchmarkError listing the choices otherwise)."""
        for fn in self.functions:
            if fn.name == name:
                return fn
        names = ", ".join(f.name for f in self.functions)
        raise BenchmarkError(f"{self.path}: no function {name!r}; the benchmark has: {names}")


def load_benchmark(path: str | Path) -> Benchmark:
    """Read and validate a benchmark YAML, with errors that say what to add or fix."""
    path = Path(path)
    if not path.is_file():
        raise BenchmarkError(f"benchmark file {path} does not exist")
    try:
        data: Any = load_yaml_file(path, "benchmark file")
    except InputError as exc:
        raise BenchmarkError(str(exc)) from None
    if not isinstance(data, dict):
        raise BenchmarkError(f"{path}: expected a mapping with project, functions, source, build")
    name = "" if "source" in data else _debian_name(data)
    if name:
        # An oss-fuzz-gen benchmark says nothing of where the library comes from; Debian's
        # source package of the project's name is the obvious place, and saying so lets the
        # user pin another.
        print(
            f"note: {path} has no `source:`; using Debian's source package {name} "
            f"(add `source: {{apt: {name}}}` or another source to the file to choose)",
            file=sys.stderr,
        )
        data = {**data, "source": {"apt": name}}
    if "source" not in data:
        raise BenchmarkError(
            f"{path}: no source section. oss-fuzz-gen benchmarks do not say where the library "
            "comes from; add e.g.\n  source: {apt: NAME}\n(optionally a build: section; without "
            "one the build is detected) or generate a complete file with "
            "`logicfuzz init-benchmark --apt NAME`."
        )
    try:
        bench = Benchmark.model_validate({**data, "path": str(path)})
    except ValidationError as exc:
        raise BenchmarkError(f"{path} is not a valid benchmark: {one_line(exc)}") from None
    if bench.source.path and not Path(bench.source.path).expanduser().is_absolute():
        # A relative source path is relative to the benchmark file, wherever logicfuzz runs.
        local = (path.parent / bench.source.path).resolve()
        bench = bench.model_copy(update={"source": bench.source.model_copy(update={"path": str(local)})})
    if not bench.functions:
        raise BenchmarkError(f"{path}: `functions` is empty; list at least one target function")
    return bench


def one_line(exc: ValidationError) -> str:
    """The first problem of a validation error as ``where: what`` (and how many more there are)."""
    errors = exc.errors()
    first = errors[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
    what = str(first["msg"]).removeprefix("Value error, ")
    what = "missing; add it" if first["type"] == "missing" else what
    more = f" (and {len(errors) - 1} more problem{'s' * (len(errors) > 2)})" if len(errors) > 1 else ""
    return f"{where or 'file'}: {what}{more}"


def _debian_name(data: dict[str, Any]) -> str:
    """The project's name when Debian has a source package of that name, else ``""``."""
    project = data.get("project")
    if not isinstance(project, str) or not project.strip():
        return ""
    name = project.strip().lower()
    return name if apt_has_source(name) else ""


def _clang_spelling(ctype: str) -> str:
    """Normalize a C type to clang's spelling: one space before each ``*``, none after."""
    text = " ".join(ctype.replace("*", " * ").split())
    return text.replace("* *", "**").replace(" * ", " *").rstrip() if "*" in text else text
