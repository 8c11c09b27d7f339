"""Building a harness into a libFuzzer binary and a coverage replay binary."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from fuzzkit.diagnostics import Diagnostic, parse_compiler_output
from fuzzkit.library import COV_FLAGS, FUZZ_FLAGS, LibraryBuild
from fuzzkit.sandbox import Limits, run_sandboxed
from fuzzkit.tools import tool

FUZZ_LINK_FLAGS = ["-g", "-O1", "-fno-omit-frame-pointer", "-fsanitize=address,fuzzer"]
# Clang's fix-its in machine-readable form, kept with their diagnostics for the fixer.
DIAGNOSTIC_FLAGS = ["-fdiagnostics-parseable-fixits"]
# Most C libraries call libm; linking it unconditionally costs nothing.
_SYSTEM_LIBS = ["-lm"]


@dataclass
class HarnessBuild:
    """The outcome of building one harness; a compile error is ``ok=False``, not an exception."""

    ok: bool
    fuzz_binary: str | None
    cov_binary: str | None
    log: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def errors(self) -> list[Diagnostic]:
        """Only the error diagnostics."""
        return [d for d in self.diagnostics if d.severity == "error"]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "ok": self.ok,
            "fuzz_binary": self.fuzz_binary,
            "cov_binary": self.cov_binary,
            "log": self.log,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "seconds": self.seconds,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HarnessBuild:
        """Inverse of :meth:`to_dict`."""
        diags = [Diagnostic.from_dict(d) for d in data.get("diagnostics", [])]
        return cls(**{**data, "diagnostics": diags})


def replay_main_source() -> Path:
    """The replay ``main`` shipped with fuzzkit, linked into every coverage binary."""
    return Path(str(resources.files("fuzzkit").joinpath("replay_main.c")))


def build_harness(
    source: Path,
    lib: LibraryBuild,
    out_dir: Path,
    timeout: float = 120,
    extra_flags: tuple[str, ...] = (),
    extra_sources: Sequence[Path] = (),
) -> HarnessBuild:
    """Compile and link ``source`` against ``lib`` in both flavours.

    Produces ``out_dir/<stem>`` (ASan + libFuzzer) and ``out_dir/<stem>.cov`` (coverage
    instrumentation, replay main, library linked whole so unreferenced files still count).

    Args:
        source: The harness (C, or C++ by suffix) defining ``LLVMFuzzerTestOneInput``.
        lib: The library to link.
        out_dir: Where the binaries and object files go (created).
        timeout: Seconds allowed for each compiler invocation.
        extra_flags: More compiler flags for the harness (e.g. ``-Wall``).
        extra_sources: Helper files the harness needs (upstream harnesses often share a
            ``fuzz_helpers.c``); compiled in both flavours and linked in.
    """
    start = time.monotonic()
    source = Path(source).resolve()
    out_dir = Path(out_dir).resolve()  # the compiler runs in another directory
    out_dir.mkdir(parents=True, exist_ok=True)
    fuzz_bin, cov_bin = out_dir / source.stem, out_dir / f"{source.stem}.cov"
    steps = _build_steps(source, lib, out_dir, [*lib.compile_flags(), *extra_flags], extra_sources)
    for stale in (fuzz_bin, cov_bin):
        stale.unlink(missing_ok=True)
    log_parts: list[str] = []
    ok = True
    # What the compiler may read besides the system and the paths on its command line: the
    # library's tree (headers include their neighbours) and the harness's own directory.
    # A helper's neighbours and the include directories its build target adds are read too.
    readable = [Path(lib.root), *map(Path, lib.include_dirs), source.parent,
                *(Path(h).resolve().parent for h in extra_sources),
                *(Path(f[2:]) for f in extra_flags if f.startswith("-I") and Path(f[2:]).is_absolute())]
    for cmd in steps:
        output, ok = _run(cmd, timeout, out_dir, readable)
        log_parts.append(f"$ {' '.join(cmd)}\n{output}")
        if not ok:
            break
    log = "\n".join(log_parts)
    return HarnessBuild(
        ok=ok,
        fuzz_binary=str(fuzz_bin) if ok else None,
        cov_binary=str(cov_bin) if ok else None,
        log=log,
        diagnostics=parse_compiler_output(log),
        seconds=round(time.monotonic() - start, 3),
    )


def _build_steps(source: Path, lib: LibraryBuild, out_dir: Path, lib_flags: list[str],
                 extra_sources: Sequence[Path]) -> list[list[str]]:
    """The compiler commands of :func:`build_harness`, in order: helpers, fuzz binary, coverage."""
    is_cxx = source.suffix in (".cc", ".cpp", ".cxx")
    compiler = tool("clang++") if is_cxx else tool("clang")
    fuzz_bin = out_dir / source.stem
    cov_bin = out_dir / f"{source.stem}.cov"
    cov_obj = out_dir / f"{source.stem}.cov.o"
    replay_obj = out_dir / "replay_main.o"
    link_tail = [*lib.ldflags, *_SYSTEM_LIBS]
    helper_steps, fuzz_helpers, cov_helpers = _helper_steps(extra_sources, lib_flags, out_dir)
    if any(Path(h).suffix in (".cc", ".cpp", ".cxx") for h in extra_sources):
        compiler = tool("clang++")
    return [
        *helper_steps,
        [compiler, *FUZZ_LINK_FLAGS, *DIAGNOSTIC_FLAGS, *lib_flags, str(source), *fuzz_helpers,
         lib.fuzz_archive, *link_tail, "-o", str(fuzz_bin)],
        [compiler, *COV_FLAGS, *DIAGNOSTIC_FLAGS, *lib_flags, "-c", str(source), "-o", str(cov_obj)],
        [tool("clang"), "-g", "-O1", "-c", str(replay_main_source()), "-o", str(replay_obj)],
        [compiler, "-fprofile-instr-generate", str(cov_obj), *cov_helpers, str(replay_obj),
         "-Wl,--whole-archive", lib.cov_archive, "-Wl,--no-whole-archive", *link_tail,
         "-o", str(cov_bin)],
    ]  # fmt: skip


def _helper_steps(
    helpers: Sequence[Path], flags: list[str], out_dir: Path
) -> tuple[list[list[str]], list[str], list[str]]:
    """Compile commands for helper sources in both flavours, and the objects they make."""
    steps: list[list[str]] = []
    fuzz_objs: list[str] = []
    cov_objs: list[str] = []
    for i, helper in enumerate(Path(h).resolve() for h in helpers):
        cc = tool("clang++") if helper.suffix in (".cc", ".cpp", ".cxx") else tool("clang")
        fuzz_obj, cov_obj = out_dir / f"helper{i}-{helper.stem}.o", out_dir / f"helper{i}-{helper.stem}.cov.o"
        steps.append([cc, *FUZZ_FLAGS, *flags, "-c", str(helper), "-o", str(fuzz_obj)])
        steps.append([cc, *COV_FLAGS, *flags, "-c", str(helper), "-o", str(cov_obj)])
        fuzz_objs.append(str(fuzz_obj))
        cov_objs.append(str(cov_obj))
    return steps, fuzz_objs, cov_objs


def _run(cmd: list[str], timeout: float, out_dir: Path, readable: list[Path]) -> tuple[str, bool]:
    """One compiler step, sandboxed: the harness is untrusted text (``#include``, pragmas).

    In the sandbox's view ``#include "/etc/shadow"`` or of a file in the user's home finds
    nothing, so no secret reaches the build log or the enhancer's prompt.
    """
    log = out_dir / ".step.log"
    result = run_sandboxed(
        cmd,
        cwd=out_dir,
        log_path=log,
        wall_timeout=timeout,
        limits=Limits(cpu_seconds=int(timeout) + 5, file_size_mb=1024, processes=64, address_space_mb=8192),
        readable=readable,
    )
    output = log.read_text(errors="replace")
    log.unlink(missing_ok=True)
    if result.timed_out:
        return output + f"clang: error: compilation timed out after {timeout:g} s\n", False
    return output, result.exit_code == 0
