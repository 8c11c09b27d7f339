"""The lock file: every dependency pinned, torch on its CPU build, setup.sh installing through it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def locked() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version, f"not an exact pin: {line!r}"
            pins[_name(name)] = version
    return pins


def test_every_declared_dependency_is_pinned() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        declared += extra
    pins = locked()
    missing = sorted({_name(r) for r in declared} - pins.keys())
    assert not missing, f"not in requirements.lock (run scripts/lock.py): {missing}"
    assert pins["torch"] == "2.13.0"


def test_setup_installs_through_the_lock() -> None:
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    installs = [line for line in setup.splitlines() if ".venv/bin/pip install" in line]
    assert installs and all("-c requirements.lock" in line for line in installs)
    assert "requirements.lock" in setup.split("want=", 1)[1].splitlines()[0]
