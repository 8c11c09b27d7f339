"""Recall by scope: the actionable lessons of a bank whose scope fits a target.

Similarity search finds lessons whose words resemble the target's description; a lesson
learned on another library's function of the same shape (``returns_pointer`` to a
``uint8_t`` buffer) is worded after that library and may never score high enough. Its scope
says what it applies to, so it is recalled by that too. The actionable items are indexed once
per row: the first call of a large bank reads every entry in one pass, later calls only the
rows added since.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol

from fuzzkit.api import FunctionDecl
from long_term_memory.experience.catalog import ItemEntry
from long_term_memory.experience.lessons import lesson_fits, parse_action

_ONE_PASS = 64  # above this many unread rows, read them with one all_entries() pass


class _View(Protocol):
    ids: list[str]
    row_of: dict[str, int]

    def entry(self, row: int) -> ItemEntry: ...

    def all_entries(self) -> list[ItemEntry]: ...


class ScopedLessons:
    """The actionable lessons of one bank view, by item id."""

    def __init__(self) -> None:
        """Empty; filled from the view on first use."""
        self._of: Any = None  # the view's id list the rows were read from (a reload replaces it)
        self._rows = 0
        self._entries: dict[str, ItemEntry] = {}

    def fitting(self, view: _View, target: FunctionDecl, exclude_task_id: str | None,
                taken: Collection[str], callees: Sequence[FunctionDecl] = (),
                api: Sequence[FunctionDecl] = ()) -> list[ItemEntry]:
        """Lessons with an action that fit a harness for ``target``, in storage order.

        See :func:`~long_term_memory.experience.lessons.lesson_fits` (``callees``: the other API
        functions the harness calls; ``api``: the library's functions). Items of
        ``exclude_task_id`` (the target's own task) and ids in ``taken`` are left out.
        """
        self._catch_up(view)
        return [e for e in self._entries.values()
                if e.item_id not in taken and e.task_id != exclude_task_id and e.item_id in view.row_of
                and lesson_fits(e.lesson, target, callees, api)]

    def _catch_up(self, view: _View) -> None:
        if self._of is not view.ids:
            self._of, self._rows, self._entries = view.ids, 0, {}
        if len(view.ids) - self._rows > _ONE_PASS:
            entries = view.all_entries()
        else:
            entries = [view.entry(row) for row in range(self._rows, len(view.ids))]
        for entry in entries:
            if parse_action(entry.lesson.get("action")):
                self._entries[entry.item_id] = entry
        self._rows = len(view.ids)
