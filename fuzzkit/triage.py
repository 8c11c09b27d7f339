"""Crash categories in the spirit of oss-fuzz-gen's triage, and evidence of harness misuse.

Categories, checked in this order (the first that applies wins):

* ``timeout``, ``oom``, ``leak``: resource failures, by the report's kind;
* ``near-init``: the crash came before libFuzzer finished reading its initial corpus, or
  from ``LLVMFuzzerInitialize``: almost always a harness that fails for every input;
* ``harness``: the innermost project frame is in the harness file;
* ``library``: the innermost project frame is in library code;
* ``unknown``: no frame in project code.

A crash in library code can still be the harness's fault. :func:`triage` collects what a
reviewer needs to tell (the library call the harness made on the faulting path, the access,
who allocated the overflowed buffer) and writes a one-line ``misuse_hint`` when that
evidence points at the harness, e.g. the library reading past the end of libFuzzer's own
input buffer, which the harness passed on unchanged (a missing NUL terminator).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

from fuzzkit.frames import HARNESS_FUNCS, Frame, read_stack, stack_after
from fuzzkit.vocabulary import alternation

CATEGORIES = ("timeout", "oom", "leak", "near-init", "harness", "library", "unknown")
_RESOURCE_KINDS = {"timeout": "timeout", "oom": "oom", "leak": "leak", "malloc-limit": "oom"}
_ACCESS = re.compile(r"^(?P<op>READ|WRITE) of size (?P<size>\d+)")
_REGION = re.compile(
    r"is located (?P<off>\d+) bytes (?P<where>to the right|to the left|inside) of (?P<n>\d+)-byte region"
)
_GLOBAL = re.compile(r"of global variable '[^']+' defined in '(?P<file>[^':]+)")
_ALLOCATED = re.compile(r"allocated by thread")
_FREED = re.compile(r"freed by thread")
_STACK_OBJECT = re.compile(r"is located in stack of thread")
_NULL = re.compile(
    r"SEGV on unknown address (?:0x0{8,}[0-9a-f]{0,3}\b|\(nil\))|address points to the zero page"
)
_BAD_RELEASES = ("bad-free", "double-free", "alloc-dealloc-mismatch")
# The start of the hint for a library that freed libFuzzer's input (read by the offline fixer).
INPUT_GIVEN_AWAY = "the library freed libFuzzer's own input buffer, which the harness handed it"
_RELEASE_NAME = re.compile(alternation("release_fused"), re.I)
OVERFLOWS = (
    "heap-buffer-overflow",
    "stack-buffer-overflow",
    "global-buffer-overflow",
    "dynamic-stack-buffer-overflow",
)


@dataclass(frozen=True)
class Triage:
    """What the report says about where the fault lies.

    Attributes:
        category: One of :data:`CATEGORIES`.
        entry_function: The function the harness called on the faulting path (the frame
            just inside the harness's own frame), or ``""``.
        crash_function: The innermost frame outside the sanitizer (an interceptor such as
            ``strlen`` keeps its libc name).
        access: ``READ of size 2`` / ``WRITE of size 4`` for memory errors, else ``""``.
        region: Where the bad address lies, e.g. ``0 bytes to the right of 1-byte region``.
        buffer_origin: Who allocated the memory that was accessed badly: ``fuzzer-input``
            (libFuzzer's input buffer), ``harness``, ``library`` or ``""`` when unknown.
        misuse_hint: One sentence of evidence that the harness misused the API, or ``""``.
        freed_first_in: For memory released twice or used after release: the library function
            the harness called inside which the block was released first, or ``""``.
        allocated_in: The library function the harness called inside which that block was
            allocated, or ``""``.
    """

    category: str
    entry_function: str = ""
    crash_function: str = ""
    access: str = ""
    region: str = ""
    buffer_origin: str = ""
    misuse_hint: str = ""
    freed_first_in: str = ""
    allocated_in: str = ""


def is_harness_frame(frame: Frame, harness: str) -> bool:
    """Whether ``frame`` is in the harness (by its file name when known)."""
    if frame.function in HARNESS_FUNCS:
        return True
    return bool(harness) and bool(frame.file) and PurePath(frame.file).name == harness


def _origin(frames: list[Frame], harness: str) -> str:
    project = [f for f in frames if f.is_project()]
    if project:
        return "harness" if is_harness_frame(project[0], harness) else "library"
    return "fuzzer-input" if any(f.is_fuzzer() for f in frames) else ""


def _buffer_origin(lines: list[str], harness: str) -> str:
    text = "\n".join(lines)
    for pattern in (_ALLOCATED, _STACK_OBJECT):
        frames = stack_after(lines, pattern)
        if frames:
            return _origin(frames, harness)
    glob = _GLOBAL.search(text)
    if glob:
        return "harness" if PurePath(glob["file"]).name == harness else "library"
    return ""


def _entry(frames: list[Frame], harness: str) -> str:
    for i, frame in enumerate(frames):
        if is_harness_frame(frame, harness):
            inner = [f for f in frames[:i] if f.is_project()]
            return inner[-1].function if inner else ""
    return ""


def _shallow(project: list[Frame], depth: int = 3) -> bool:
    """Whether the harness frame comes within ``depth`` library frames of the fault."""
    return any(f.function in HARNESS_FUNCS for f in project[: depth + 1])


def _crash_function(frames: list[Frame]) -> str:
    for frame in frames:
        name = frame.function
        if name.startswith(("__sanitizer", "__asan", "__lsan", "__ubsan")):
            continue
        return name.removeprefix("__interceptor_").removeprefix("___interceptor_")
    return ""


def triage(kind: str, lines: list[str], harness: str, near_init: bool) -> Triage:
    """Categorize the report in ``lines`` (from its ``ERROR:`` line on).

    Args:
        kind: The parsed failure kind (see :class:`fuzzkit.crash.CrashReport`).
        lines: The report's lines, starting at the ``ERROR:`` line.
        harness: The harness file's base name, or ``""`` to go by function names.
        near_init: Whether the failure happened during initialization.
    """
    frames = read_stack(lines[1:])
    project = [f for f in frames if f.is_project()]
    in_harness = bool(project) and is_harness_frame(project[0], harness)
    if kind in _RESOURCE_KINDS:
        category = _RESOURCE_KINDS[kind]
    elif near_init:
        category = "near-init"
    elif project:
        category = "harness" if in_harness else "library"
    else:
        category = "unknown"
    access = next((m[0] for m in map(_ACCESS.match, lines) if m), "")
    region_match = next((m for m in map(_REGION.search, lines) if m), None)
    region = region_match[0].removeprefix("is located ") if region_match else ""
    if kind == "leak":
        origin = _origin(frames, harness)  # a leak's only stack is where it was allocated
    else:
        origin = _buffer_origin(lines, harness) if access or "use-after" in kind else ""
    found = Triage(category, _entry(frames, harness), _crash_function(frames), access, region, origin)
    if kind in _BAD_RELEASES or "use-after" in kind:
        found = Triage(**{**found.__dict__,
                          "freed_first_in": _entry(stack_after(lines, _FREED), harness),
                          "allocated_in": _entry(stack_after(lines, _ALLOCATED), harness)})
    return Triage(
        **{**found.__dict__, "misuse_hint": _hint(kind, found, project, in_harness, near_init, lines)}
    )


def _hint(
    kind: str, t: Triage, project: list[Frame], in_harness: bool, near_init: bool, lines: list[str]
) -> str:
    entry = t.entry_function or "the library"
    if kind == "overwrites-const-input":
        # libFuzzer's input is const: only a harness that cast it to a writable buffer lets a
        # library write there, and a library may write whatever it is given as writable.
        return ("the harness passed libFuzzer's const input buffer where a call writes (an output "
                "buffer, or a buffer the library edits in place): give that call a writable copy "
                "or a buffer of its own")
    if in_harness:
        return f"the fault is in the harness's own code ({project[0].render()}): fix the harness"
    if ("use-after-free" in kind or kind in _BAD_RELEASES) and t.buffer_origin == "fuzzer-input":
        return (INPUT_GIVEN_AWAY + ": the harness gave away memory it does not own (an argument that "
                "tells the library to take the buffer or free it when done): pass 0 for it, or hand "
                "the library a copy it may keep")
    if kind in OVERFLOWS and t.buffer_origin == "fuzzer-input":
        where = f" at {t.region}" if t.region else ""
        return (
            f"{t.crash_function} made a {t.access or 'bad access'}{where}, and that region is "
            f"libFuzzer's own input buffer, which the harness passed to {entry} unchanged: if {entry} "
            "expects a NUL-terminated string or a longer buffer, the harness violates its contract "
            "(copy the input into a terminated buffer, or pass the real size)"
        )
    if kind in OVERFLOWS and t.buffer_origin == "harness" and _past_its_terminator(t, lines):
        return ""  # read past the NUL of a string the harness terminated: the library's overread
    if kind in OVERFLOWS and t.buffer_origin == "harness":
        return f"the overflowed buffer was allocated by the harness: check the size it gives {entry}"
    if kind == "leak" and t.entry_function and t.buffer_origin == "library":
        return (
            f"memory allocated inside {entry} (called by the harness) was never freed: if the API "
            "has a free/delete/cleanup function for that result, the harness must call it"
        )
    if kind == "SEGV" and any(_NULL.search(line) for line in lines[:3]) and t.entry_function:
        return (
            f"null-pointer dereference in {t.crash_function} reached through {entry}: check whether "
            f"the harness passes NULL or an unchecked failed result to {entry}"
        )
    if kind == "double-free" and released_inside_a_call(t):
        return (
            f"released first inside {t.freed_first_in} (no releaser by its name), allocated inside "
            f"{t.allocated_in}, released again by {entry}: if {t.allocated_in} handed the harness that "
            f"block (a new object), {t.freed_first_in} took it over and the harness must not release "
            f"it; if not, {t.freed_first_in} freed state of an object the harness owns (a library bug)"
        )
    if kind in _BAD_RELEASES and _RELEASE_NAME.search(t.entry_function) and _shallow(project):
        return (
            f"{kind} right inside {entry}, which the harness called: the harness released memory "
            f"it does not own (a pointer into a block released elsewhere, or released twice)"
        )
    if near_init:
        return (
            "the crash happens on the first inputs, before fuzzing proper: usually a harness setup "
            "error or a call that fails for every input"
        )
    return ""


# The harness's own helpers that copy text with its NUL (agents.offline.c_helpers): exactly
# the text and one terminator, so a read just past the region is a read past the NUL.
TERMINATED_COPIES = ("lf_strndup", "lf_take_str", "lf_wstrndup")


def _past_its_terminator(t: Triage, lines: list[str]) -> bool:
    """A read just past a terminated copy of text the harness made for the call."""
    if not t.access.startswith("READ") or not t.region.startswith("0 bytes to the right of"):
        return False
    made = [f.function for f in stack_after(lines, _ALLOCATED)]
    return any(name in TERMINATED_COPIES for name in made[:3])


def released_inside_a_call(t: Triage) -> bool:
    """Whether a block released twice was first released inside a call that releases nothing.

    The first release happened inside a library call with no releaser's name, another such
    call had allocated the block, and the harness's release of its object (``match_free(md)``)
    freed it a second time. A call that uses the object (``substitute(code, ..., md)``) may have
    freed part of that object's state, which the harness never held: the library's bug. Or the
    allocating call handed the harness a new object and the first call took it over: misuse.
    The hint says both; the model judges from the prototypes.
    """
    first, made = t.freed_first_in, t.allocated_in
    return bool(first and made and not _RELEASE_NAME.search(first) and not _RELEASE_NAME.search(made)
                and _RELEASE_NAME.search(t.entry_function))
