"""A throwaway PostgreSQL 15 server for tests: initdb + pg_ctl in a temp dir on a free port.

As root, the server runs as the ``postgres`` user (from the Debian package) or, when there is
none, as ``nobody``: PostgreSQL refuses to run as root. The data directory is made over to that
user. Without the binaries the caller skips with the reason :func:`missing` gives.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def _bin_dir() -> Path | None:
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)
    return Path(found[0]).parent if found else None


def missing() -> str:
    """Why no server can start here ("" when one can)."""
    if _bin_dir() is None:
        return ("PostgreSQL binaries (initdb, pg_ctl) not found: install postgresql-15 "
                "(scripts/setup.sh --dev)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: pip install -e '.[postgres]'"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One running cluster; :attr:`url` reaches its ``postgres`` database as ``logicfuzz``."""

    def __init__(self) -> None:
        """Create, start and wait for the cluster."""
        bin_dir = _bin_dir()
        assert bin_dir is not None, missing()
        self.bin = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="logicfuzz-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._user = None
        if os.geteuid() == 0:
            self._user = "postgres" if _has_user("postgres") else "nobody"
            os.chmod(self.root, 0o755)
            shutil.chown(self.root, self._user)
        self._run("initdb", "-D", str(self.data), "-U", "logicfuzz", "--auth=trust", "-E", "UTF8",
                  "--no-sync")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                  "-o", f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                  "-c max_connections=100", "start")
        self.url = f"postgresql://logicfuzz@127.0.0.1:{self.port}/postgres"
        self._wait()

    def _run(self, tool: str, *args: str) -> None:
        cmd = [str(self.bin / tool), *args]
        if self._user:
            cmd = ["runuser", "-u", self._user, "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, cwd=self.root, timeout=120)

    def _wait(self) -> None:
        import psycopg

        for _ in range(100):
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                time.sleep(0.1)
        raise RuntimeError(f"PostgreSQL did not accept connections: {self.root / 'server.log'}")

    def database(self, name: str) -> str:
        """A fresh database ``name`` on this server; returns its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url.rsplit("/", 1)[0] + f"/{name}"

    def stop(self) -> None:
        """Stop the server and remove its files."""
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
