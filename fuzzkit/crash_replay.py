"""The crash of a fuzzing run made readable: its input written out, its report replayed when unreadable."""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import shutil
from functools import partial
from pathlib import Path

from fuzzkit.crash import CrashReport, parse_sanitizer_report
from fuzzkit.errors import ToolchainError
from fuzzkit.sandbox import Limits, run_sandboxed
from fuzzkit.sandbox_env import step_env
from fuzzkit.tools import tool

__all__ = ["fuzz_env", "replayed_crash"]

_BASE64 = re.compile(r"^Base64: ([A-Za-z0-9+/=]*)$", re.MULTILINE)
_ARTIFACT_PREFIXES = ("crash-", "leak-", "timeout-", "oom-")
_TAIL_LINES = 12
_ASAN_DEFAULTS = "detect_leaks=1:symbolize=1:abort_on_error=0:handle_abort=0"


def fuzz_env() -> dict[str, str]:
    """A fresh environment (never this process's: it may hold API keys) with sanitizer options.

    The user's ``ASAN_OPTIONS`` come after the defaults, so they win.
    """
    env = step_env()
    env["ASAN_OPTIONS"] = ":".join(filter(None, [_ASAN_DEFAULTS, env.get("ASAN_OPTIONS", "")]))
    symbolizer = os.environ.get("ASAN_SYMBOLIZER_PATH")
    try:
        env["ASAN_SYMBOLIZER_PATH"] = symbolizer or tool("llvm-symbolizer")
    except ToolchainError:
        pass  # unsymbolized frames still parse; only file names are missing
    return env


def replayed_crash(crash: CrashReport | None, text: str, binary: Path, work_dir: Path, harness_name: str,
                 timeout_per_input: int, limits: Limits) -> tuple[CrashReport | None, list[str]]:
    """The run's report and crash files, repaired when the fuzzing process was out of descriptors.

    A crash file none could be written for is rebuilt from the log; a report with no symbolized
    frame is replaced by the first file's replay alone. A leak whose allocation stack stops before
    any project frame (a dependency built without frame pointers, where ASan's fast unwinder
    gives up after ``malloc`` and the dependency's allocator) is replayed with the slow unwinder,
    which the fuzzing run itself cannot afford on every allocation.
    """
    artifacts = work_dir / "artifacts"
    crash_files = sorted(str(p) for p in artifacts.iterdir() if p.name.startswith(_ARTIFACT_PREFIXES))
    if crash is not None and not crash_files:
        crash_files = _unit_from_log(text, artifacts)
    if crash is None or not crash_files:
        return crash, crash_files
    replay = partial(_symbolized_replay, binary, work_dir, Path(crash_files[0]), work_dir / "fuzz.log",
                     harness_name, timeout_per_input, limits)
    if not any(f.file for f in crash.frames):
        crash = replay() or crash
    if crash.kind == "leak" and not crash.project_frames:
        # A lone run checks for leaks only at exit; the corpus form checks right after the input,
        # as the fuzzing run that found it did.
        crash = replay(slow_unwind=True) or replay(slow_unwind=True, as_corpus=True) or crash
    return crash, crash_files


def _unit_from_log(text: str, artifacts: Path) -> list[str]:
    """The crash input rebuilt from the log's ``Base64:`` line, when libFuzzer could not write it.

    With no descriptor left (a harness leaking one per input), libFuzzer still prints the unit
    but its artifact file is never created; the coverage replay and the triage need the file.
    """
    found = _BASE64.findall(text)
    if not found:
        return []
    try:
        unit = base64.b64decode(found[-1], validate=True)
    except (binascii.Error, ValueError):
        return []
    path = artifacts / f"crash-{hashlib.sha1(unit).hexdigest()}"
    path.write_bytes(unit)
    return [str(path)]


def _symbolized_replay(binary: Path, work_dir: Path, unit: Path, log_path: Path, harness_name: str,
                       timeout_per_input: int, limits: Limits,
                       slow_unwind: bool = False, as_corpus: bool = False) -> CrashReport | None:
    """The crash's report from its input run alone, when the fuzzing process could not symbolize it.

    A harness that leaks a descriptor per input leaves none for the symbolizer's pipe by the
    time it crashes ("Can't create a socket pair", errno 24): every frame is a bare address,
    and the crash cannot be placed in the harness or the library. A fresh process has them.
    The replay's log is appended to the fuzzing log. None when the input does not crash alone,
    or (``slow_unwind``) when its report still has no project frame. ``as_corpus``: the input is
    run as a one-file corpus (``-runs=0 DIR``), where libFuzzer looks for a leak after each input.
    """
    replay_log = work_dir / "replay.log"
    env = fuzz_env()
    if slow_unwind:
        env["ASAN_OPTIONS"] = f"{env['ASAN_OPTIONS']}:fast_unwind_on_malloc=0"
    corpus = work_dir / "replay-corpus"  # the input alone, and what libFuzzer writes of it
    args = [f"-artifact_prefix={corpus}/", "-runs=0", str(corpus)] if as_corpus else [str(unit)]
    try:
        if as_corpus:
            corpus.mkdir(exist_ok=True)
            shutil.copy(unit, corpus)
        run_sandboxed([str(binary), f"-timeout={int(timeout_per_input)}", *args], cwd=work_dir,
                      log_path=replay_log, wall_timeout=timeout_per_input + 15, limits=limits, env=env)
    finally:
        shutil.rmtree(corpus, ignore_errors=True)
    text = replay_log.read_text(errors="replace")
    replay_log.unlink()
    # From the input's own run on: the start-up lines before it would read as a crash before
    # fuzzing began (near init), which the fuzzing run has already ruled out or not.
    ran = -1 if as_corpus else text.find(f"Running: {unit}")
    crash = parse_sanitizer_report(text[ran:] if ran >= 0 else text, harness_name=harness_name)
    why = ("its allocation stack stopped before any project frame" if slow_unwind
           else "the fuzzing process could not symbolize its report") + (", as a corpus" if as_corpus else "")
    failed = _unusable(crash, slow_unwind)
    with log_path.open("a") as log:
        if crash is None or failed:
            # Said in the log, so a report left as the fuzzing run wrote it can be told apart from
            # one never replayed; the last lines show what the lone run did instead.
            tail = "\n".join(text.splitlines()[-_TAIL_LINES:])
            log.write(f"\n==== LogicFuzz: the crash input replayed alone ({why}) gave {failed}; "
                      f"the fuzzing run's report is kept ====\n{tail}\n")
            return None
        log.write(f"\n==== LogicFuzz: the crash input replayed alone ({why}) ====\n" + text)
    crash.reproducer = crash.reproducer or str(unit)
    return crash


def _unusable(crash: CrashReport | None, slow_unwind: bool) -> str:
    """Why a replay's report cannot replace the fuzzing run's ('' when it can)."""
    if crash is None:
        return "no sanitizer report"
    if not any(f.file for f in crash.frames):
        return "no symbolized frame"
    if slow_unwind and not crash.project_frames:
        return "still no project frame"
    return ""
