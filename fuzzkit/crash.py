"""Parsing ASan, LeakSanitizer and libFuzzer reports into stable, triaged crash descriptions."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any

from fuzzkit.frames import BUILD_ID, Frame, read_stack
from fuzzkit.triage import is_harness_frame, triage

__all__ = ["CrashGroup", "CrashReport", "Frame", "dedupe_crashes", "library_frames", "library_signature",
           "parse_sanitizer_report"]

_ERROR = re.compile(r"^==\d+==\s*ERROR: (?P<tool>\w+): (?P<what>.*)$")
_SUMMARY = re.compile(r"^SUMMARY: (?P<tool>\w+): (?P<what>.*)$")
_LOADING_FILES = re.compile(r"INFO: seed corpus: files: [1-9]")
_UNIT = re.compile(r"Test unit written to (?P<path>\S+)")
_KIND_ALIASES = {"out-of-memory": "oom", "allocator": "oom"}
# glibc's message before abort(): "prog: file.c:56: void f(size_t): Assertion `n % 16 == 0' failed."
_ASSERTION = re.compile(r": Assertion `(?P<cond>.*)' failed\.\s*$", re.M)


@dataclass
class CrashReport:
    """A sanitizer or libFuzzer failure.

    ``kind`` is the sanitizer's own name (``heap-buffer-overflow``, ``heap-use-after-free``,
    ``double-free``, ``SEGV``, ``stack-overflow``, ``allocation-size-too-big``...) or one of
    ``leak``, ``timeout``, ``oom``, ``deadly-signal``, ``fuzz-target-exited``.
    ``signature`` is the kind plus up to three project frames (no addresses, no line
    numbers), so the same bug gives the same signature across runs and harness edits.
    ``category`` and the fields after it come from :func:`fuzzkit.triage.triage`: where
    the fault lies (``timeout``, ``oom``, ``leak``, ``near-init``, ``harness``, ``library``,
    ``unknown``) and the evidence for calling it a harness misuse.
    ``assertion`` is the condition of the failed ``assert`` that aborted the run, if one did.
    """

    kind: str
    summary: str
    frames: list[Frame] = field(default_factory=list)
    signature: str = ""
    in_harness: bool = False
    near_init: bool = False
    reproducer: str | None = None
    excerpt: str = ""
    category: str = "unknown"
    entry_function: str = ""
    crash_function: str = ""
    access: str = ""
    region: str = ""
    buffer_origin: str = ""
    misuse_hint: str = ""
    freed_first_in: str = ""
    allocated_in: str = ""
    assertion: str = ""

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


@dataclass
class CrashGroup:
    """Crashes with one signature: the first report, how many there were, their inputs."""

    signature: str
    report: CrashReport
    count: int = 1
    reproducers: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {**asdict(self), "report": self.report.to_dict()}


def dedupe_crashes(reports: Iterable[CrashReport | dict[str, Any]]) -> list[CrashGroup]:
    """Group reports by signature, in order of first appearance.

    Reports may be :class:`CrashReport` objects or their dicts (as stored in results).
    """
    groups: dict[str, CrashGroup] = {}
    for item in reports:
        report = CrashReport.from_dict(item) if isinstance(item, dict) else item
        group = groups.get(report.signature)
        if group is None:
            group = groups[report.signature] = CrashGroup(report.signature, report, count=0)
        group.count += 1
        if report.reproducer and report.reproducer not in group.reproducers:
            group.reproducers.append(report.reproducer)
    return list(groups.values())


def library_frames(report: CrashReport, harness_name: str = "") -> list[Frame]:
    """The report's project frames outside the harness (innermost first): the library's own code."""
    return [f for f in report.project_frames if not is_harness_frame(f, PurePath(harness_name).name)]


def library_signature(report: CrashReport, harness_name: str = "", depth: int = 2) -> str:
    """The kind plus the innermost ``depth`` library frames: one bug reached from different harnesses.

    :attr:`CrashReport.signature` counts the harness's own frames too, and its third frame is
    often the API function each target's harness calls, so the same fault found through two
    entry points differs there; this one leaves the harness out and stops at the faulting
    function and its caller. With no library frame it is the report's own signature.
    """
    frames = library_frames(report, harness_name)
    return _signature(report.kind, frames, depth) if frames else report.signature


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
    frames = read_stack(lines[start + 1 :])
    project = [f for f in frames if f.is_project()]
    harness = PurePath(harness_name).name if harness_name else ""
    in_harness = bool(project) and is_harness_frame(project[0], harness)
    before = "\n".join(lines[:start])
    fuzzing_log = "INFO: Seed:" in before or "INFO: Running with" in before
    # Before INITED libFuzzer runs the empty input (a crash there fails on every input: setup)
    # or loads a corpus of real files (a crash there is one file's: input-dependent, no setup).
    near_init = any(f.function == "LLVMFuzzerInitialize" for f in frames) or (
        fuzzing_log and "INITED" not in before and not _LOADING_FILES.search(before)
    )
    report_end = summary_idx + 1 if summary_idx is not None else len(lines)
    found = triage(kind, lines[start:report_end], harness, near_init)
    # libFuzzer writes the unit before a timeout report and after other reports.
    units = _UNIT.findall(text)
    return CrashReport(
        kind=kind,
        summary=BUILD_ID.sub("", (summary_match or error)[0].strip()),
        frames=frames,
        signature=_signature(kind, project),
        in_harness=in_harness,
        near_init=near_init,
        reproducer=units[-1] if units else None,
        excerpt=_excerpt(lines, start, summary_idx),
        **found.__dict__,
        assertion=_assertion(kind, before),
    )


def _assertion(kind: str, before: str) -> str:
    """The condition of the ``assert`` whose failure the report is about (the last one printed)."""
    found = _ASSERTION.findall(before[-4000:]) if kind == "deadly-signal" else []
    return found[-1] if found else ""


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


def _signature(kind: str, project: list[Frame], depth: int = 3) -> str:
    names: list[str] = []
    for frame in project:
        # Recursion would fill all the slots with one function; collapse repeats.
        if not names or names[-1] != frame.function:
            names.append(frame.function)
        if len(names) == depth:
            break
    return kind + ("@" + "<".join(names) if names else "")


def _excerpt(lines: list[str], start: int, summary_idx: int | None, limit: int = 60) -> str:
    end = summary_idx + 1 if summary_idx is not None else min(len(lines), start + limit)
    kept = [BUILD_ID.sub("", ln.rstrip()) for ln in lines[start:end]]
    if len(kept) > limit:
        kept = kept[: limit - 5] + ["    ..."] + kept[-4:]
    return "\n".join(kept)
