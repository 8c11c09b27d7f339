"""Deterministic summaries of the files agents write: C sources and headers, build scripts.

A CodeMem entry is the file's "reading notes", ``M_f = (purpose, interface, edges)``::

    {"path": str, "core_purpose": str, "public_interface": [signature], "helpers": [signature],
     "dependency_edges": {"imports_from": [name], "imported_by": [path]},
     "library_calls": [name], "lines": int, "sha": str}

The C reader is a small lexer, not a compiler: comments and literals are blanked, preprocessor
lines are read for includes and dropped, and top-level declarations are split at ``;`` and at
brace blocks. That is enough for the harnesses, helpers and headers the agents write.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from typing import Any

from fuzzkit.vocabulary import c_words, libc_headers

# C's words that may stand before a parenthesis (`sizeof (x)`, `va_arg (ap, int)`): never calls.
C_KEYWORDS = (
    c_words("statement", "storage", "tag", "qualifier", "extension")
    | {name for name, header in libc_headers().items() if header in ("<stdarg.h>", "<stddef.h>")}
)
# Calls into the C runtime: never the library's API, even when no API list is given.
LIBC = frozenset(libc_headers())
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_NAME_BEFORE = re.compile(r"([A-Za-z_]\w*)\s*$")
_HEAD = re.compile(r"(?:\s+|#[^\n]*\n|/\*.*?\*/|//[^\n]*\n)*", re.S)
HARNESS_ENTRY = "LLVMFuzzerTestOneInput"


def blank_comments_and_literals(text: str) -> str:
    """The code with comments and string/char contents turned into spaces (newlines kept)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if two == "/*":
            close = text.find("*/", i + 2)
            end = n if close < 0 else close + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif two == "//":
            newline = text.find("\n", i)
            end = n if newline < 0 else newline
            out.append(" " * (end - i))
            i = end
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j, n)
            out.append(quote + " " * (j - i - 1) + (quote if j < n and text[j] == quote else ""))
            i = j + 1 if j < n and text[j] == quote else j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def leading_comment(text: str) -> str:
    """The first sentence of the file's opening comment (license and copyright notes skipped)."""
    head = _HEAD.match(text)
    for comment in re.findall(r"/\*.*?\*/|//[^\n]*", head.group(0) if head else "", re.S):
        words = " ".join(re.sub(r"^/[/*]|\*/$|^\s*\*", " ", line).strip()
                         for line in comment.splitlines()).split()
        sentence = " ".join(words).split(". ")[0].rstrip(".")
        if sentence and not re.search(r"copyright|license|spdx", sentence, re.I):
            return sentence[:120]
    return ""


def _drop_preprocessor(code: str) -> str:
    lines, out, continued = code.split("\n"), [], False
    for line in lines:
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.rstrip().endswith("\\")
        out.append("" if directive else line)
    return "\n".join(out)


def _signature(header: str) -> tuple[str, str] | None:
    """``(name, signature)`` when a top-level header ends in a parameter list."""
    text = " ".join(header.split())
    if not text.endswith(")") or text.startswith("typedef"):
        return None
    depth = 0
    for k in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[k], 0)
        if depth == 0:
            name = _NAME_BEFORE.search(text[:k])
            if name and name.group(1) not in C_KEYWORDS:
                return name.group(1), text
            return None
    return None


def top_level(code: str) -> list[dict[str, Any]]:
    """Top-level function definitions and prototypes, in file order.

    Each is ``{"kind": "definition" | "prototype", "name", "signature", "static", "body"}``.
    """
    found: list[dict[str, Any]] = []
    start, i, n = 0, 0, len(code)
    while i < n:
        ch = code[i]
        if ch == ";":
            sig = _signature(code[start:i])
            if sig and "=" not in code[start:i]:
                found.append({"kind": "prototype", "name": sig[0], "signature": sig[1],
                              "static": _is_static(code[start:i]), "body": ""})
            start = i + 1
        elif ch == "{":
            header = code[start:i]
            if re.fullmatch(r"\s*extern\s*\"\s*\"\s*", header):
                start = i + 1  # extern "C" { ... } only wraps declarations
            else:
                depth, j = 1, i + 1
                while j < n and depth:
                    depth += {"{": 1, "}": -1}.get(code[j], 0)
                    j += 1
                sig = _signature(header)
                if sig:
                    found.append({"kind": "definition", "name": sig[0], "signature": sig[1],
                                  "static": _is_static(header), "body": code[i + 1:j - 1]})
                    start = j
                i = j - 1  # a struct or initializer block runs on to its ';'
        elif ch == "}":
            start = i + 1
        i += 1
    return found


def _is_static(header: str) -> bool:
    return "static" in header.split()


def called_names(code: str) -> list[str]:
    """Names called in code (keywords excluded), in order of first call."""
    return list(dict.fromkeys(m for m in _CALL.findall(code) if m not in C_KEYWORDS))


def _purpose(path: str, decls: list[dict[str, Any]], calls: list[str], code: str,
             comment: str) -> str:
    defined = [d["name"] for d in decls if d["kind"] == "definition"]
    if HARNESS_ENTRY in defined:
        flow = f"calls {calls[0]} first" if calls else "calls no library function"
        if len(calls) > 1:
            flow += f", then {len(calls) - 1} more library function(s)"
        notes = []
        if re.search(r"\[\s*\w+\s*\]\s*=\s*'\s*'|\[\s*\w+\s*\]\s*=\s*0\s*;", code) and "memcpy" in code:
            notes.append("copies the input into a NUL-terminated buffer")
        if re.search(r"\b(data|buf|input)\s*\[\s*\d+\s*\]", code):
            notes.append("derives options from leading input bytes")
        purpose = "libFuzzer harness: " + "; ".join([flow, *notes])
    elif path.endswith((".h", ".hpp")):
        protos = [d for d in decls if d["kind"] == "prototype"]
        purpose = f"C header declaring {len(protos)} function(s)"
    else:
        purpose = "C source defining " + (", ".join(defined[:6]) or "no functions")
    if comment:
        purpose = f"{comment}. {purpose}"
    return purpose


def summarize_c_file(path: str, text: str, api_names: Collection[str] = ()) -> dict[str, Any]:
    """The CodeMem entry of a C source or header (``imported_by`` is filled by the caller).

    ``library_calls`` are the calls to names in ``api_names``; without a list, calls to
    functions the file neither defines nor gets from the C runtime.
    """
    includes = list(dict.fromkeys(_INCLUDE.findall(text)))
    comment = leading_comment(text)
    code = _drop_preprocessor(blank_comments_and_literals(text))
    decls = top_level(code)
    defined = {d["name"] for d in decls if d["kind"] == "definition"}
    bodies = "\n".join(d["body"] for d in decls if d["kind"] == "definition")
    calls = called_names(bodies)
    api = set(api_names)
    lib_calls = [c for c in calls if c in api] if api else \
        [c for c in calls if c not in defined and c not in LIBC]
    public = [d["signature"] for d in decls if d["kind"] == "definition" and not d["static"]]
    if not public:
        public = [d["signature"] for d in decls if d["kind"] == "prototype" and not d["static"]]
    helpers = [d["signature"] for d in decls if d["kind"] == "definition" and d["static"]]
    return {
        "path": path,
        "core_purpose": _purpose(path, decls, lib_calls, code, comment),
        "public_interface": list(dict.fromkeys(public)),
        "helpers": helpers,
        "dependency_edges": {"imports_from": includes, "imported_by": []},
        "library_calls": lib_calls,
        "lines": text.count("\n") + (0 if text.endswith("\n") or not text else 1),
        "sha": hashlib.sha256(text.encode()).hexdigest()[:16],
    }


def summarize_script(path: str, text: str) -> dict[str, Any]:
    """The CodeMem entry of a build script: what it compiles and links, what it produces."""
    inputs = list(dict.fromkeys(re.findall(r"[\w./-]+\.(?:c|h|cc|a|so)\b", text)))
    libs = list(dict.fromkeys(re.findall(r"(?<!\S)-l(\w+)", text)))
    outputs = list(dict.fromkeys(re.findall(r"(?<!\S)-o\s+(\S+)", text)))
    tools = [t for t in ("clang", "gcc", "cc", "ar", "make", "cmake") if re.search(rf"\b{t}\b", text)]
    purpose = "build script" + (f" running {', '.join(tools)}" if tools else "")
    if outputs:
        purpose += f"; produces {', '.join(outputs)}"
    return {
        "path": path, "core_purpose": purpose, "public_interface": [f"output: {o}" for o in outputs],
        "helpers": [], "dependency_edges": {"imports_from": inputs + [f"-l{x}" for x in libs],
                                           "imported_by": []},
        "library_calls": [], "lines": text.count("\n") + (0 if text.endswith("\n") or not text else 1),
        "sha": hashlib.sha256(text.encode()).hexdigest()[:16],
    }


def summarize_file(path: str, text: str, api_names: Collection[str] = ()) -> dict[str, Any]:
    """The CodeMem entry of any file the agents write (C, header, or script/other)."""
    if path.endswith((".c", ".h", ".cc", ".cpp", ".hpp")):
        return summarize_c_file(path, text, api_names)
    return summarize_script(path, text)
