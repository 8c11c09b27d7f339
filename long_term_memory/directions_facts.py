"""The tabu list as data: the failed directions a prompt shows, rendered and read back.

The local memory (and a sequential MaTTS round's view of earlier rounds) shows each attempted
direction as a ``- [Failed] direction (evidence)`` line; after the lines, the directions that
failed and the new evidence that may clear them follow as a fenced ``# facts: directions v1``
block rendered from :class:`DirectionsFacts` (:mod:`fuzzkit.facts_block`). The offline engine
takes its tabu list from the block, never from the lines.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fuzzkit.facts_block import read_all_facts, render_facts

KIND = "directions"


class DirectionsFacts(BaseModel):
    """Directions that failed, and facts learned since that may make one worth retrying."""

    model_config = ConfigDict(extra="forbid")

    failed: list[str] = Field(default_factory=list)  # each failed direction's text, one line
    new_evidence: list[str] = Field(default_factory=list)


def render_directions(facts: DirectionsFacts) -> str:
    """The block a prompt carries ('' when nothing failed and there is no new evidence)."""
    return render_facts(KIND, facts) if facts.failed or facts.new_evidence else ""


def read_directions(text: str) -> list[DirectionsFacts]:
    """Every directions block of ``text``, in order.

    Raises:
        FactsBlockError: a block does not fit :class:`DirectionsFacts`.
    """
    return read_all_facts(text, KIND, DirectionsFacts)
