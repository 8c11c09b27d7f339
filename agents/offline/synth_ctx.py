"""The context one harness fill carries.

Target, API index, planner, related functions and the USE code collected so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.offline.synth_api import ApiIndex
from agents.offline.synth_blocks import Block
from agents.offline.synth_code import Frag
from agents.offline.synth_plan import Planner
from fuzzkit.api import FunctionDecl


@dataclass
class Ctx:
    """Everything one harness fill needs."""

    target: FunctionDecl
    idx: ApiIndex
    pl: Planner
    related: list[str]
    use_limit: int = 3
    use: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    taken: set[str] = field(default_factory=set)

    @property
    def f(self) -> Frag:
        """The fragment being filled."""
        return self.pl.f

    def block_number(self) -> int:
        """A fresh number for a block label."""
        return len(self.blocks) + 1
