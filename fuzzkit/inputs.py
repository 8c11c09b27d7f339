"""Checks of names and values a user gives, before any of them reaches a path or a command.

A function name becomes a directory under the run directory and a C call in the harness; a
project name becomes a directory; source values become command arguments. Each is checked
where it enters (the benchmark loader, the CLI) and refused with one line that names the
value and says what is allowed.
"""

from __future__ import annotations

import re

# A C identifier; 200 characters keep a directory named after it under every file system's limit.
C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")
# One path component: no separator, not `.` or `..`, and no leading `-` (read as an option) or `.`
# (a hidden directory). `+` is allowed: Debian source package names contain it.
PROJECT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}")


class InputError(ValueError):
    """A value the user gave that cannot be used; the message names it and what is allowed."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_function_name(name: object, where: str = "") -> str:
    """``name`` if it is a C identifier (a target function's name must be one).

    Raises:
        InputError: Empty, not a string, or not an identifier.
    """
    if isinstance(name, str) and C_IDENTIFIER.fullmatch(name):
        return name
    prefix = f"{where}: " if where else ""
    what = "an empty function name" if name in ("", None) else f"function name {_shown(name)}"
    raise InputError(
        f"{prefix}{what} is not a C identifier; a target function's name has letters, digits "
        "and _ only and does not start with a digit (e.g. acme_parse)"
    )


def check_project_name(name: object, where: str = "") -> str:
    """``name`` if it is one safe path component (it names the project's results directory).

    Raises:
        InputError: Empty, not a string, or not letters, digits, ``-``, ``_``, ``.``, ``+``.
    """
    if isinstance(name, str) and PROJECT_NAME.fullmatch(name):
        return name
    prefix = f"{where}: " if where else ""
    raise InputError(
        f"{prefix}project name {_shown(name)} is not allowed; use one path component of letters, "
        "digits, -, _, . and + that starts with a letter, digit or _ (e.g. acme or acme-2.1), "
        "at most 100 characters"
    )


def check_not_option(value: object, what: str) -> None:
    """Refuse a value that a command would read as an option (it starts with ``-``).

    Raises:
        InputError: ``value`` is a string starting with ``-``.
    """
    if isinstance(value, str) and value.lstrip().startswith("-"):
        raise InputError(
            f"{what} {_shown(value)} starts with '-', which a command would read as an option; "
            "give a name, URL or path that does not start with '-' (prefix a path with ./)"
        )
