"""Parsing ASan, LeakSanitizer and libFuzzer reports into stable crash descriptions."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any

_ERROR = re.compile(r"^==\d+==\s*ERROR: (?P<tool>\w+): (?P<what>.*)$")
_SUMMARY = re.compile(r"^SUMMARY: (?P<tool>\w+): (?P<what>.*)$")
_FRAME = re.compile(r"^\s*#(?P<n>\d+) 0x[0-9a-fA-F]+(?: in (?P<rest>.*)| +\((?P<mod>.*)\))$")
_BUILD_ID = re.compile(r" \(BuildId: [0-9a-fA-F]+\)")
_MODULE = re.compile(r"^(?P<func>.*?) ?\((?P<module>[^()]*)\+0x[0-9a-fA-F]+\)$")
_LOCATION = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::\d+)?$")
_UNIT = re.compile(r"Test unit written to (?P<path>\S+)")

_RUNTIME_PREFIXES = (
    "__sanitizer", "__asan", "__lsan", "__ubsan", "__interceptor", "__interception",
    "fuzzer::", "__libc_", "_start", "__GI_", "__pthread", "__llvm_profile",
    "std::", "operator new", "operator delete",
)  # fmt: skip
_RUNTIME_FUNCS = {
    "malloc", "calloc", "realloc", "free", "strdup", "strndup", "memcpy", "memmove", "memset",
    "memcmp", "strlen", "strcpy", "strncpy", "strcmp", "strncmp", "raise", "abort",
    "__assert_fail", "__stack_chk_fail", "main", "MallocHook", "posix_memalign",
    "aligned_alloc",
}  # fmt: skip
_RUNTIME_PATH_MARKERS = ("compiler-rt/", "/sanitizer_common/", "/libfuzzer/", "/asan/", "/lsan/")
_HARNESS_FUNCS = ("LLVMFuzzerTestOneInput", "LLVMFuzzerInitialize")
_KIND_ALIASES = {"out-of-memory": "oom", "allocator": "oom"}


@dataclass(frozen=True)
class Frame:
    """One stack frame; ``file`` is empty and ``line`` 0 when there is no debug info."""

    function: str
    file: str = ""
    line: int = 0

    def is_project(self) -> bool:
        """Whether the frame is in code built by the project (harness or library)."""
        if not self.file or not self.file.startswith("/") or self.file.startswith("/usr/"):
            return False
        if any(marker in self.file for marker in _RUNTIME_PATH_MARKERS):
            return False
        name = self.function
        return name not in _RUNTIME_FUNCS and not name.startswith(_RUNTIME_PREFIXES)


@dataclass
class CrashReport:
    """A sanitizer or libFuzzer failure.

    ``kind`` is the sanitizer's own name (``heap-buffer-overflow``, ``heap-use-after-free``,
    ``double-free``, ``SEGV``, ``stack-overflow``, ``allocation-size-too-big``...) or one of
    ``leak``, ``timeout``, ``oom``, ``deadly-signal``, ``fuzz-target-exited``.
    ``signature`` is the kind plus up to three project frames (no addresses, no line
    numbers), so the same bug gives the same signature across runs and harness edits.
    """

    kind: str
    summary: str
    frames: list[Frame] = field(default_factory=list)
    signature: str = ""
    in_harness: bool = False
    near_init: bool = False
    reproducer: str | None = None
    excerpt: str = ""

    @property
    def project_frames(self) -> list[Frame]:
        """Frames in project code, innermost first."""
        return [f for f in self.frames if f.is_project()]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CrashReport:
        """Inverse of :meth:`to_dict`."""
        frames = [Frame(**f) for f in data.get("frames", [])]
        return cls(**{**data, "frames": frames})


def parse_sanitizer_report(text: str, harness_name: str = "") -> CrashReport | None:
    """Find the first sanitizer/libFuzzer error in ``text`` and describe it.

    Args:
        text: A libFuzzer log or a bare sanitizer report.
        harness_name: The harness file (name or path); frames in a file with the same
            name count as harness frames. When empty, ``LLVMFuzzerTestOneInput`` and
            ``LLVMFuzzerInitialize`` mark the harness.

    Returns:
        The report, or None when the text holds no error.
    """
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if _ERROR.match(ln.strip())), None)
    if start is None:
        return None
    error = _ERROR.match(lines[start].strip())
    assert error is not None
    summary_idx = next((i for i in range(start, len(lines)) if _SUMMARY.match(lines[i])), None)
    summary_match = _SUMMARY.match(lines[summary_idx]) if summary_idx is not None else None
    source = summary_match or error
    kind = _kind(source["tool"], source["what"])
    frames = _first_stack(lines[start + 1 :])
    project = [f for f in frames if f.is_project()]
    harness = PurePath(harness_name).name if harness_name else ""
    in_harness = False
    if project:
        top = project[0]
        in_harness = PurePath(top.file).name == harness if harness else top.function in _HARNESS_FUNCS
    before = "\n".join(lines[:start])
    fuzzing_log = "INFO: Seed:" in before or "INFO: Running with" in before
    near_init = any(f.function == "LLVMFuzzerInitialize" for f in frames) or (
        fuzzing_log and "INITED" not in before
    )
    # libFuzzer writes the unit before a timeout report and after other reports.
    units = _UNIT.findall(text)
    return CrashReport(
        kind=kind,
        summary=_BUILD_ID.sub("", (summary_match or error)[0].strip()),
        frames=frames,
        signature=_signature(kind, project),
        in_harness=in_harness,
        near_init=near_init,
        reproducer=units[-1] if units else None,
        excerpt=_excerpt(lines, start, summary_idx),
    )


def _kind(tool: str, what: str) -> str:
    """The failure kind from a SUMMARY (preferred) or ERROR line's tool and text."""
    if tool == "LeakSanitizer" or re.match(r"\d+ byte\(s\) leaked", what):
        return "leak"
    if tool == "libFuzzer":
        # libFuzzer names failures with phrases: "deadly signal", "timeout after 2 seconds".
        phrase = re.sub(r"\s+after\s.*$", "", what.split("(")[0].strip())
        word = phrase.replace(" ", "-")
    else:
        word = (re.sub(r"^attempting ", "", what).split() or ["unknown"])[0]
    if word == "requested":  # "requested allocation size ... exceeds maximum supported size"
        word = "allocation-size-too-big"
    return _KIND_ALIASES.get(word, word)


def _parse_frame(rest: str) -> Frame:
    rest = _BUILD_ID.sub("", rest.strip())
    module = _MODULE.match(rest)
    if module:
        return Frame(function=module["func"].strip())
    func, _, location = rest.rpartition(" ")
    if not func:
        return Frame(function=location)
    loc = _LOCATION.match(location)
    if loc:
        return Frame(function=func, file=loc["file"], line=int(loc["line"]))
    return Frame(function=func, file=location)


def _first_stack(lines: list[str]) -> list[Frame]:
    frames: list[Frame] = []
    for line in lines:
        match = _FRAME.match(line)
        if match is None:
            if frames:
                break  # the first stack ended (e.g. "freed by thread T0 here:" follows)
            continue
        if int(match["n"]) == 0 and frames:
            break
        rest = match["rest"]
        frames.append(_parse_frame(rest) if rest is not None else Frame(function=""))
    return frames


def _signature(kind: str, project: list[Frame]) -> str:
    names: list[str] = []
    for frame in project:
        # Recursion would fill all three slots with one function; collapse repeats.
        if not names or names[-1] != frame.function:
            names.append(frame.function)
        if len(names) == 3:
            break
    return kind + ("@" + "<".join(names) if names else "")


def _excerpt(lines: list[str], start: int, summary_idx: int | None, limit: int = 60) -> str:
    end = summary_idx + 1 if summary_idx is not None else min(len(lines), start + limit)
    kept = [_BUILD_ID.sub("", ln.rstrip()) for ln in lines[start:end]]
    if len(kept) > limit:
        kept = kept[: limit - 5] + ["    ..."] + kept[-4:]
    return "\n".join(kept)
