"""Repairs of names the compiler or linker did not know: headers, functions, types, identifiers.

A libc name gets its standard header, an API name its library header; a misspelt one becomes
the closest name the API has; a call of a function the linked library lacks is taken out.
"""

from __future__ import annotations

import re
from pathlib import Path

from agents.offline.fixer_core import FixerBase
from agents.offline.fixer_edit import expression_end, statement_span
from agents.offline.libc import LIBC
from fuzzkit.guidance_facts import Rule


def missing_header(fixer: FixerBase, header: str) -> None:
    """A header that was not found: the closest header the library ships, if one is close."""
    name = Path(header).name
    pool = [h.strip('"<>') for h in fixer.headers]
    best = name if name in pool else fixer.closest(name, pool, 0.5)
    pattern = rf"#\s*include\s*[<\"]{re.escape(header)}[>\"]"
    if best and re.search(pattern, fixer.code):
        fixer.code = re.sub(pattern, f'#include "{best}"', fixer.code)
        fixer.fixes.append(fix := f'include "{best}" instead of "{header}"')
        fixer.rules.append(Rule(kind="include", name=f'"{best}"', text=fix))
    else:
        fixer.unresolved.append(
            f"header {header} not found: add its directory to the build's include_dirs"
        )


def undeclared_function(fixer: FixerBase, name: str) -> None:
    """A call of an undeclared function: its header, or the closest API name."""
    if name in LIBC:
        fixer.include(LIBC[name], name)
    elif name in fixer.api:
        header = fixer.library_header(name)
        if header:
            fixer.include(header, name)
    elif fixer.missing_library_headers(name):
        pass
    elif best := fixer.closest(name, fixer.api.keys()):
        fixer.rename(name, best, "closest API name")
    else:
        fixer.unresolved.append(f"{name} is neither a libc nor an API function")


def unknown_type(fixer: FixerBase, name: str, pos: int) -> None:
    """An unknown type name: its header, or the closest type the API uses."""
    if name in LIBC:
        fixer.include(LIBC[name], name)
    elif name in fixer.types and fixer.headers:
        fixer.include(fixer.headers[0], name)
    elif fixer.missing_library_headers(name):
        pass
    elif best := fixer.closest(name, fixer.types):
        fixer.rename(name, best, "closest API type")
    else:
        fixer.unresolved.append(f"unknown type {name}")


def undeclared_identifier(fixer: FixerBase, name: str, msg: str, pos: int) -> None:
    """An undeclared identifier: its header, clang's suggestion, or the closest API name."""
    suggested = re.search(r"did you mean '(\w+)'", msg)
    if name in LIBC:
        fixer.include(LIBC[name], name)
    elif suggested and suggested.group(1) != name:
        fixer.rename(name, suggested.group(1), "clang's suggestion")
    elif name in fixer.api and fixer.library_header(name):
        fixer.include(fixer.library_header(name) or "", name)
    elif name in fixer.types and fixer.headers:
        fixer.include(fixer.headers[0], name)
    elif fixer.missing_library_headers(name):
        pass
    elif _only_in_casts(fixer, name):
        _drop_casts(fixer, name)
    elif best := fixer.closest(name, fixer.api.keys()):
        fixer.rename(name, best, "closest API name")
    else:
        fixer.unresolved.append(f"undeclared identifier {name}")


def _only_in_casts(fixer: FixerBase, name: str) -> bool:
    """Whether ``name`` appears only as a scalar cast (``(acme_ulong)size``).

    Then it is a type this library does not have, and the value can go to the call as it is.
    """
    uses = len(re.findall(rf"\b{re.escape(name)}\b", fixer.code))
    return uses > 0 and uses == len(re.findall(_cast(name), fixer.code))


def _drop_casts(fixer: FixerBase, name: str) -> None:
    """Remove every ``(name)`` cast; the argument converts implicitly to the parameter type."""
    for m in re.finditer(_cast(name), fixer.code):
        fixer.edit(m.start(), m.end(), "", f"remove the casts to {name}: the library has no such type")


def unlinked(fixer: FixerBase, name: str) -> None:
    """An undefined reference at link time: the closest API name, or the call taken out."""
    if name in ("main", "LLVMFuzzerTestOneInput"):
        fixer.unresolved.append(
            f"{name} is missing at link time: build with "
            "-fsanitize=fuzzer and define LLVMFuzzerTestOneInput"
        )
        return
    if name in fixer.api:
        fixer.unresolved.append(
            f"{name} is declared but not linked: check that the library "
            "build compiles the file that defines it"
        )
        return
    best = fixer.closest(name, fixer.api.keys(), 0.8)
    if best:
        fixer.rename(name, best, "closest API name; the original is not in the library")
        return
    removed = False
    for m in reversed(list(re.finditer(rf"\b{re.escape(name)}\s*\(", fixer.code))):
        start, end = statement_span(fixer.code, m.start())
        stmt = fixer.code[start:end]
        prototype = rf"\s*[\w\s*]+\b{re.escape(name)}\s*\([^=]*\)\s*;\s*$"
        if re.match(prototype, stmt) and not re.match(r"\s*(return|\(void\))", stmt):
            fixer.code = fixer.code[:start] + "\n" + fixer.code[end:]  # its declaration
        elif re.match(rf"\s*(\(void\)\s*)?{re.escape(name)}\s*\(", stmt):
            fixer.code = fixer.code[:start] + f" /* {name} is not in the library */" + fixer.code[end:]
        else:
            close = expression_end(fixer.code, m.end())
            fixer.code = fixer.code[: m.start()] + "0" + fixer.code[close + 1 :]
        removed = True
    if removed:
        fixer.fixes.append(fix := f"remove the call to {name}: not in the linked library")
        fixer.rules.append(Rule(kind="avoid", name=name, text=fix))
    else:
        fixer.unresolved.append(f"undefined reference to {name}")


def _cast(name: str) -> str:
    """A pattern for a cast to the plain type ``name`` (not to a pointer)."""
    return rf"\(\s*{re.escape(name)}\s*\)\s*(?=[\w(])"
