"""The environment a sandboxed step gets: built from nothing, never copied from ours.

The tool's own environment may hold API keys (``OPENAI_API_KEY``), tokens and proxy
passwords; an untrusted harness or configure script must not see them. A step gets
``PATH``, a C locale, ``HOME`` and ``TMPDIR`` pointing at its run directory, the sanitizer
option variables the user set (they carry no secrets and tune reports), and what the
caller adds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# Tuning knobs a user may set for sanitizers and builds; passed through as given.
PASSTHROUGH = (
    "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "MSAN_OPTIONS",
    "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "SOURCE_DATE_EPOCH",
)  # fmt: skip


def step_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A fresh environment for a sandboxed step, plus ``extra`` (which wins).

    ``HOME`` and ``TMPDIR`` are filled in by :func:`fuzzkit.sandbox.run_sandboxed`.
    """
    env = {"PATH": os.environ.get("PATH") or _DEFAULT_PATH, "LANG": "C", "LC_ALL": "C", "TERM": "dumb"}
    env.update({name: os.environ[name] for name in PASSTHROUGH if os.environ.get(name)})
    env.update(extra or {})
    return env
