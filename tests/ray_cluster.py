"""A throwaway two-node Ray cluster on this machine: ``ray start --head`` plus ``ray start --address``.

Each node is a ``ray start --block`` process in its own session, so stopping it (SIGTERM to
its process group, SIGKILL after a grace period) ends exactly the processes this cluster
started, never another Ray on the machine. Without Ray the caller skips with :func:`missing`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def missing() -> str:
    """Why no cluster can start here ("" when one can)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return "Ray is not installed: pip install -e '.[ray]' (scripts/setup.sh --dev)"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RayCluster:
    """A head and ``workers`` more nodes, each with ``cpus`` CPUs; :attr:`address` reaches it."""

    def __init__(self, workers: int = 1, cpus: int = 1, env: dict[str, str] | None = None) -> None:
        """Start the head, then the other nodes, and wait until all are alive."""
        # Short: Ray's Unix sockets live under it and their paths are limited to 107 bytes.
        self.root = Path(tempfile.mkdtemp(prefix="lfray-", dir=tempfile.gettempdir()))
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        # The workers import this checkout's code and share the test session's caches.
        # A token of its own: the cluster takes no other driver, and none of the user's files.
        self.env = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0",
                    "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.env.pop("RAY_ADDRESS", None)
        self.nodes: list[subprocess.Popen[bytes]] = []
        common = [f"--num-cpus={cpus}", "--node-ip-address=127.0.0.1", "--disable-usage-stats"]
        self._start("head", ["--head", f"--port={self.port}", "--include-dashboard=false",
                             f"--temp-dir={self.root}", *common])
        self._wait_port()
        for n in range(workers):
            self._start(f"node{n}", [f"--address={self.address}", *common])
        self._wait_nodes(workers + 1)

    def _start(self, name: str, args: list[str]) -> None:
        ray = str(Path(sys.executable).parent / "ray")
        log = (self.root / f"{name}.log").open("wb")
        self.nodes.append(subprocess.Popen([ray, "start", "--block", *args], cwd=self.root, env=self.env,
                                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True))

    def _wait_port(self) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self.nodes[0].poll() is not None:
                    break
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the Ray head did not start: see {self.root / 'head.log'}")

    def _wait_nodes(self, count: int) -> None:
        """Ask the cluster how many nodes are alive, from a separate process (no driver here)."""
        probe = ("import ray, sys, time\nend = time.time() + 120\n"
                 "while True:\n"
                 "    try:\n"
                 "        ray.init(address=sys.argv[1], logging_level='ERROR')\n"
                 "        break\n"
                 "    except ConnectionError:\n"
                 "        if time.time() > end:\n"
                 "            raise\n"
                 "        time.sleep(1)\n"
                 "while sum(n['Alive'] for n in ray.nodes()) < int(sys.argv[2]) and time.time() < end:\n"
                 "    time.sleep(0.3)\n"
                 "sys.exit(0 if sum(n['Alive'] for n in ray.nodes()) >= int(sys.argv[2]) else 1)\n")
        done = subprocess.run([sys.executable, "-c", probe, self.address, str(count)], env=self.env,
                              capture_output=True, timeout=240)
        if done.returncode:
            self.stop()
            why = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
            raise RuntimeError(f"the Ray cluster has fewer than {count} nodes: {why}")

    def owns(self, pid: int) -> bool:
        """Whether process ``pid`` belongs to this cluster (a node's session: workers keep it)."""
        try:
            return os.getsid(pid) in {node.pid for node in self.nodes}
        except ProcessLookupError:
            return False

    def stop(self) -> None:
        """Stop the other nodes, then the head, then whatever is left in their sessions."""
        for node in reversed(self.nodes):
            _stop_group(node)
        sessions = {node.pid for node in self.nodes}
        for pid in _pids_in(sessions):  # workers sit in groups of their own, in the node's session
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.root, ignore_errors=True)


def _pids_in(sessions: set[int]) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.getsid(int(proc.name)) in sessions:
                    found.append(int(proc.name))
            except (ProcessLookupError, PermissionError):
                continue
    return found


def _stop_group(node: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(node.pid, sig)
        except ProcessLookupError:
            break
        try:
            node.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    try:  # what the node started and left behind in its group
        os.killpg(node.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
