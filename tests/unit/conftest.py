"""Unit-test fixtures: each test starts with no library's Types table active."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents.offline import type_table


@pytest.fixture(autouse=True)
def _no_type_table() -> Iterator[None]:
    token = type_table._ACTIVE.set(type_table.EMPTY)
    yield
    type_table._ACTIVE.reset(token)
