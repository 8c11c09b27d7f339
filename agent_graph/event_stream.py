"""Progress from a running target to whoever runs it, as each event is logged (no file polling).

A worker (a pool process, a Ray task) runs one target at a time; while it does, every event the
target logs to its ``events.jsonl`` is also handed to the listener the worker installed here,
which forwards it to the driver (a queue, a Ray actor).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Listener = Callable[[str], None]

_listeners: list[Listener] = []
_log = logging.getLogger(__name__)


@contextmanager
def streaming_to(listener: Listener) -> Iterator[None]:
    """Hand every event logged inside the block to ``listener`` (its type only)."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


def emit(event_type: str) -> None:
    """Tell the current listener (if any) about one event; a broken listener never stops a run."""
    for listener in list(_listeners):
        try:
            listener(event_type)
        except Exception as exc:  # progress is a view: losing it must not lose the target
            _log.debug("progress listener failed: %s", exc)
