"""Naming a Debian source package: NAME=VERSION, NAME/RELEASE, and benchmarks without source."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_graph.benchmark import BenchmarkError, load_benchmark
from fuzzkit.errors import ToolchainError
from fuzzkit.init_benchmark import make_benchmark, project_name
from fuzzkit.source import SourceSpec

pytestmark = pytest.mark.toolchain


def test_apt_name_version_and_release_forms() -> None:
    pinned = SourceSpec.model_validate({"apt": "zlib=1:1.2.13.dfsg-1"})
    assert (pinned.apt, pinned.version) == ("zlib", "1:1.2.13.dfsg-1")
    release = SourceSpec.model_validate({"apt": "zlib/bookworm"})
    assert (release.apt, release.version) == ("zlib/bookworm", None)
    assert project_name(release, Path("/nowhere/zlib-1.2.13")) == "zlib"
    with pytest.raises(ValueError, match="disagree"):
        SourceSpec.model_validate({"apt": "zlib=1", "version": "2"})


def test_bad_apt_name_is_one_line_saying_what_to_write(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError) as info:
        make_benchmark({"apt": "Not A Package"}, cache=tmp_path)
    assert "\n" not in info.value.message and "NAME=VERSION" in info.value.message


OSS_FUZZ_GEN = """\
"functions":
- "name": "uncompress"
  "params":
  - "name": "dest"
    "type": "unsigned char *"
  - "name": "destLen"
    "type": "unsigned long *"
  - "name": "source"
    "type": "const unsigned char *"
  - "name": "sourceLen"
    "type": "unsigned long"
  "return_type": "int"
  "signature": "int uncompress(Bytef *, uLongf *, const Bytef *, uLong)"
"language": "c"
"project": "{project}"
"target_name": "zlib_uncompress_fuzzer"
"target_path": "/src/zlib_uncompress_fuzzer.cc"
"""


def test_oss_fuzz_gen_benchmark_without_source_uses_debian_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "zlib.yaml"
    path.write_text(OSS_FUZZ_GEN.format(project="zlib"))
    bench = load_benchmark(path)
    assert bench.source.apt == "zlib" and [f.name for f in bench.functions] == ["uncompress"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "zlib" in err and "source:" in err
    unknown = tmp_path / "nowhere.yaml"
    unknown.write_text(OSS_FUZZ_GEN.format(project="no-such-project-anywhere"))
    with pytest.raises(BenchmarkError, match="no source section"):
        load_benchmark(unknown)
