"""Where targets run: one small interface, a local process pool behind it, and Ray (optional).

An executor takes :class:`TargetJob` s and reports :data:`Update` s: a target's steps as its
worker logs them (streamed through :mod:`agent_graph.event_stream`, not read back from files),
then its record. Every executor runs the same :func:`logicfuzz.target_run.run_target`, so
``result.json``, checkpoints and ``events.jsonl`` are the same whichever runs it.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import socket
from collections.abc import Callable
from concurrent.futures import Executor as PoolExecutor
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from agent_graph.event_stream import streaming_to
from logicfuzz.target_run import run_target

STARTED = "started"


@dataclass(frozen=True)
class TargetJob:
    """One target to run: ``key`` (``project/function``) names it in every update."""

    key: str
    benchmark: str
    function: str
    out: str
    ctx_data: dict[str, Any]
    # What runs the target (default: the graph, run_target). Measurements put a simulated
    # toolchain here; it must be picklable (a module-level function).
    body: Callable[[TargetJob], dict[str, Any]] | None = None


# (key, step, None) while a target runs; (key, "", record) once it is over.
Update = tuple[str, str, dict[str, Any] | None]


class TargetExecutor(Protocol):
    """What the runner needs from an executor."""

    def submit(self, job: TargetJob) -> None:
        """Queue one target."""

    def updates(self, timeout: float) -> list[Update]:
        """What happened since the last call, waiting up to ``timeout`` s for something."""

    def close(self) -> None:
        """Stop the workers (after the last update)."""


def run_job(job: TargetJob, report: Any) -> dict[str, Any]:
    """Run one target in a worker, passing each logged event to ``report(key, step)``."""
    report(job.key, f"{STARTED} (pid {os.getpid()} on {socket.gethostname()})")
    with streaming_to(lambda step: report(job.key, step)):
        return (job.body or _graph_body)(job)


def _graph_body(job: TargetJob) -> dict[str, Any]:
    return run_target(job.benchmark, job.function, job.out, job.ctx_data)


def error_record(job: TargetJob, exc: BaseException) -> dict[str, Any]:
    """A worker's crash as the target's error record: the other targets' results are kept."""
    project = job.key.split("/", 1)[0]
    return {"project": project, "function": job.function, "error": f"{type(exc).__name__}: {exc}"}


_QUEUE: Any = None


def _init_worker(channel: Any) -> None:
    global _QUEUE
    _QUEUE = channel


def _put(key: str, step: str) -> None:
    _QUEUE.put((key, step, None))


def _pool_job(job: TargetJob) -> dict[str, Any]:
    return run_job(job, _put)


class LocalExecutor:
    """Worker processes on this machine (a thread for one job); progress through a queue."""

    def __init__(self, jobs: int) -> None:
        """``jobs`` targets at a time."""
        self.pool: PoolExecutor
        if jobs == 1:
            self.channel: Any = queue.Queue()
            _init_worker(self.channel)
            self.pool = ThreadPoolExecutor(1)
        else:
            spawn = multiprocessing.get_context("spawn")
            self.channel = spawn.Queue()
            self.pool = ProcessPoolExecutor(jobs, mp_context=spawn, initializer=_init_worker,
                                            initargs=(self.channel,))
        self.futures: dict[Future[dict[str, Any]], TargetJob] = {}

    def submit(self, job: TargetJob) -> None:
        """Queue one target on the pool."""
        self.futures[self.pool.submit(_pool_job, job)] = job

    def updates(self, timeout: float) -> list[Update]:
        """Steps from the queue first, then the records of finished targets."""
        found: list[Update] = []
        try:
            found.append(self.channel.get(timeout=timeout))
            while True:
                found.append(self.channel.get_nowait())
        except queue.Empty:
            pass
        for fut in [f for f in self.futures if f.done()]:
            job = self.futures.pop(fut)
            try:
                record = fut.result()
            except Exception as exc:  # a worker's crash must not lose the other targets' results
                record = error_record(job, exc)
            found.append((job.key, "", record))
        return found

    def close(self) -> None:
        """Wait for the workers to exit."""
        self.pool.shutdown(wait=True, cancel_futures=True)
