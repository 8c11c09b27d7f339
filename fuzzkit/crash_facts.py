"""A crash's facts as data: what the crash analyzer's report says, read back with the same model.

The report a crash analyzer, a feasibility judge and a fixer see has one line per fact for a
person or a model (``kind: heap-buffer-overflow``) and, after them, the same facts as a fenced
``# facts: crash v1`` block rendered from :class:`CrashFacts` (:mod:`fuzzkit.facts_block`). The
offline engine reads the block, never the lines: rewording a line changes nothing it does.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fuzzkit.facts_block import read_facts, render_facts

KIND = "crash"


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TerminatedInput(_Data):
    """Input documented as read up to its NUL, for the functions a harness calls."""

    params: dict[str, list[str]] = Field(default_factory=dict)  # function -> its parameters documented so
    flags: dict[str, int | None] = Field(default_factory=dict)  # option constant -> its value (None: unknown)


class CrashFacts(_Data):
    """The parsed sanitizer report of one crash, with what the run knows around it."""

    kind: str = "unknown"
    summary: str = ""
    in_harness: bool = False  # the first project frame is the harness's
    near_init: bool = False
    signature: str = ""
    category: str = ""
    entry_function: str = ""  # the library function the harness called into
    access: str = ""  # READ/WRITE of N bytes
    region: str = ""
    buffer_origin: str = ""  # fuzzer-input, harness-heap, ...
    misuse_hint: str = ""
    freed_first_in: str = ""
    allocated_in: str = ""
    assertion: str = ""  # the failed assertion's condition
    input_size: int | None = None  # bytes of the reproducer, when it is still on disk
    input_text: str = ""  # what the input is as text (``not valid UTF-8 ...``)
    utf8: dict[str, list[str]] = Field(default_factory=dict)  # function -> its UTF-8 text parameters
    terminated: TerminatedInput = Field(default_factory=TerminatedInput)
    # function -> the conditions its documentation asserts on its parameters (fuzzkit.param_docs)
    conditions: dict[str, list[str]] = Field(default_factory=dict)
    location: str = ""  # where the crash analyzer put the fault (harness, library), once it has


def render_crash(facts: CrashFacts) -> str:
    """The facts as the fenced block a prompt carries."""
    return render_facts(KIND, facts)


def read_crash(text: str) -> CrashFacts:
    """The crash facts block of ``text`` (empty facts when there is none)."""
    return read_facts(text, KIND, CrashFacts) or CrashFacts()
