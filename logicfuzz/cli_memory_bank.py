"""What every ``logicfuzz memory`` command shares: options to bank, and bad input to exit 2."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path
from typing import Any

from rich.console import Console

from long_term_memory.embeddings import EmbeddingModelError
from long_term_memory.experience import (
    ExperienceConfig,
    ExperienceConfigError,
    ReadOnlyBankError,
    admin,
)
from long_term_memory.experience.bank import ExperienceBank
from long_term_memory.experience.pg_bank import PgExperienceBank
from long_term_memory.shared_store import check_url, shown

err = Console(stderr=True, soft_wrap=True)


def config_of(args: argparse.Namespace) -> ExperienceConfig:
    """The experience config ``--config`` names (else the shipped default)."""
    return ExperienceConfig.load(Path(args.config) if args.config else None)


def store_of(args: argparse.Namespace, config: ExperienceConfig) -> str:
    """The PostgreSQL URL of ``--store`` or the config (empty: the file bank)."""
    return args.store if args.store is not None else config.bank.store


def open_bank(args: argparse.Namespace, read_only: bool = True) -> ExperienceBank:
    """The bank the command's options name; it must exist."""
    config = config_of(args)
    task = args.task or config.bank.task
    store = store_of(args, config)
    if store:
        bank = PgExperienceBank.open_store(check_url(store), task, config.with_overrides(bank__store=store),
                                           read_only=read_only)
        if read_only and not bank.record_count:
            bank.close()
            raise admin.BankNotFoundError(f"no experience bank {task!r} in {shown(store)}: a run with "
                                          "--store creates it, or `logicfuzz memory import` copies one")
        return bank
    directory = Path(args.dir).expanduser() if args.dir else config.with_overrides(
        bank__task=task).bank_directory()
    return admin.open_existing(task, directory, config, read_only=read_only)


def guarded(func: Any) -> Any:
    """``func`` with bad input and damaged banks turned into one error line and exit code 2."""
    def run(args: argparse.Namespace) -> int:
        try:
            return int(func(args))
        except (admin.BankNotFoundError, ExperienceConfigError, EmbeddingModelError, KeyError,
                ValueError, ReadOnlyBankError, sqlite3.DatabaseError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            hint = getattr(exc, "hint", "")
            if isinstance(exc, sqlite3.DatabaseError):
                message = f"the bank's lifecycle store cannot be read ({exc})"
                hint = "run `logicfuzz memory repair` with the same --task/--dir to rebuild it"
            err.print(f"[red]error:[/] {message}" + (f"\n[yellow]hint:[/] {hint}" if hint else ""))
            return 2
    run.__doc__ = func.__doc__
    return run


def short(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"
