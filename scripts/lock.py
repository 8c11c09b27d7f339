"""Write ``requirements.lock``: the exact versions of a tested ``.venv`` (``--dev`` setup).

``scripts/setup.sh`` installs through it as a pip constraints file, so a fresh machine gets the
versions CI tested, for the base install and every extra alike. Run it after changing the
dependencies in ``pyproject.toml`` and running ``bash scripts/setup.sh --dev``::

    .venv/bin/python scripts/lock.py            # rewrite requirements.lock
    .venv/bin/python scripts/lock.py --check    # exit 1 if the venv and the lock disagree

Left out: the project itself (editable) and packages installed from a local file (the
llama.cpp server wheel, built on each machine from its PyPI sdist). Local version labels are
dropped (``torch==2.13.0+cpu`` is locked as ``torch==2.13.0``, which pip matches with the CPU
build the index offers).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
HEADER = ("# Exact versions of a tested `.venv` (scripts/lock.py writes it; scripts/setup.sh installs\n"
          "# through it as a constraints file). Do not edit by hand.\n")


def frozen(python: str = sys.executable) -> list[str]:
    """``name==version`` lines of the environment, sorted, without editable or local-file ones."""
    out = subprocess.run([python, "-m", "pip", "freeze", "--exclude-editable"], check=True,
                         capture_output=True, text=True).stdout
    lines = []
    for line in out.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "-e ")) or " @ " in line:
            continue
        name, sep, version = line.partition("==")
        if not sep:
            continue
        lines.append(f"{name}=={re.sub(r'[+].*$', '', version)}")
    return sorted(lines, key=str.lower)


def main(argv: list[str] | None = None) -> int:
    """Write (or ``--check``) the lock; exit code 1 when ``--check`` finds a difference."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    text = HEADER + "\n".join(frozen()) + "\n"
    if args.check:
        same = LOCK.is_file() and LOCK.read_text() == text
        print("requirements.lock matches the venv" if same else
              "requirements.lock differs from the venv: run .venv/bin/python scripts/lock.py")
        return 0 if same else 1
    LOCK.write_text(text)
    print(f"wrote {LOCK.name}: {text.count(chr(10)) - 2} packages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
