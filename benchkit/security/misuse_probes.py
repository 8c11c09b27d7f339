"""Misuse probes: bad input given to the real ``logicfuzz`` CLI, each expected to stop cleanly.

A probe is a benchmark file, flags or an environment that a careless or hostile user could
give. Each runs ``python -m logicfuzz.cli`` in a fresh directory holding a tiny C library
(``kv``), a previous run directory with a file in it, and a private cache. It is *clean*
when the command exits 2 with exactly one ``error:`` line that names the bad value, no
traceback, the earlier file in ``--out`` intact and nothing written outside ``--out`` and
the cache. :func:`measure` runs them all and counts; ``tests/security`` asserts each, and
``bench/hostile.py`` reports the counts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchkit.kv import KV_HEADER, KV_SOURCE

REPO = Path(__file__).resolve().parents[2]
KEPT = "earlier-result.json"
KV_PARSE = {"name": "kv_parse", "signature": "kv_t * kv_parse(const char * text)",
            "return_type": "kv_t *", "params": [{"name": "text", "type": "const char *"}]}


def bench(**changes: Any) -> dict[str, Any]:
    """The kv benchmark (source next to it) with ``changes`` applied."""
    data = {"project": "kv", "language": "c", "source": {"path": "kv"},
            "build": {"sources": ["kv.c"], "headers": ["kv.h"]}, "functions": [KV_PARSE]}
    return {**data, **changes}


def alias_bomb(levels: int) -> str:
    """A benchmark whose ``upstream_harnesses`` nests ``levels`` levels of nine aliases each."""
    text = 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for n in range(1, levels):
        text += f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]\n"
    return text + f"project: kv\nsource: {{path: kv}}\nfunctions: [{{name: kv_parse}}]\n" \
                  f"upstream_harnesses: *l{levels - 1}\n"


@dataclass(frozen=True)
class Probe:
    """One misuse: files to write, CLI arguments, environment, and what the error must name."""

    name: str
    args: list[str]
    expect: str
    files: dict[str, str | bytes | int] = field(default_factory=dict)  # int: a sparse file of that size
    env: dict[str, str] = field(default_factory=dict)
    needs: Callable[[], bool] | None = None


def _yaml(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False)


def _run(name: str, text: str | bytes | int, *flags: str, expect: str,
         files: dict[str, str | bytes | int] | None = None, **kw: Any) -> Probe:
    # Small budgets first (a later flag wins): a probe that is not stopped still ends soon.
    args = ["run", "b.yaml", "--out", "out", "--fuzz-seconds", "1", "--max-iterations", "0", *flags]
    return Probe(name, args, expect, {"b.yaml": text, **(files or {})}, **kw)


PROBES: list[Probe] = [
    _run("project with ../", _yaml(bench(project="../evil")), expect="'../evil'"),
    _run("project ..", _yaml(bench(project="..")), expect="'..'"),
    _run("project with a slash", _yaml(bench(project="kv/sub")), expect="'kv/sub'"),
    _run("function with ../", _yaml(bench(functions=[{"name": "../x"}])), expect="'../x'"),
    _run("empty function name", _yaml(bench(functions=[{"name": ""}])), expect="empty function name"),
    _run("function name with a shell command", _yaml(bench(functions=[{"name": "f; rm -rf ~"}])),
         expect="'f; rm -rf ~'"),
    _run("--functions with ../", _yaml(bench()), "--functions", "../x", expect="'../x'"),
    _run("--functions empty entry", _yaml(bench()), "--functions", "kv_parse,,",
         expect="empty function name"),
    _run("--functions console markup", _yaml(bench()), "--functions", "[/x]", expect="'[/x]'"),
    _run("unknown language", _yaml(bench(language="cobol")), expect="'cobol'"),
    _run("apt name read as an option", _yaml(bench(source={"apt": "--help"})), expect="'--help'"),
    _run("git URL read as an option", _yaml(bench(source={"git": "--upload-pack=touch pwned"})),
         expect="'--upload-pack=touch pwned'"),
    _run("git version read as an option", _yaml(bench(source={"git": "https://example.invalid/r.git",
                                                               "version": "--detach"})), expect="'--detach'"),
    _run("path read as an option", _yaml(bench(source={"path": "-rf"})), expect="'-rf'"),
    _run("alias bomb, 8 levels", alias_bomb(8), expect="nodes"),
    _run("alias bomb, 9 levels", alias_bomb(9), expect="nodes"),
    _run("recursive alias", "project: &p [kv, *p]\n", expect="recursive alias"),
    _run("deep nesting", "project: " + "[" * 20000 + "]" * 20000 + "\n", expect="nests deeper"),
    _run("60 MB benchmark", 60 << 20, expect="over the 1,048,576-byte limit"),
    _run("not UTF-8", b"project: \xff\xfe\n", expect="not UTF-8"),
    _run("invalid YAML", "project: [kv\n", expect="not valid YAML"),
    _run("--jobs 0", _yaml(bench()), "--jobs", "0", expect="--jobs 0"),
    _run("--jobs -3", _yaml(bench()), "--jobs", "-3", expect="--jobs -3"),
    _run("--fuzz-seconds 0", _yaml(bench()), "--fuzz-seconds", "0", expect="--fuzz-seconds 0"),
    _run("--fuzz-seed -1", _yaml(bench()), "--fuzz-seed", "-1", expect="--fuzz-seed -1"),
    _run("--fuzz-runs -1", _yaml(bench()), "--fuzz-runs", "-1", expect="--fuzz-runs -1"),
    Probe("--out is a file", ["run", "b.yaml", "--out", "afile"], "afile is a file",
          {"b.yaml": _yaml(bench()), "afile": "x"}),
    Probe("--out below a file", ["run", "b.yaml", "--out", "afile/run"], "afile/run cannot be created",
          {"b.yaml": _yaml(bench()), "afile": "x"}),
    Probe("--out not writable", ["run", "b.yaml", "--out", "locked/run"], "locked/run",
          {"b.yaml": _yaml(bench()), "locked/": ""}, needs=lambda: os.geteuid() != 0),
    _run("cache dir is a file", _yaml(bench()), expect="LOGICFUZZ_CACHE_DIR",
         env={"LOGICFUZZ_CACHE_DIR": "afile"}, files={"afile": "x"}),
    _run("memory config alias bomb", _yaml(bench()), "--memory-config", "mem.yaml", expect="nodes",
         files={"mem.yaml": alias_bomb(9)}),
    _run("function not in the library", _yaml(bench(functions=[{"name": "kv_pars"}])),
         expect="kv_pars is not defined by the built library kv"),
]


@dataclass
class Outcome:
    """What one probe did."""

    probe: str
    exit_code: int
    stderr: str
    traceback: bool
    one_line: bool
    named: bool
    stray: list[str]
    kept: bool

    @property
    def clean(self) -> bool:
        """Exit 2, one error line naming the value, no traceback, nothing lost or written astray."""
        return (self.exit_code == 2 and self.one_line and self.named and not self.traceback
                and not self.stray and self.kept)


def _layout(root: Path, probe: Probe) -> None:
    (root / "kv").mkdir(parents=True)
    (root / "kv" / "kv.h").write_text(KV_HEADER)
    (root / "kv" / "kv.c").write_text(KV_SOURCE)
    (root / "out").mkdir()
    (root / "out" / KEPT).write_text('{"earlier": true}\n')
    for name, content in probe.files.items():
        path = root / name
        if name.endswith("/"):
            path.mkdir(mode=0o500)
        elif isinstance(content, int):
            with open(path, "wb") as fh:
                fh.truncate(content)  # sparse: the size is what is refused, not the bytes
        else:
            path.write_bytes(content if isinstance(content, bytes) else content.encode())


def _files(root: Path, skip: set[Path]) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if not any(p == s or p.is_relative_to(s) for s in skip)}


def error_lines(stderr: str) -> list[str]:
    """The lines of ``stderr`` that are not logging warnings or notes."""
    return [ln for ln in stderr.splitlines()
            if ln.strip() and not ln.startswith(("WARNING ", "INFO ", "note:"))]


def run_probe(probe: Probe, cache: Path, timeout: float = 300) -> Outcome:
    """Run ``probe`` in a fresh directory with ``cache`` as the build cache."""
    with tempfile.TemporaryDirectory(prefix="probe-") as tmp:
        root = Path(tmp)
        _layout(root, probe)
        before = _files(root, {root / "out"})
        env = {**os.environ, "LOGICFUZZ_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}
        env.update(probe.env)
        proc = subprocess.run([sys.executable, "-m", "logicfuzz.cli", *probe.args, "--quiet"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
        lines = error_lines(proc.stderr)
        kept = (root / "out" / KEPT).read_text() == '{"earlier": true}\n'
        stray = sorted(_files(root, {root / "out"}) - before)
        return Outcome(probe.name, proc.returncode, proc.stderr, "Traceback" in proc.stderr,
                       len(lines) == 1 and lines[0].startswith("error:"),
                       bool(lines) and probe.expect in lines[0], stray, kept)


def measure() -> dict[str, Any]:
    """Run every probe; counts of tried, clean and traceback, with one detail row per probe."""
    details: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="probe-cache-") as cache:
        for probe in PROBES:
            if probe.needs and not probe.needs():
                details.append({"probe": probe.name, "skipped": "needs a non-root user"})
                continue
            out = run_probe(probe, Path(cache))
            details.append({"probe": probe.name, "exit_code": out.exit_code, "clean": out.clean,
                            "traceback": out.traceback, "stray": out.stray,
                            "error": (error_lines(out.stderr) or [""])[0][:300]})
    tried = [d for d in details if "skipped" not in d]
    return {"tried": len(tried), "clean": sum(d["clean"] for d in tried),
            "traceback": sum(d["traceback"] for d in tried), "details": details}


if __name__ == "__main__":
    import json

    print(json.dumps(measure(), indent=1))
