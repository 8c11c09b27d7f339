"""A two-node Ray cluster on this machine for the whole session (skipped with the reason without Ray)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.ray_cluster import RayCluster, missing


@pytest.fixture(scope="session")
def ray_cluster(_isolated_cache: None) -> Iterator[RayCluster]:
    """A head and one more node, one CPU each, stopped at the end."""
    why = missing()
    if why:
        pytest.skip(why)
    cluster = RayCluster(workers=1, cpus=1,
                         env={"LOGICFUZZ_CACHE_DIR": os.environ["LOGICFUZZ_CACHE_DIR"]})
    try:
        yield cluster
    finally:
        cluster.stop()
