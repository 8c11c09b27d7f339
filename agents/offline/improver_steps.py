"""An object an improvement block makes is stepped to its end before the block releases it.

A constructor on what the harness holds (``reader_for_doc(doc)``) or on the input
(``reader_for_memory(data, size, ...)``) reaches almost nothing by itself: the object's own
stepper (``int reader_read(reader *)``, see :func:`~agents.offline.synth_drive.steppers`) is
what walks the document, so a block calling the constructor also steps what it made, and such
a constructor is worth as much as a parser when improvements are ranked.
"""

from __future__ import annotations

import re

from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_ctx import Ctx
from agents.offline.synth_drive import step_block, steppers
from agents.offline.synth_plan import Obj, Planner
from fuzzkit.api import FunctionDecl


def made_stepper(idx: ApiIndex, fn: FunctionDecl) -> FunctionDecl | None:
    """The stepper of the object ``fn`` returns and the caller owns (None if there is none)."""
    key = idx.type_key(fn.return_type)
    if not key or not idx.returns_owned(fn):
        return None
    found = steppers(idx, key, {fn.name})
    # The plainest name first (`reader_read` before `reader_move_to_next_attribute`).
    return min(found, key=lambda x: (len(words(x[1])), x[:2]))[2] if found else None


def step_made(idx: ApiIndex, fn: FunctionDecl, pl: Planner) -> None:
    """Add to the block's use lines a bounded loop stepping what ``fn`` returned."""
    step = made_stepper(idx, fn)
    call = "\n".join(pl.f.call)
    found = re.search(rf"^\s*(\w+) = (?:\([^()]*\)\s*)?{re.escape(fn.name)}\(", call, re.M)
    if step is None or found is None or step.name in pl.f.calls or step.name in pl.avoid:
        return
    key = idx.type_key(fn.return_type) or ""
    var = found.group(1)
    pl.f.use.extend(step_block(Ctx(fn, idx, pl, []), step, Obj(key, var, var)).lines)
    pl.f.calls.append(step.name)
