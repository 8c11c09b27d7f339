"""One way to build an object after another, leaving no trace of the ways that failed.

``acme_source_t *acme_source_buffer(acme_t *a, const void *data, size_t n)`` and
``acme_source_t *acme_source_buffer_create(const void *data, size_t n, acme_error_t *e)`` both
make a source from the input; the first needs an ``acme_t``, which is opened from a source:
building it nests until the planner gives up. The second then gets its turn, on the planner
as it was before the first try.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from agents.offline.synth_types import Unsupported

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner

T = TypeVar("T")
Option = TypeVar("Option")


def first_built(pl: Planner, options: Sequence[Option], build: Callable[[Option], T]) -> T:
    """``build(option)`` for the first option it succeeds on.

    Raises:
        Unsupported: No option could be built (the last one's reason).
    """
    for option in options[:-1]:
        saved = snapshot(pl)
        try:
            return build(option)
        except Unsupported:
            restore(pl, saved)
    if not options:
        raise Unsupported("nothing to build it with")
    return build(options[-1])


def snapshot(pl: Planner) -> tuple[dict[str, Any], dict[str, Any]]:
    """A deep copy of the planner's state and its fragment's, for :func:`restore`."""
    frag = copy.deepcopy(vars(pl.f))
    rest = {k: copy.deepcopy(v) for k, v in vars(pl).items() if k not in ("idx", "f")}
    return frag, rest


def restore(pl: Planner, saved: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Back to ``saved``, in place: other parts hold the same fragment and lists."""
    frag, rest = saved
    for holder, values in ((vars(pl.f), frag), (vars(pl), rest)):
        for name, value in values.items():
            current = holder.get(name)
            if isinstance(current, list):
                current[:] = value
            elif isinstance(current, (set, dict)):
                current.clear()
                current.update(value)
            else:
                holder[name] = value
