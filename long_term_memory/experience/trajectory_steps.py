"""A trajectory's steps as data: one pydantic model per kind of step, rendered and read back.

An extraction prompt shows each step of a finished target twice: a tagged line a person or a
model reads (``- [build] v2 failed: error: ...``) and, after the lines, the same steps as a
fenced ``# facts: trajectory v1`` block rendered from :class:`TrajectoryFacts`
(:mod:`fuzzkit.facts_block`). Each model writes its own line (:meth:`line`); the offline
extractor reads the block, never the lines, so rewording a line changes no lesson, and a block
that does not fit these models is a :class:`fuzzkit.facts_block.FactsBlockError`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from fuzzkit.facts_block import read_all_facts, read_facts, render_facts
from fuzzkit.guidance_facts import Rule
from long_term_memory.experience.models import Outcome

KIND = "trajectory"
Number = float | int | str | None


def is_token(word: str) -> bool:
    """Whether ``word`` is one token of letters, digits, ``_`` and ``-`` (a sanitizer's crash kind)."""
    return bool(word) and all(c.isalnum() or c in "_-" for c in word)


def one_line(text: str) -> str:
    """``text`` with its whitespace runs made one space (how a step line is shown)."""
    return " ".join(str(text).split())


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    step: str

    @property
    def tag(self) -> str:
        """The tag of the step's line (``build`` in ``- [build] ...``)."""
        return self.step


class AnalysisStep(_Step):
    """The archetype the analyzer chose."""

    step: Literal["analysis"]
    archetype: str
    confidence: str = "?"

    def line(self) -> str:
        """The step as a person reads it."""
        return f"archetype {self.archetype} ({self.confidence} confidence)"


class ConstraintStep(_Step):
    """One constraint the analyzer stated."""

    step: Literal["constraint"]
    text: str

    def line(self) -> str:
        """The step as a person reads it."""
        return self.text


class HarnessStep(_Step):
    """A harness version written: by whom, the changes it states, the calls it adds.

    ``rules``: what its changes ask, as data (the fixer's releases, feeds, guards, tags...); the
    extractor reads these, never the ``changes`` sentences.
    """

    step: Literal["harness"]
    version: int | None = None
    by: str = "?"
    changes: list[str] = Field(default_factory=list)  # the writer's calls, fixes or directions
    added_calls: list[str] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)

    def line(self) -> str:
        """The step as a person reads it."""
        what = ", ".join(self.changes)
        added = f" (adds calls to {', '.join(self.added_calls)})" if self.added_calls else ""
        return f"v{self.version} by {self.by}" + (f": {what}" if what else "") + added

    def by_role(self, role: str) -> bool:
        """Whether the writer is ``role`` (``enhancer.fix``) or one of its sub-steps."""
        return self.by == role or self.by.startswith(role + ".")


class BuildStep(_Step):
    """A build of one version, with the first compiler errors when it failed."""

    step: Literal["build"]
    version: int | None = None
    ok: bool
    errors: str = ""

    def line(self) -> str:
        """The step as a person reads it."""
        if self.ok:
            return f"v{self.version} built"
        return f"v{self.version} failed" + (f": {self.errors}" if self.errors else "")


class RunStep(_Step):
    """A fuzz run of one version."""

    step: Literal["run"]
    version: int | None = None
    crashed: bool = False
    target_hits: Number = 0
    lines: float = 0.0

    def line(self) -> str:
        """The step as a person reads it."""
        state = "crashed" if self.crashed else f"ran, target hit {self.target_hits}x"
        return f"v{self.version} {state}; line coverage {self.lines:.1f}%"


class CrashStep(_Step):
    """A crash as triage read it: kind, where, the library call it came through."""

    step: Literal["crash"]
    kind: str = ""
    location: str = ""
    entry: str = ""  # the library function the harness called into
    allocated_in: str = ""  # a leak's allocating function, when it is not ``entry``

    def line(self) -> str:
        """The step as a person reads it."""
        entry = f" through {self.entry}" if self.entry else ""
        made = f" (allocated in {self.allocated_in})" if self.allocated_in else ""
        return f"{self.kind or '?'} at {self.location or '?'}{entry}{made}"


class VerdictStep(_Step):
    """The feasibility verdict on a crash."""

    step: Literal["verdict"]
    verdict: str | None = None
    feasible: bool = False

    @property
    def tag(self) -> str:
        """Shown as a crash step."""
        return "crash"

    def line(self) -> str:
        """The step as a person reads it."""
        return f"verdict {self.verdict}: {'a real library bug' if self.feasible else 'a harness misuse'}"


class FinalCrashStep(_Step):
    """The crash the target ended with (sanitizer summary or signature)."""

    step: Literal["final_crash"]
    kind: str = "?"
    summary: str | None = None

    @property
    def tag(self) -> str:
        """Shown as a crash step."""
        return "crash"

    def line(self) -> str:
        """The step as a person reads it."""
        return f"{self.kind}: {self.summary}"


class IterationStep(_Step):
    """One measured iteration of the optimization phase."""

    step: Literal["iteration"]
    iteration: Number = None
    outcome: Number = None
    lines: Number = None
    delta: Number = None

    def line(self) -> str:
        """The step as a person reads it."""
        return f"#{self.iteration} {self.outcome}: line coverage {self.lines}% (delta {self.delta})"


class DroppedStep(_Step):
    """One block of an improvement dropped: it did not run cleanly; the next version has the others."""

    step: Literal["dropped"]
    version: int | None = None
    direction: str = ""
    next_version: int | None = None

    @property
    def tag(self) -> str:
        """Shown as a revert step."""
        return "revert"

    def line(self) -> str:
        """The step as a person reads it."""
        return (f"v{self.version} did not run cleanly: dropped its block '{self.direction}' "
                f"(v{self.next_version} has the others)")


class RevertStep(_Step):
    """A version given up: back to the best one (``run_failed``: it built but did not run cleanly)."""

    step: Literal["revert"]
    version: int | None = None
    reason: str = ""
    run_failed: bool = False

    def line(self) -> str:
        """The step as a person reads it."""
        return f"v{self.version} {self.reason}, back to the best version"


class StopStep(_Step):
    """Why the run stopped: a loop guard that fired (``guard``) or the final reason.

    ``gave_up`` says the repairs of a crash caused by the harness ran out.
    """

    step: Literal["stop"]
    reason: str = ""
    guard: str = ""
    fired: bool = False  # a guard's firing, not the run's final reason
    gave_up: bool = False

    def line(self) -> str:
        """The step as a person reads it."""
        return f"guard {self.guard}: {self.reason}" if self.fired else self.reason


class FixStep(_Step):
    """A build fix session memory recorded, whether it made the build work, and its rules as data."""

    step: Literal["fix"]
    content: str = ""
    worked: bool = False
    rules: list[Rule] = Field(default_factory=list)

    def line(self) -> str:
        """The step as a person reads it."""
        return f"{self.content} ({'worked' if self.worked else 'did not fix the build'})"


class DirectionStep(_Step):
    """One direction of the run's local memory: its outcome and evidence.

    ``misuse_crash``: the direction was dropped because its block crashed the harness by misuse;
    ``calls``: the library calls that block added, its own call first.
    """

    step: Literal["direction"]
    outcome: str | None = None
    direction: str | None = None
    evidence: str = ""
    misuse_crash: bool = False
    calls: list[str] = Field(default_factory=list)

    def line(self) -> str:
        """The step as a person reads it."""
        return f"{self.outcome}: {self.direction} ({self.evidence})"


class RepairStep(_Step):
    """A leaked result an improvement's block kept and released after the call.

    With ``field``: what ``maker`` made in that field of ``function``'s ``holder``; without:
    what ``function`` returned (of type ``type``).
    """

    step: Literal["repair"]
    version: int | None = None
    next_version: int | None = None
    function: str
    releaser: str
    type: str = "?"
    field: str = ""
    maker: str = "?"
    holder: str = "?"

    def line(self) -> str:
        """The step as a person reads it."""
        done = f"v{self.next_version} releases it with {self.releaser} after the call"
        if self.field:
            return (f"v{self.version} leaked what {self.maker} made in the {self.field} field of "
                    f"{self.function}'s {self.holder}: {done}")
        return f"v{self.version} leaked what {self.function} returned ({self.type}): {done}"


class MisuseStep(_Step):
    """A result the harness released that its object still owned (a crash judged misuse)."""

    step: Literal["misuse"]
    version: int | None = None
    function: str  # what returned the block
    releaser: str  # what the harness released it with
    kind: str  # heap-use-after-free or double-free

    def line(self) -> str:
        """The step as a person reads it."""
        return (f"v{self.version} released what {self.function} returned with {self.releaser}: a {self.kind} "
                f"(allocated in {self.function}, released first in {self.releaser}); its object owned it")


Step = Annotated[
    AnalysisStep | ConstraintStep | HarnessStep | BuildStep | RunStep | CrashStep | VerdictStep
    | FinalCrashStep | IterationStep | DroppedStep | RevertStep | StopStep | FixStep | DirectionStep
    | RepairStep | MisuseStep,
    Field(discriminator="step"),
]


class TrajectoryFacts(BaseModel):
    """One trajectory of an extraction prompt: its target, measured outcome and steps.

    ``steps`` are the steps the prompt shows (a long trajectory keeps its beginning and end;
    ``omitted`` counts the steps left out between them).
    """

    model_config = ConfigDict(extra="forbid")

    success: bool = False  # the measured label (SUCCESS / FAILURE)
    target: str = ""  # the target's prototype, without its ';'
    function: str = ""  # the target's name
    archetype: str = ""
    outcome: Outcome | None = None
    steps: list[Step] = Field(default_factory=list)
    omitted: int = 0


def step_line(step: Step) -> str:
    """``- [tag] line`` as a prompt shows ``step``."""
    return f"- [{step.tag}] {one_line(step.line())}"


def render_trajectory(facts: TrajectoryFacts) -> str:
    """The steps as the fenced block a prompt carries."""
    return render_facts(KIND, facts)


def read_trajectory(text: str) -> TrajectoryFacts:
    """The first trajectory block of ``text`` (an empty trajectory when there is none).

    Raises:
        FactsBlockError: the block does not fit :class:`TrajectoryFacts`.
    """
    return read_facts(text, KIND, TrajectoryFacts) or TrajectoryFacts()


def read_trajectories(text: str) -> list[TrajectoryFacts]:
    """Every trajectory block of ``text``, in order (a contrastive prompt has one per trajectory).

    Raises:
        FactsBlockError: a block does not fit :class:`TrajectoryFacts`.
    """
    return read_all_facts(text, KIND, TrajectoryFacts)
