"""``logicfuzz memory list | show | search | stats``: read-only views of a bank."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console
from rich.table import Table

from logicfuzz.cli_memory_bank import err, guarded, open_bank, short
from long_term_memory.experience import Gatekeeper, admin
from long_term_memory.experience.rules import LEVEL_NAMES


@guarded
def list_command(args: argparse.Namespace) -> int:
    """``memory list``: items with their lifecycle standing."""
    with open_bank(args) as bank:
        rows = admin.rows(bank, args.sort, args.status)
        table = Table(title=f"experience bank {bank.paths.task}: {bank.size} items, "
                            f"{bank.record_count} records ({bank.paths.directory})")
        for col in ("id", "title", "from", "ok", "level", "trust", "fails", "hits", "uses", "status"):
            table.add_column(col, overflow="fold")
        for entry, st in rows[: args.limit or None]:
            table.add_row(entry.item_id, short(entry.title, 48), short(entry.task_id, 28),
                          "yes" if entry.is_success else "no", LEVEL_NAMES[st.validation_level],
                          f"{st.trust:.2f}", f"{st.consecutive_fail:g}", str(st.hit_count),
                          str(st.use_count), st.status)
        Console().print(table)
        if args.limit and len(rows) > args.limit:
            err.print(f"{len(rows) - args.limit} more; use --limit 0 to show all")
    return 0


@guarded
def show_command(args: argparse.Namespace) -> int:
    """``memory show ID``: one item or record in full."""
    with open_bank(args) as bank:
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
                      f"level {v['level_before']}→{v['level_after']} ({short(v['notes'], 90)})")
    out.print(f"\n[bold]record {record.get('memory_id')}[/] ({record.get('kind')}, "
              f"{'success' if record.get('is_success') else 'failure'}) task {record.get('task_id')}")
    out.print(f"[dim]query:[/] {record.get('query')}")
    if record.get("trajectory"):
        out.print(f"[dim]trajectory:[/]\n{record['trajectory']}")
    for i in record.get("memory_items") or []:
        where = f"merged into {i['merged_into']}" if i.get("merged_into") else i.get("item_id")
        out.print(f"  - [{where}] {i.get('title')}")
    return 0


@guarded
def search_command(args: argparse.Namespace) -> int:
    """``memory search TEXT``: what a target described by TEXT would retrieve."""
    with open_bank(args) as bank:
        matches = bank.search(args.text, exclude_task_id=args.exclude_task, k=args.k,
                              threshold=args.threshold)
        chosen = {i.item_id for i in Gatekeeper(bank.config).prepare_inject(matches)}
    table = Table(title=f"search: {short(args.text, 60)}")
    for col in ("id", "score", "title", "from", "level", "trust", "status", "injected"):
        table.add_column(col, overflow="fold")
    for m in matches:
        table.add_row(m.item_id, f"{m.score:.3f}", short(m.title, 48), short(m.task_id, 28),
                      str(m.validation_level), f"{m.trust:.2f}", m.status,
                      "yes" if m.item_id in chosen else "")
    Console().print(table)
    if not matches:
        err.print("no match at or above the threshold")
    return 0


@guarded
def stats_command(args: argparse.Namespace) -> int:
    """``memory stats``: counts, levels, trust, lifecycle totals, files."""
    with open_bank(args) as bank:
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
        ("files", ", ".join(f"{k} {v:,} B" for k, v in data["files"].items())
         or ("none: rows in PostgreSQL" if data["directory"].startswith("postgresql:") else "-")),
    ):
        table.add_row(what, value)
    Console().print(table)
    return 0
