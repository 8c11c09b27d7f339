"""Choosing the executor a run's targets go through: ``--executor local`` (default) or ``ray``."""

from __future__ import annotations

import os

from fuzzkit.inputs import InputError
from logicfuzz.executor_ray import RayExecutor  # Ray is imported only when asked for
from logicfuzz.executors import LocalExecutor, TargetExecutor

EXECUTORS = ("local", "ray")


def open_executor(kind: str, jobs: int, ray_address: str = "") -> TargetExecutor:
    """The executor ``kind`` (``local`` or ``ray``) for ``jobs`` targets at a time.

    Raises:
        InputError: an unknown kind, a Ray address without Ray, or Ray missing or unreachable.
    """
    if kind not in EXECUTORS:
        raise InputError(f"--executor {kind!r} is not one of {', '.join(EXECUTORS)}")
    if kind == "local":
        if ray_address:
            raise InputError("--ray-address needs --executor ray; add it (or drop --ray-address)")
        return LocalExecutor(max(1, jobs or os.cpu_count() or 1))

    return RayExecutor(jobs, ray_address or os.environ.get("RAY_ADDRESS", ""))
