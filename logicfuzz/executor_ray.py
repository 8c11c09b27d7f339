"""Targets as Ray tasks (``--executor ray``): a local Ray by default, a cluster with ``--ray-address``.

Each target is one task (one CPU) running :func:`logicfuzz.executors.run_job`; its steps reach
the driver through a small actor the tasks report to. A task lost with its worker or node is
retried (``MAX_RETRIES``) and resumes from its checkpoint (SQLite in the target's directory,
or the ``--store`` database); a finished target is never run twice (its ``result.json``).
Every node must see ``--out`` at the same path and have LogicFuzz installed. Ray is imported
here only, when asked for.
"""

from __future__ import annotations

import logging
import os
import re
import socket
from typing import Any

from fuzzkit.inputs import InputError
from logicfuzz.executors import TargetJob, Update, error_record, run_job

MAX_RETRIES = 3
# What a worker needs from the driver's environment (caches, sandbox switches, model endpoint).
_FORWARDED = re.compile(r"^(LOGICFUZZ_|OPENAI_BASE_URL$)")


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError("--executor ray needs Ray: pip install -e '.[ray]' "
                         "(or run without --executor ray)") from None
    return ray


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Stop in one line when a ``host:port`` (or ``ray://host:port``) address does not answer."""
    match = re.fullmatch(r"(?:ray://)?\[?([^\]/]+?)\]?:(\d+)/?", address.strip())
    if address.strip() == "auto" or not match:
        if address.strip() != "auto":
            raise InputError(f"--ray-address {address!r} is not host:port (or ray://host:port, auto)")
        return
    try:
        with socket.create_connection((match.group(1), int(match.group(2))), timeout=timeout):
            return
    except OSError as exc:
        raise InputError(f"cannot reach the Ray cluster at {address} ({exc.strerror or exc}); start "
                         "one with `ray start --head` or fix --ray-address / RAY_ADDRESS") from None


def preflight(address: str) -> None:
    """Stop in one line when Ray is missing or ``address`` (if any) does not answer."""
    _import_ray()
    if address:
        check_reachable(address)


def _progress_hub(ray: Any) -> Any:
    """An actor collecting ``(key, step)`` reports from the tasks until the driver drains them."""

    class ProgressHub:
        def __init__(self) -> None:
            self.items: list[tuple[str, str, None]] = []

        def report(self, key: str, step: str) -> None:
            self.items.append((key, step, None))

        def drain(self) -> list[tuple[str, str, None]]:
            items, self.items = self.items, []
            return items

    return ray.remote(num_cpus=0)(ProgressHub).remote()


def _target_task(job: TargetJob, hub: Any) -> dict[str, Any]:
    """The body of one Ray task."""
    return run_job(job, lambda key, step: hub.report.remote(key, step))


class RayExecutor:
    """Targets on a Ray cluster, at most ``jobs`` in flight when ``jobs`` is given."""

    def __init__(self, jobs: int, address: str) -> None:
        """Connect to ``address`` (or start a local Ray with ``jobs`` CPUs when there is none)."""
        ray = self.ray = _import_ray()
        if address:
            check_reachable(address)
        env = {k: v for k, v in os.environ.items() if _FORWARDED.match(k)}
        try:
            self.owned = not ray.is_initialized()
            if self.owned:
                ray.init(address=address or None, num_cpus=None if address else (jobs or None),
                         logging_level=logging.WARNING, include_dashboard=False,
                         runtime_env={"env_vars": env} if env else None)
        except Exception as exc:  # Ray's errors vary by version; all mean the same here
            raise InputError(f"cannot start Ray at {address or 'this machine'}: "
                             f"{str(exc).strip().splitlines()[0][:200]}") from None
        self.limit = jobs
        self.hub = _progress_hub(ray)
        self.task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(_target_task)
        self.backlog: list[TargetJob] = []
        self.running: dict[Any, TargetJob] = {}

    def submit(self, job: TargetJob) -> None:
        """Queue one target; it becomes a task once fewer than ``jobs`` are running."""
        self.backlog.append(job)
        self._start_tasks()

    def _start_tasks(self) -> None:
        while self.backlog and (not self.limit or len(self.running) < self.limit):
            job = self.backlog.pop(0)
            self.running[self.task.remote(job, self.hub)] = job

    def updates(self, timeout: float) -> list[Update]:
        """Steps the tasks reported, then the records of finished tasks."""
        ray, found = self.ray, []
        ready: list[Any] = []
        if self.running:
            ready, _ = ray.wait(list(self.running), num_returns=1, timeout=timeout)
            if ready:
                ready, _ = ray.wait(list(self.running), num_returns=len(self.running), timeout=0)
        found.extend(ray.get(self.hub.drain.remote()))
        for ref in ready:
            job = self.running.pop(ref)
            try:
                record = ray.get(ref)
            except Exception as exc:  # retries used up, or the task raised: the target's error
                record = error_record(job, exc)
            found.append((job.key, "", record))
        self._start_tasks()
        return found

    def close(self) -> None:
        """Stop unfinished tasks, and the local Ray when this executor started it."""
        for ref in self.running:
            self.ray.cancel(ref, force=True)
        if self.owned:
            self.ray.shutdown()
