"""``logicfuzz memory list | show ID | search TEXT | stats | export | import | prune | repair``.

Every command works on one bank: ``--task`` (default from the config, ``fuzz-c``) in ``--dir``
(default ``<cache dir>/experience/<task>``), configured by ``--config``; or in the PostgreSQL
database ``--store`` names (``import`` and ``export --to-dir`` move a bank between the two).
Inspection commands open the bank read-only and load no embedding model unless they must encode (``search``).
``repair`` reads every bank file in full and heals it: corrupt record lines go to the quarantine
file, a damaged lifecycle store is rebuilt (kept as a backup), bad vectors are embedded again.
Exit codes: 0 done; 2 bad input (no such bank, id, option or config value) or a damaged bank
file that needs ``memory repair``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from logicfuzz.cli_memory_bank import config_of, err, guarded, open_bank, short, store_of
from logicfuzz.cli_memory_views import list_command, search_command, show_command, stats_command
from long_term_memory.experience import (
    admin,
)
from long_term_memory.experience.transfer import export_files, import_files
from long_term_memory.shared_store import check_url, shown


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", help="bank name (default: bank.task of the config, fuzz-c)")
    p.add_argument("--dir", help="bank directory (default: <cache dir>/experience/<task>)")
    p.add_argument("--config", help="experience config file (YAML or TOML)")
    p.add_argument("--store", help="postgresql://USER@HOST:PORT/DB: the bank in that database "
                                   "(default: bank.store of the config, else the files)")


def add_memory_commands(subparsers: Any) -> None:
    """Add ``memory`` and its subcommands to the CLI's subparsers."""
    memory = subparsers.add_parser("memory", help="inspect and maintain the experience bank")
    sub = memory.add_subparsers(dest="memory_command", required=True)
    p = sub.add_parser("list", help="items with their lifecycle standing")
    _common(p)
    p.add_argument("--limit", type=int, default=50, help="rows to show (default 50, 0 = all)")
    p.add_argument("--sort", default="recent", choices=("recent", "trust", "level", "hits", "uses"))
    p.add_argument("--status", choices=("active", "blocked", "probation"),
                   help="only items with this status")
    p.set_defaults(func=list_command)
    p = sub.add_parser("show", help="one item (MEM-xxxxxxxx) or record (rec-...) in full")
    _common(p)
    p.add_argument("id", help="item id, record id, or a unique prefix")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=show_command)
    p = sub.add_parser("search", help="what a target described by TEXT would retrieve")
    _common(p)
    p.add_argument("text", help="query text, e.g. 'project acme; target acme_parse'")
    p.add_argument("-k", type=int, help="matches to fetch (default: retrieval.candidates)")
    p.add_argument("--threshold", type=float, help="minimum similarity (default: retrieval.threshold)")
    p.add_argument("--exclude-task", help="task id whose own items are excluded (project/function)")
    p.set_defaults(func=search_command)
    p = sub.add_parser("stats", help="counts, levels, trust, lifecycle totals, files")
    _common(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=stats_command)
    p = sub.add_parser("export", help="every record with its items' lifecycle stats, as JSON lines")
    _common(p)
    p.add_argument("--out", help="output file (default: standard output)")
    p.add_argument("--to-dir", help="write the --store bank as a file bank in this (empty) directory: "
                                    "the same JSONL bytes, vectors and lifecycle")
    p.set_defaults(func=_export)
    p = sub.add_parser("import", help="copy a file bank into an empty PostgreSQL bank (--store)")
    _common(p)
    p.add_argument("--from-dir", required=True, help="directory of the file bank to copy")
    p.set_defaults(func=_import)
    p = sub.add_parser("unblock", help="put a blocked item on probation: shown once more, "
                                           "its next validation decides")
    _common(p)
    p.add_argument("id", help="item id (MEM-xxxxxxxx) or a unique prefix")
    p.set_defaults(func=_unblock)
    p = sub.add_parser("prune", help="remove blocked, distrusted or stale items")
    _common(p)
    p.add_argument("--blocked", action="store_true", help="remove blocked items")
    p.add_argument("--min-trust", type=float, help="remove items with trust below this")
    p.add_argument("--older-than", type=float, metavar="DAYS",
                   help="remove items neither created nor validated in this many days")
    p.add_argument("--dry-run", action="store_true", help="only show what would be removed")
    p.set_defaults(func=_prune)
    p = sub.add_parser("repair", help="check every bank file and heal what is damaged (keeps backups)")
    _common(p)
    p.set_defaults(func=_repair)


@guarded
def _import(args: argparse.Namespace) -> int:
    config = config_of(args)
    task, store = args.task or config.bank.task, store_of(args, config)
    if not store:
        raise ValueError("memory import needs --store postgresql://USER@HOST:PORT/DB (or bank.store)")
    moved = import_files(Path(args.from_dir).expanduser(), task, check_url(store), config)
    err.print(f"imported bank {task}: {moved.records} records, {moved.items} items, "
              f"{moved.decisions} decisions into {shown(store)}")
    return 0


@guarded
def _export(args: argparse.Namespace) -> int:
    if args.to_dir:
        config = config_of(args)
        task, store = args.task or config.bank.task, store_of(args, config)
        if not store:
            raise ValueError("memory export --to-dir needs --store postgresql://USER@HOST:PORT/DB")
        moved = export_files(check_url(store), task, Path(args.to_dir).expanduser(), config)
        err.print(f"exported bank {task}: {moved.records} records, {moved.items} items, "
                  f"{moved.decisions} decisions to {args.to_dir}")
        return 0
    with open_bank(args) as bank:
        lines = [admin.dumps(r) + "\n" for r in admin.export_records(bank)]
    if args.out:
        Path(args.out).write_text("".join(lines), encoding="utf-8")
        err.print(f"exported {len(lines)} records to {args.out}")
    else:
        sys.stdout.writelines(lines)
    return 0


@guarded
def _unblock(args: argparse.Namespace) -> int:
    with open_bank(args, read_only=False) as bank:
        kind, ident = admin.find(bank, args.id)
        if kind != "item":
            raise ValueError(f"{args.id} is a record, not an item: unblock one of its MEM-... items")
        with bank.write_lock():
            before = bank.stats([ident]).get(ident)
            if before is None or before.status != "blocked":
                status = before.status if before else "unknown"
                raise ValueError(f"{ident} is {status}, not blocked: nothing to unblock")
            bank.lifecycle.set_status(ident, "probation")
    err.print(f"{ident} is on probation: the next target it matches sees it, and that run's "
              "validation decides (pass: active again; partial or fail: blocked again)")
    return 0


@guarded
def _prune(args: argparse.Namespace) -> int:
    criteria = admin.PruneCriteria(args.blocked, args.min_trust, args.older_than)
    if not criteria.any():
        criteria.blocked = True  # the safe default: what the Gatekeeper already refuses to inject
    with open_bank(args, read_only=args.dry_run) as bank:
        report = admin.prune(bank, criteria, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    for row in report.removed:
        err.print(f"{verb} {row['item_id']} ({row['reason']}): {short(row['title'], 60)}")
    err.print(f"{verb} {len(report.removed)} items, {report.records_dropped} records left empty; "
              f"{report.kept} items kept")
    return 0


@guarded
def _repair(args: argparse.Namespace) -> int:
    config = config_of(args)
    task = args.task or config.bank.task
    directory = Path(args.dir).expanduser() if args.dir else config.with_overrides(
        bank__task=task).bank_directory()
    with admin.repair(task, directory, config) as bank:
        for notice in bank.notices:
            detail = ", ".join(f"{k}={v}" for k, v in notice.items() if k not in ("type", "bank"))
            err.print(f"{notice['type']}: {detail}")
        err.print(f"bank {task} in {directory}: {bank.record_count} records, {bank.size} items; "
                  + ("repaired" if bank.notices else "nothing to repair"))
    return 0
