"""Bad input stops with one line and exit 2, before any work, losing nothing (issue item 6).

Every misuse probe of :mod:`benchkit.security.misuse_probes` runs through the real CLI in a
subprocess; the loader, path and symbol checks are also tested directly where a probe
cannot see the detail (an alias bomb never expanded, a path kept under ``--out``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agent_graph.benchmark import BenchmarkError, load_benchmark
from benchkit.security.misuse_probes import KEPT, PROBES, REPO, alias_bomb, bench, error_lines, run_probe
from fuzzkit.errors import ToolchainError
from fuzzkit.inputs import InputError, check_function_name, check_project_name
from fuzzkit.safe_yaml import MAX_NODES, YamlLimitError, check_bounds, load_yaml_file, load_yaml_text
from fuzzkit.source import SourceSpec
from logicfuzz.runner import RunOptions, run_benchmark, target_dir


@pytest.fixture(scope="module")
def probe_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("probe-cache")


@pytest.mark.parametrize("probe", PROBES, ids=[p.name for p in PROBES])
def test_misuse_probe_stops_cleanly(probe, probe_cache: Path) -> None:
    if probe.needs and not probe.needs():
        pytest.skip(f"{probe.name}: root writes anywhere, so an unwritable directory needs another user")
    out = run_probe(probe, probe_cache)
    assert out.exit_code == 2, out.stderr
    assert not out.traceback, out.stderr
    assert out.one_line, f"expected one error line, got:\n{out.stderr}"
    assert out.named, f"the error does not name {probe.expect!r}:\n{out.stderr}"
    assert out.kept, "a file already in --out was changed or lost"
    assert not out.stray, f"written outside --out: {out.stray}"


def test_alias_bomb_is_refused_without_expanding(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(9))
    assert len(path.read_bytes()) < 600
    with pytest.raises(YamlLimitError, match=f"more than {MAX_NODES:,} nodes"):
        load_yaml_file(path, "benchmark file")


def test_aliases_within_the_limit_still_load() -> None:
    data = load_yaml_text("base: &b {x: 1, y: [1, 2]}\nuse: [*b, *b]\n")
    assert data == {"base": {"x": 1, "y": [1, 2]}, "use": [{"x": 1, "y": [1, 2]}] * 2}


def test_a_shipped_benchmark_loads_as_before() -> None:
    for path in sorted((REPO / "benchmarks").glob("*.yaml")):
        assert load_yaml_file(path) == yaml.safe_load(path.read_text()), path
        check_bounds(path.read_text())


def test_size_is_checked_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with open(big, "wb") as fh:
        fh.truncate(60 << 20)
    with pytest.raises(YamlLimitError, match="over the 1,048,576-byte limit"):
        load_yaml_file(big, "benchmark file")


@pytest.mark.parametrize("name", ["", "1abc", "a-b", "a b", "../x", "a/b", "x" * 201, "f()", None, 3])
def test_function_names_must_be_c_identifiers(name: object) -> None:
    with pytest.raises(InputError, match="not a C identifier"):
        check_function_name(name)


@pytest.mark.parametrize("name", ["kv_parse", "_x", "A1", "x" * 200])
def test_c_identifiers_pass(name: str) -> None:
    assert check_function_name(name) == name


@pytest.mark.parametrize("name", ["", ".", "..", "../x", "a/b", "-rf", ".hidden", "a\0b", "a b", "x" * 101])
def test_project_names_must_be_one_safe_component(name: str) -> None:
    with pytest.raises(InputError, match="project name"):
        check_project_name(name)


@pytest.mark.parametrize("name", ["kv", "libsigc++-2.0", "acme_2.1", "X"])
def test_safe_project_names_pass(name: str) -> None:
    assert check_project_name(name) == name


@pytest.mark.parametrize("source", [
    {"apt": "-x"}, {"git": "--upload-pack=x"}, {"path": "-rf"}, {"tarball": "--to-command=x"},
    {"git": "https://h/r.git", "version": "-b"}])
def test_source_values_read_as_options_are_refused(source: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="starts with '-'"):
        SourceSpec.model_validate(source)


def test_target_dir_stays_under_out(tmp_path: Path) -> None:
    assert target_dir(tmp_path, "kv", "kv_parse") == (tmp_path / "kv" / "kv_parse").resolve()
    for project, function in (("..", "x"), ("kv", "../../x"), ("/etc", "x")):
        with pytest.raises(ToolchainError, match="outside"):
            target_dir(tmp_path, project, function)


def test_benchmark_errors_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(bench(functions=[{"name": "../x"}], source={"apt": "--help"})))
    with pytest.raises(BenchmarkError) as info:
        load_benchmark(path)
    assert "\n" not in str(info.value)
    assert "and 1 more problem" in str(info.value)


@pytest.mark.toolchain
def test_one_missing_function_fails_only_its_target(kv_benchmark: Path, tmp_path: Path) -> None:
    """In a run of several targets, the one the library does not define is reported; the others run."""
    data = yaml.safe_load(kv_benchmark.read_text())
    data["functions"].append({"name": "kv_nope"})
    path = kv_benchmark.parent / "kv_two.yaml"
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "logicfuzz.cli", "run", str(path), "--out", str(out),
                           "--fuzz-seconds", "1", "--max-iterations", "0", "--jobs", "1", "--json"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 1, proc.stderr  # some target failed; the run itself finished
    assert "Traceback" not in proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["failed"] == ["kv_nope"]
    by_name = {r["function"]: r for r in summary["results"]}
    assert "kv_nope is not defined by the built library kv" in by_name["kv_nope"]["error"]
    assert "did you mean kv_" in by_name["kv_nope"]["error"]
    assert by_name["kv_parse"]["compiles"] and not by_name["kv_parse"].get("error")
    assert (out / "kv" / "kv_nope" / "error.json").is_file()
    assert (out / "kv" / "kv_parse" / "result.json").is_file()


@pytest.mark.toolchain
def test_a_single_missing_function_stops_before_any_model_call(kv_benchmark: Path, tmp_path: Path) -> None:
    data = yaml.safe_load(kv_benchmark.read_text())
    data["functions"] = [{"name": "kv_nope"}]
    path = kv_benchmark.parent / "kv_missing.yaml"
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "run"
    out.mkdir()
    (out / KEPT).write_text("kept")
    with pytest.raises(InputError, match="kv_nope is not defined by the built library kv"):
        run_benchmark(RunOptions(path, [], out))
    assert sorted(p.name for p in out.iterdir()) == [KEPT]  # no run.json, no target directory


def test_error_lines_ignores_log_noise() -> None:
    assert error_lines("WARNING x: y\nnote: z\nerror: bad\n") == ["error: bad"]
