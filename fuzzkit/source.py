"""Getting a library's source tree: Debian source packages, local paths, git, tarballs."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from fuzzkit.archives import unpack_archive
from fuzzkit.errors import ToolchainError
from fuzzkit.inputs import check_not_option
from fuzzkit.paths import cache_dir, file_lock

_MARKER = "source.json"
_DEB_SRC_HINT = (
    "enable Debian source packages: add `deb-src` to the `Types:` line of your sources file "
    "(e.g. /etc/apt/sources.list.d/debian.sources: `Types: deb deb-src`), then run "
    "`apt-get update`"
)


# A Debian source package name, optionally `/RELEASE` (a suite or codename: `bookworm`).
_APT_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]*(/[A-Za-z0-9.-]+)?")


class SourceSpec(BaseModel):
    """Where a library's source comes from; exactly one of apt, path, git, tarball.

    ``version`` pins a Debian version (``apt``) or a branch, tag or commit (``git``);
    ``apt: NAME=VERSION`` is the same as ``apt: NAME, version: VERSION``, and
    ``apt: NAME/RELEASE`` takes the package from one release (``foo/bookworm``), as
    ``apt-get source`` does: the newest upload is sometimes missing on the mirror.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    apt: str | None = None
    version: str | None = None
    path: str | None = None
    git: str | None = None
    tarball: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _split_apt_version(cls, data: Any) -> Any:
        """``apt: NAME=VERSION`` (apt-get's own spelling) means ``apt: NAME, version: VERSION``."""
        if not isinstance(data, dict) or not isinstance(data.get("apt"), str) or "=" not in data["apt"]:
            return data
        name, _, version = data["apt"].partition("=")
        if data.get("version") not in (None, version):
            raise ValueError(f"`apt: {data['apt']}` and `version: {data['version']}` disagree; give one")
        return {**data, "apt": name, "version": version or None}

    @model_validator(mode="after")
    def _exactly_one_kind(self) -> SourceSpec:
        kinds = [k for k in ("apt", "path", "git", "tarball") if getattr(self, k)]
        if len(kinds) != 1:
            raise ValueError(f"a source needs exactly one of apt, path, git, tarball (got {kinds or 'none'})")
        if self.version and kinds[0] not in ("apt", "git"):
            raise ValueError("`version` applies only to apt and git sources")
        for kind in ("apt", "git", "path", "tarball", "version"):
            # These become command arguments (apt-get, git); one read as an option would run it.
            check_not_option(getattr(self, kind), f"`{kind}:`")
        if self.apt and not _APT_NAME.fullmatch(self.apt):
            raise ValueError(
                f"`{self.apt}` is not a Debian source package: write NAME, NAME=VERSION or "
                "NAME/RELEASE (e.g. `foo`, `foo=1.2-1`, `foo/bookworm`)"
            )
        return self


def fetch_source(spec: SourceSpec, cache: Path | None = None) -> Path:
    """Return the root of the unpacked source tree, fetching it into the cache if needed.

    Args:
        spec: Where the source comes from.
        cache: Cache root; defaults to :func:`fuzzkit.paths.cache_dir`.

    Raises:
        ToolchainError: The source cannot be found or fetched.
    """
    if spec.path:
        root = Path(spec.path).expanduser().resolve()
        if not root.is_dir():
            raise ToolchainError(
                f"source path {root} is not a directory",
                "point `source: path:` in the benchmark YAML at the library's source directory",
            )
        return root
    base = (cache or cache_dir()) / "sources"
    if spec.apt:
        return _fetch_apt(spec.apt, spec.version, base / "apt")
    if spec.git:
        return _fetch_git(spec.git, spec.version, base / "git")
    assert spec.tarball
    return _fetch_tarball(spec.tarball, base / "tarball")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("_")[:60] or "src"


def _cached_root(dest: Path) -> Path | None:
    marker = dest / _MARKER
    if not marker.is_file():
        return None
    root = dest / json.loads(marker.read_text())["root"]
    return root if root.is_dir() else None


def _publish(tmp: Path, dest: Path, root_name: str, origin: dict[str, str | None]) -> Path:
    """Write the marker and move the finished tree into place in one rename."""
    (tmp / _MARKER).write_text(json.dumps({"root": root_name, **origin}, indent=1))
    if dest.exists():
        shutil.rmtree(dest)  # a marker-less leftover of an interrupted fetch
    os.rename(tmp, dest)
    return dest / root_name


def _single_dir(parent: Path) -> str:
    dirs = [p.name for p in parent.iterdir() if p.is_dir()]
    return dirs[0] if len(dirs) == 1 else "."


def _fetch_apt(name: str, version: str | None, base: Path) -> Path:
    """``apt-get source`` of ``name`` (``NAME`` or ``NAME/RELEASE``), older uploads on a 404."""
    dest = base / _slug(f"{name}_{version}" if version else name)
    package = name.partition("/")[0]
    with file_lock(base / f"{dest.name}.lock"):
        cached = _cached_root(dest)
        if cached:
            return cached
        versions = [version] if version else [None, *_apt_versions(package)[1:]]
        errors: list[str] = []
        for candidate in versions:
            tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=base))
            # An exact version names one upload whatever the release, so it drops `/RELEASE`.
            target = f"{package}={candidate}" if candidate else name
            proc = subprocess.run(["apt-get", "source", target], cwd=tmp, capture_output=True, text=True)
            output = proc.stdout + proc.stderr
            if proc.returncode == 0 and any(p.is_dir() for p in tmp.iterdir()):
                return _publish(tmp, dest, _single_dir(tmp), {"apt": name, "version": candidate})
            shutil.rmtree(tmp, ignore_errors=True)
            if "deb-src" in output:
                raise ToolchainError(f"apt-get source {target}: no deb-src entries", _DEB_SRC_HINT)
            if "Unable to find a source package" in output and not candidate:
                raise ToolchainError(
                    f"Debian has no source package `{name}`",
                    "check the name with `apt-cache showsrc NAME` (binary package names with a soname "
                    f"suffix map to their source package), or enable deb-src: {_DEB_SRC_HINT}",
                )
            errors.append(f"{target}: {_last_error(output)}")
            if "404" not in output:
                break  # only a missing file on the mirror is worth retrying older versions
    raise ToolchainError(
        f"apt-get source {name} failed: " + "; ".join(errors),
        "pin an available version with `source: {apt: NAME, version: VERSION}` "
        "(see `apt-cache showsrc NAME`), or use a git/tarball/path source",
    )


def _last_error(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.startswith("E:")]
    return lines[0][2:].strip() if lines else (output.strip().splitlines() or ["no output"])[-1]


def apt_has_source(name: str) -> bool:
    """Whether apt knows a Debian source package called ``name`` (no download)."""
    return bool(_APT_NAME.fullmatch(name)) and bool(_apt_versions(name.partition("/")[0]))


def _apt_versions(name: str) -> list[str]:
    """The distinct source versions apt knows for ``name``, newest first."""
    out = subprocess.run(["apt-cache", "showsrc", name], capture_output=True, text=True, check=False).stdout
    return newest_first(re.findall(r"^Version: (\S+)$", out, flags=re.MULTILINE))


def newest_first(versions: list[str]) -> list[str]:
    """Distinct Debian versions sorted newest first, by dpkg's own comparison."""
    unique = list(dict.fromkeys(versions))
    return sorted(unique, key=functools.cmp_to_key(_compare_debian_versions), reverse=True)


def _compare_debian_versions(a: str, b: str) -> int:
    if a == b:
        return 0
    lower = subprocess.run(["dpkg", "--compare-versions", a, "lt", b], check=False)
    return -1 if lower.returncode == 0 else 1


def _fetch_git(url: str, ref: str | None, base: Path) -> Path:
    digest = hashlib.sha256(f"{url}\0{ref or ''}".encode()).hexdigest()[:12]
    dest = base / f"{_slug(Path(url.rstrip('/')).stem)}-{digest}"
    with file_lock(base / f"{dest.name}.lock"):
        cached = _cached_root(dest)
        if cached:
            return cached
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=base))
        try:
            _clone(url, ref, tmp / "src")
        except ToolchainError:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return _publish(tmp, dest, "src", {"git": url, "version": ref})


def _clone(url: str, ref: str | None, target: Path) -> None:
    def git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)

    shallow = ["clone", "--depth", "1", *(["--branch", ref] if ref else []), "--", url, str(target)]
    if git(*shallow).returncode == 0:
        return
    # A commit id cannot be cloned by --branch: fall back to a full clone and checkout.
    shutil.rmtree(target, ignore_errors=True)
    full = git("clone", "--", url, str(target))
    if full.returncode == 0 and ref:
        full = git("checkout", "--detach", ref, cwd=target)
    if full.returncode != 0:
        raise ToolchainError(
            f"git clone {url}{' @ ' + ref if ref else ''} failed: {full.stderr.strip()[-400:]}",
            "check the URL and the `version` (branch, tag or commit) in the benchmark YAML",
        )


def _fetch_tarball(location: str, base: Path) -> Path:
    digest = hashlib.sha256(location.encode()).hexdigest()[:12]
    filename = Path(location.split("?")[0].rstrip("/")).name or "source.tar.gz"
    dest = base / f"{_slug(filename)}-{digest}"
    with file_lock(base / f"{dest.name}.lock"):
        cached = _cached_root(dest)
        if cached:
            return cached
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=base))
        try:
            archive = tmp / filename
            _download(location, archive)
            unpack_archive(archive, tmp / "src")
            archive.unlink()
        except (ToolchainError, OSError) as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, ToolchainError):
                raise
            raise ToolchainError(
                f"cannot fetch tarball {location}: {exc}",
                "check the `tarball:` URL or path in the benchmark YAML",
            ) from exc
        return _publish(tmp, dest, "src/" + _single_dir(tmp / "src"), {"tarball": location})


def _download(location: str, target: Path) -> None:
    local = Path(location[len("file://") :] if location.startswith("file://") else location)
    if "://" not in location or location.startswith("file://"):
        shutil.copyfile(local.expanduser(), target)
        return
    with urllib.request.urlopen(location, timeout=120) as response, open(target, "wb") as out:
        shutil.copyfileobj(response, out)
