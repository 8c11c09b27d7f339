"""Safe unpacking of source archives (no members escaping the target directory)."""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path

from fuzzkit.errors import ToolchainError


def unpack_archive(archive: Path, target: Path) -> None:
    """Unpack a ``.tar.*``/``.tgz`` or ``.zip`` archive into ``target``.

    Raises:
        ToolchainError: The archive is unreadable or has a member outside ``target``.
    """
    target.mkdir(parents=True, exist_ok=True)
    root = target.resolve()
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                for name in zf.namelist():
                    _check_inside(root, root / name, archive)
                zf.extractall(target)
            return
        with tarfile.open(archive) as tf:
            members = tf.getmembers()
            for member in members:
                _check_inside(root, root / member.name, archive)
                if member.islnk() or member.issym():
                    _check_inside(root, (root / member.name).parent / member.linkname, archive)
            tf.extractall(target, members=members, filter="data")
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as exc:
        raise ToolchainError(
            f"cannot unpack {archive.name}: {exc}",
            "use a .tar.gz/.tar.xz/.tar.bz2/.zip source archive",
        ) from exc


def _check_inside(root: Path, member: Path, archive: Path) -> None:
    if not member.resolve().is_relative_to(root):
        raise ToolchainError(
            f"{archive.name} has a member outside its directory: {member}",
            "the archive is malformed or hostile; use another source",
        )
