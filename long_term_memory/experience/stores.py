"""Which storage a bank uses: its files (the default) or PostgreSQL (``bank.store``).

Callers that open a bank by its config come here, so the choice is made in one place.
"""

from __future__ import annotations

import threading

from long_term_memory.embeddings import Embedder
from long_term_memory.experience.bank import ExperienceBank
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.pg_bank import PgExperienceBank
from long_term_memory.shared_store import is_postgres

_shared: dict[tuple[str, str, str, bool], ExperienceBank] = {}
_lock = threading.Lock()


def uses_store(config: ExperienceConfig) -> bool:
    """True when the bank lives in PostgreSQL."""
    return is_postgres(config.bank.store)


def open_bank(config: ExperienceConfig, task: str | None = None, embedder: Embedder | None = None,
              *, read_only: bool = False) -> ExperienceBank:
    """Open bank ``task`` (default ``bank.task``) where ``config`` puts it.

    Raises:
        StoreError: the PostgreSQL store cannot be used.
    """
    task = task or config.bank.task
    if uses_store(config):
        return PgExperienceBank.open_store(config.bank.store, task, config, embedder, read_only=read_only)
    return ExperienceBank.open(task, config.with_overrides(bank__task=task).bank_directory(), config,
                               embedder, read_only=read_only)


def shared_bank(config: ExperienceConfig, *, read_only: bool,
                embedder: Embedder | None = None) -> ExperienceBank:
    """The process-wide bank for ``config`` and mode (see :meth:`ExperienceBank.shared`)."""
    if not uses_store(config):
        return ExperienceBank.shared(config, read_only=read_only, embedder=embedder)
    key = (config.bank.store, config.bank.task, config.embedding.model, read_only)
    with _lock:
        bank = _shared.get(key)
        if bank is None:
            bank = _shared[key] = open_bank(config, embedder=embedder, read_only=read_only)
    return bank
