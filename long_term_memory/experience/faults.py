"""Fault injection for the crash tests.

``LOGICFUZZ_EXPERIENCE_CRASHPOINT=<name>`` makes the process kill itself with SIGKILL at that
point of a write, exactly as a crash would.

Points: ``before_jsonl``, ``mid_jsonl`` (half a line written), ``after_jsonl``,
``after_lifecycle``, ``after_vectors`` (rows appended, meta not yet committed),
``rewrite_before_meta`` (a full vectors rewrite, meta not yet replaced).
"""

from __future__ import annotations

import os
import signal

CRASH_ENV = "LOGICFUZZ_EXPERIENCE_CRASHPOINT"


def armed(name: str) -> bool:
    """True when the crash point ``name`` is armed."""
    return os.environ.get(CRASH_ENV) == name


def crashpoint(name: str) -> None:
    """Die here, uncleanly, when ``name`` is armed."""
    if armed(name):
        os.kill(os.getpid(), signal.SIGKILL)
