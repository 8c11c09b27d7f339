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
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from long_term_memory.embeddings import EmbeddingModelError
from long_term_memory.experience import (
    ExperienceConfig,
    ExperienceConfigError,
    Gatekeeper,
    ReadOnlyBankError,
    admin,
)
from long_term_memory.experience.bank import ExperienceBank
from long_term_memory.experience.pg_bank import PgExperienceBank
from long_term_memory.experience.rules import LEVEL_NAMES
from long_term_memory.experience.transfer import export_files, import_files
from long_term_memory.shared_store import check_url, shown

err = Console(stderr=True, soft_wrap=True)


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
    p.set_defaults(func=_list)
    p = sub.add_parser("show", help="one item (MEM-xxxxxxxx) or record (rec-...) in full")
    _common(p)
    p.add_argument("id", help="item id, record id, or a unique prefix")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_show)
    p = sub.add_parser("search", help="what a target described by TEXT would retrieve")
    _common(p)
    p.add_argument("text", help="query text, e.g. 'project acme; target acme_parse'")
    p.add_argument("-k", type=int, help="matches to fetch (default: retrieval.candidates)")
    p.add_argument("--threshold", type=float, help="minimum similarity (default: retrieval.threshold)")
    p.add_argument("--exclude-task", help="task id whose own items are excluded (project/function)")
    p.set_defaults(func=_search)
    p = sub.add_parser("stats", help="counts, levels, trust, lifecycle totals, files")
    _common(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_stats)
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


def _config(args: argparse.Namespace) -> ExperienceConfig:
    return ExperienceConfig.load(Path(args.config) if args.config else None)


def _store(args: argparse.Namespace, config: ExperienceConfig) -> str:
    return args.store if args.store is not None else config.bank.store


def _open(args: argparse.Namespace, read_only: bool = True) -> ExperienceBank:
    config = _config(args)
    task = args.task or config.bank.task
    store = _store(args, config)
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


def _guarded(func: Any) -> Any:
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


def _short(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


@_guarded
def _list(args: argparse.Namespace) -> int:
    with _open(args) as bank:
        rows = admin.rows(bank, args.sort, args.status)
        table = Table(title=f"experience bank {bank.paths.task}: {bank.size} items, "
                            f"{bank.record_count} records ({bank.paths.directory})")
        for col in ("id", "title", "from", "ok", "level", "trust", "fails", "hits", "uses", "status"):
            table.add_column(col, overflow="fold")
        for entry, st in rows[: args.limit or None]:
            table.add_row(entry.item_id, _short(entry.title, 48), _short(entry.task_id, 28),
                          "yes" if entry.is_success else "no", LEVEL_NAMES[st.validation_level],
                          f"{st.trust:.2f}", f"{st.consecutive_fail:g}", str(st.hit_count),
                          str(st.use_count), st.status)
        Console().print(table)
        if args.limit and len(rows) > args.limit:
            err.print(f"{len(rows) - args.limit} more; use --limit 0 to show all")
    return 0


@_guarded
def _show(args: argparse.Namespace) -> int:
    with _open(args) as bank:
        kind, ident = admin.find(bank, args.id)
        data: dict[str, Any] = (admin.item_view(bank, ident) if kind == "item"
                                else {"record": bank.record(ident)})
    if args.json:
        print(json.dumps(data, indent=1, ensure_ascii=False, default=str))
        return 0
    out = Console()
    record = data.get("record") or {}
    if kind == "item":
        item, st = data["item"], data["stats"]
        out.print(f"[bold]{item['item_id']}[/] {item['title']}")
        out.print(f"[dim]when:[/] {item['description']}\n\n{item['content']}\n")
        out.print(f"status {st['status']} · level {st['validation_level']} "
                  f"({LEVEL_NAMES[st['validation_level']]}) · trust {st['trust']:.2f} · "
                  f"consecutive_fail {st['consecutive_fail']:g} · hits {st['hit_count']} · "
                  f"uses {st['use_count']} · pass/partial/fail {st['pass_count']}/"
                  f"{st['partial_count']}/{st['fail_count']} · support {st['support']} · "
                  f"freshness {data['freshness']}")
        for v in data["history"]["validations"]:
            out.print(f"  validation {v['result']}: trust {v['trust_before']:.2f}→{v['trust_after']:.2f}, "
                      f"level {v['level_before']}→{v['level_after']} ({_short(v['notes'], 90)})")
    out.print(f"\n[bold]record {record.get('memory_id')}[/] ({record.get('kind')}, "
              f"{'success' if record.get('is_success') else 'failure'}) task {record.get('task_id')}")
    out.print(f"[dim]query:[/] {record.get('query')}")
    if record.get("trajectory"):
        out.print(f"[dim]trajectory:[/]\n{record['trajectory']}")
    for i in record.get("memory_items") or []:
        where = f"merged into {i['merged_into']}" if i.get("merged_into") else i.get("item_id")
        out.print(f"  - [{where}] {i.get('title')}")
    return 0


@_guarded
def _search(args: argparse.Namespace) -> int:
    with _open(args) as bank:
        matches = bank.search(args.text, exclude_task_id=args.exclude_task, k=args.k,
                              threshold=args.threshold)
        chosen = {i.item_id for i in Gatekeeper(bank.config).prepare_inject(matches)}
    table = Table(title=f"search: {_short(args.text, 60)}")
    for col in ("id", "score", "title", "from", "level", "trust", "status", "injected"):
        table.add_column(col, overflow="fold")
    for m in matches:
        table.add_row(m.item_id, f"{m.score:.3f}", _short(m.title, 48), _short(m.task_id, 28),
                      str(m.validation_level), f"{m.trust:.2f}", m.status,
                      "yes" if m.item_id in chosen else "")
    Console().print(table)
    if not matches:
        err.print("no match at or above the threshold")
    return 0


@_guarded
def _stats(args: argparse.Namespace) -> int:
    with _open(args) as bank:
        data = admin.summary(bank)
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    table = Table(title=f"experience bank {data['task']} ({data['directory']})", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    life = data["lifecycle"]
    for what, value in (
        ("records", f"{data['records']} ({', '.join(f'{k} {v}' for k, v in data['kinds'].items())})"),
        ("items", f"{data['items']} searchable, {data['merged_items']} merged into others"),
        ("status", ", ".join(f"{k} {v}" for k, v in data["statuses"].items()) or "-"),
        ("levels", ", ".join(f"{LEVEL_NAMES[int(k)]} {v}" for k, v in data["levels"].items()) or "-"),
        ("mean trust", str(data["trust_mean"] if data["trust_mean"] is not None else "-")),
        ("decisions", str(life["decisions"])),
        ("hits / uses", f"{life['hits']} / {life['uses']}"),
        ("validations", ", ".join(f"{k} {v}" for k, v in life["validations"].items()) or "-"),
        ("embedding", f"{data['model']} ({data['dim']}-d), index {data['index']}"),
        ("files", ", ".join(f"{k} {v:,} B" for k, v in data["files"].items())),
    ):
        table.add_row(what, value)
    Console().print(table)
    return 0


@_guarded
def _import(args: argparse.Namespace) -> int:
    config = _config(args)
    task, store = args.task or config.bank.task, _store(args, config)
    if not store:
        raise ValueError("memory import needs --store postgresql://USER@HOST:PORT/DB (or bank.store)")
    moved = import_files(Path(args.from_dir).expanduser(), task, check_url(store), config)
    err.print(f"imported bank {task}: {moved.records} records, {moved.items} items, "
              f"{moved.decisions} decisions into {shown(store)}")
    return 0


@_guarded
def _export(args: argparse.Namespace) -> int:
    if args.to_dir:
        config = _config(args)
        task, store = args.task or config.bank.task, _store(args, config)
        if not store:
            raise ValueError("memory export --to-dir needs --store postgresql://USER@HOST:PORT/DB")
        moved = export_files(check_url(store), task, Path(args.to_dir).expanduser(), config)
        err.print(f"exported bank {task}: {moved.records} records, {moved.items} items, "
                  f"{moved.decisions} decisions to {args.to_dir}")
        return 0
    with _open(args) as bank:
        lines = [admin.dumps(r) + "\n" for r in admin.export_records(bank)]
    if args.out:
        Path(args.out).write_text("".join(lines), encoding="utf-8")
        err.print(f"exported {len(lines)} records to {args.out}")
    else:
        sys.stdout.writelines(lines)
    return 0


@_guarded
def _unblock(args: argparse.Namespace) -> int:
    with _open(args, read_only=False) as bank:
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


@_guarded
def _prune(args: argparse.Namespace) -> int:
    criteria = admin.PruneCriteria(args.blocked, args.min_trust, args.older_than)
    if not criteria.any():
        criteria.blocked = True  # the safe default: what the Gatekeeper already refuses to inject
    with _open(args, read_only=args.dry_run) as bank:
        report = admin.prune(bank, criteria, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    for row in report.removed:
        err.print(f"{verb} {row['item_id']} ({row['reason']}): {_short(row['title'], 60)}")
    err.print(f"{verb} {len(report.removed)} items, {report.records_dropped} records left empty; "
              f"{report.kept} items kept")
    return 0


@_guarded
def _repair(args: argparse.Namespace) -> int:
    config = _config(args)
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
