"""Stack frames in sanitizer reports: parsing, and telling project code from runtime code."""

from __future__ import annotations

import re
from dataclasses import dataclass

from fuzzkit.vocabulary import libc_headers

FRAME = re.compile(r"^\s*#(?P<n>\d+) 0x[0-9a-fA-F]+(?: in (?P<rest>.*)| +\((?P<mod>.*)\))$")
BUILD_ID = re.compile(r" \(BuildId: [0-9a-fA-F]+\)")
_MODULE = re.compile(r"^(?P<func>.*?) ?\((?P<module>[^()]*)\+0x[0-9a-fA-F]+\)$")
_LOCATION = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::\d+)?$")

_RUNTIME_PREFIXES = (
    "__sanitizer", "__asan", "__lsan", "__ubsan", "__interceptor", "__interception",
    "fuzzer::", "__libc_", "_start", "__GI_", "__pthread", "__llvm_profile",
    "std::", "operator new", "operator delete",
)  # fmt: skip
_RUNTIME_FUNCS = {name for name, header in libc_headers().items() if header in ("<stdlib.h>", "<string.h>")}
_RUNTIME_FUNCS |= {
    "raise", "__assert_fail", "__stack_chk_fail", "main", "MallocHook", "posix_memalign", "aligned_alloc",
}  # fmt: skip
_RUNTIME_PATH_MARKERS = ("compiler-rt/", "/sanitizer_common/", "/libfuzzer/", "/asan/", "/lsan/")
HARNESS_FUNCS = ("LLVMFuzzerTestOneInput", "LLVMFuzzerInitialize")


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

    def is_fuzzer(self) -> bool:
        """Whether the frame is libFuzzer's own code (its driver allocates the input buffer)."""
        return self.function.startswith("fuzzer::")

    def render(self) -> str:
        """``function file:line`` (or just the function without debug info)."""
        return f"{self.function} {self.file}:{self.line}" if self.file else self.function


def parse_frame(rest: str) -> Frame:
    """A frame from the text after ``#N 0x... in``."""
    rest = BUILD_ID.sub("", rest.strip())
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


def read_stack(lines: list[str]) -> list[Frame]:
    """The first stack in ``lines`` (frames from ``#0`` until the stack ends)."""
    frames: list[Frame] = []
    for line in lines:
        match = FRAME.match(line)
        if match is None:
            if frames:
                break  # the first stack ended (e.g. "freed by thread T0 here:" follows)
            continue
        if int(match["n"]) == 0 and frames:
            break
        rest = match["rest"]
        frames.append(parse_frame(rest) if rest is not None else Frame(function=""))
    return frames


def stack_after(lines: list[str], header: re.Pattern[str]) -> list[Frame]:
    """The stack that follows the first line matching ``header`` (e.g. ``allocated by``)."""
    for i, line in enumerate(lines):
        if header.search(line):
            return read_stack(lines[i + 1 :])
    return []
