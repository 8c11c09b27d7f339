from __future__ import annotations

import io
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from fuzzkit.errors import ToolchainError
from fuzzkit.source import SourceSpec, _apt_versions, fetch_source, newest_first

pytestmark = pytest.mark.toolchain


def test_apt_fetch_unpacks_and_applies_debian_patches(cjson_root: Path, cache: Path) -> None:
    assert (cjson_root / "cJSON.c").is_file()
    assert (cjson_root / "debian" / "patches").is_dir()
    # dpkg-source applied the patch series: quilt records it in .pc/applied-patches.
    applied = (cjson_root / ".pc" / "applied-patches").read_text().split()
    assert applied, "no Debian patch was applied"
    assert cjson_root.is_relative_to(cache)


def test_apt_fetch_reuses_the_unpacked_tree(cjson_root: Path, cache: Path) -> None:
    marker = cjson_root.parent / "source.json"
    before = marker.stat().st_mtime_ns
    start = time.monotonic()
    again = fetch_source(SourceSpec(apt="cjson"), cache=cache)
    assert again == cjson_root
    assert time.monotonic() - start < 0.5
    assert marker.stat().st_mtime_ns == before


def test_unknown_apt_package_is_a_clear_error(cache: Path) -> None:
    with pytest.raises(ToolchainError) as info:
        fetch_source(SourceSpec(apt="no-such-package-logicfuzz"), cache=cache)
    assert "no source package" in str(info.value)
    assert info.value.hint


def test_debian_versions_sort_newest_first() -> None:
    versions = ["1.7.14-2", "1.7.15-1", "1:0.1-1", "1.7.15-1+deb12u4", "1.7.15-1", "1.7.15~rc1-1"]
    assert newest_first(versions) == ["1:0.1-1", "1.7.15-1+deb12u4", "1.7.15-1", "1.7.15~rc1-1", "1.7.14-2"]
    assert _apt_versions("cjson")[0].startswith("1.7.")


def test_spec_needs_exactly_one_kind() -> None:
    with pytest.raises(ValidationError):
        SourceSpec()
    with pytest.raises(ValidationError):
        SourceSpec(apt="cjson", path="/")
    with pytest.raises(ValidationError):
        SourceSpec(path=".", version="1.0")


def test_path_source_is_used_in_place(tmp_path: Path) -> None:
    assert fetch_source(SourceSpec(path=str(tmp_path))) == tmp_path.resolve()
    with pytest.raises(ToolchainError, match="not a directory"):
        fetch_source(SourceSpec(path=str(tmp_path / "missing")))


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def test_git_source_clones_branch_tag_and_commit(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", "-b", "main", cwd=repo)
    (repo / "lib.c").write_text("int one(void) { return 1; }\n")
    _git("add", ".", cwd=repo)
    _git("commit", "-q", "-m", "first", cwd=repo)
    first = _git("rev-parse", "HEAD", cwd=repo)
    _git("tag", "v1", cwd=repo)
    (repo / "lib.c").write_text("int two(void) { return 2; }\n")
    _git("commit", "-q", "-am", "second", cwd=repo)
    cache = tmp_path / "cache"
    url = f"file://{repo}"

    head = fetch_source(SourceSpec(git=url), cache=cache)
    assert "two" in (head / "lib.c").read_text()
    tagged = fetch_source(SourceSpec(git=url, version="v1"), cache=cache)
    assert "one" in (tagged / "lib.c").read_text()
    pinned = fetch_source(SourceSpec(git=url, version=first), cache=cache)
    assert "one" in (pinned / "lib.c").read_text()
    assert fetch_source(SourceSpec(git=url, version="v1"), cache=cache) == tagged
    with pytest.raises(ToolchainError, match="git clone"):
        fetch_source(SourceSpec(git=url, version="no-such-ref"), cache=cache)


def _tarball(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def test_tarball_source_unpacks_to_its_top_directory(tmp_path: Path) -> None:
    archive = tmp_path / "mylib-1.0.tar.gz"
    _tarball(archive, {"mylib-1.0/lib.c": b"int f(void){return 0;}\n", "mylib-1.0/lib.h": b""})
    root = fetch_source(SourceSpec(tarball=str(archive)), cache=tmp_path / "cache")
    assert root.name == "mylib-1.0"
    assert (root / "lib.c").is_file()
    assert fetch_source(SourceSpec(tarball=f"file://{archive}"), cache=tmp_path / "cache").is_dir()


def test_tarball_with_escaping_member_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tar.gz"
    _tarball(archive, {"../escape.c": b"x"})
    with pytest.raises(ToolchainError, match="outside"):
        fetch_source(SourceSpec(tarball=str(archive)), cache=tmp_path / "cache")
    assert not (tmp_path / "cache" / "sources" / "escape.c").exists()


def test_missing_deb_src_tells_the_user_what_to_add(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "binary-only.sources").write_text(
        "Types: deb\nURIs: file:/nonexistent\nSuites: stable\nComponents: main\n"
    )
    config = tmp_path / "apt.conf"
    config.write_text(f'Dir::Etc::SourceList "/dev/null";\nDir::Etc::SourceParts "{parts}";\n')
    monkeypatch.setenv("APT_CONFIG", str(config))
    with pytest.raises(ToolchainError) as info:
        fetch_source(SourceSpec(apt="cjson"), cache=tmp_path / "cache")
    assert "deb-src" in info.value.hint and "Types:" in info.value.hint
