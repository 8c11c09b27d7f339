"""Corrupted experience-bank files: every case damages a real bank, then checks the outcome.

Each case seeds a bank on disk (real JSONL, SQLite and vectors; the model-free hashing
embedder), gives its items lifecycle statistics, damages one file the way a crash, a bad disk,
a hand edit or a second model would, and opens the bank again as a run and the CLI do. Outcomes:

- ``healed``: the bank opens; every record is still there unchanged, or its damaged line is kept
  in the quarantine file; every item keeps its trust, level and hits and is found by a search
  for its own text; a notice naming the file reaches ``run.events.jsonl``; a second open finds
  nothing left to repair;
- ``refused``: ``logicfuzz memory ...`` (a subprocess) exits 2 with an error line naming the file
  and a hint saying what to do, no traceback, and no bank file changed;
- ``crashed``: anything else (an exception, a traceback, data lost); ``details`` says what.

:func:`measure` runs every case and returns the counts (``bench/hostile.py`` prints them).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from long_term_memory.experience import (
    EventLog,
    ExperienceBank,
    ExperienceConfig,
    Gatekeeper,
    HashingEmbedder,
    MemoryItem,
    MemoryRecord,
    Outcome,
    read_events,
)
from long_term_memory.experience.quarantine import kept_lines

TASK, MODEL = "fuzz-c", "hashing-256"
ROOT = Path(__file__).resolve().parents[2]
KEPT = ("trust", "validation_level", "status", "hit_count", "use_count", "pass_count", "fail_count")
LESSONS = [
    ("kv/kv_parse", "Copy the input into a NUL-terminated buffer",
     "kv_parse reads a C string: malloc(size + 1), copy the data, set the last byte to 0."),
    ("zlib/inflate", "Initialise the z_stream before inflate",
     "Call inflateInit on a zeroed z_stream before inflate and inflateEnd after it."),
    ("png/png_read", "Install a longjmp error handler first",
     "setjmp(png_jmpbuf(png)) before any read call, or an error aborts the harness."),
    ("xml/xml_parse", "Free the document on every path",
     "xmlFreeDoc after xmlReadMemory even when parsing fails halfway, or leaks hide crashes."),
    ("yaml/yaml_load", "Bound the input size",
     "Reject inputs above 64 KiB before yaml_parser_load; the parser is quadratic on deep nests."),
]


def config(model: str = MODEL) -> ExperienceConfig:
    """The packaged defaults with a hashing embedder."""
    return ExperienceConfig.load().with_overrides(embedding__model=model)


def open_bank(directory: Path, embedder: Any = None, read_only: bool = False, model: str = MODEL,
              ) -> ExperienceBank:
    """Open the bank of a case directory."""
    return ExperienceBank.open(TASK, directory, config(model), embedder or HashingEmbedder(256),
                               read_only=read_only)


def seed(directory: Path) -> dict[str, Any]:
    """Write five records and give three items statistics; returns what must survive."""
    bank = open_bank(directory)
    ids = []
    for n, (task, title, text) in enumerate(LESSONS):
        project, function = task.split("/")
        ids += bank.add_record(MemoryRecord(
            memory_id=f"rec-{n}", task_id=task, task_type=TASK, kind="success",
            query=f"project {project}; target int {function}(const char *text)", is_success=True,
            memory_items=[MemoryItem(title=title, description="C targets", content=text)])).added
    gk = Gatekeeper(bank.config)
    for n in range(2):
        good = Outcome(task_id="kv/kv_get", run_id=f"p{n}", compiles=True, runs=True, lines_percent=40.0)
        bank.apply(gk.evaluate([ids[0], ids[2]], [ids[0]], good), EventLog(None))
    for n in range(3):
        bad = Outcome(task_id="zlib/x", run_id=f"f{n}", compiles=False, runs=False)
        bank.apply(gk.evaluate([ids[1]], [], bad), EventLog(None))
    state = {"ids": ids, "records": {r["memory_id"]: r for r in bank.records()},
             "lines": (directory / f"{TASK}.jsonl").read_bytes().splitlines(),
             "stats": {i: {k: getattr(s, k) for k in KEPT} for i, s in bank.all_stats().items()}}
    bank.close()
    assert state["stats"][ids[0]]["validation_level"] >= 1 and state["stats"][ids[1]]["status"] == "blocked"
    return state


def files(directory: Path) -> dict[str, str]:
    """sha256 of every file in the directory."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())
            if p.is_file()}


def cli(directory: Path, *argv: str, model: str = MODEL) -> subprocess.CompletedProcess[str]:
    """``logicfuzz memory <argv>`` on the case's bank, in a subprocess."""
    cfg = directory.parent / "exp.yaml"
    cfg.write_text(f"embedding:\n  model: {model}\n")
    return subprocess.run([sys.executable, "-m", "logicfuzz.cli", "memory", *argv, "--dir", str(directory),
                           "--task", TASK, "--config", str(cfg)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def _line_of(lines: list[bytes], memory_id: str) -> bytes:
    return next((x for x in lines if f'"memory_id":"{memory_id}"'.encode() in x), b"")


def check_healed(directory: Path, state: dict[str, Any], *, write: bool = True,
                 embedder: Any = None, changed: frozenset[str] = frozenset(),
                 reported: tuple[dict[str, Any], ...] = ()) -> str:
    """'' when the bank healed as promised, else what did not hold.

    ``state["damaged"]`` holds the JSONL lines right after the damage: each must end up as a
    record in the bank or byte for byte in the quarantine file. ``reported`` are notices of an
    earlier open that already did the repair.
    """
    events_path = directory.parent / "run.events.jsonl"
    bank = open_bank(directory, embedder, read_only=not write)
    try:
        notices = [*reported, *bank.notices]
        now = {r["memory_id"]: r for r in bank.records()}
        kept = kept_lines(directory / f"{TASK}.quarantine.jsonl")
        for line in state["damaged"]:
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            in_bank = isinstance(record, dict) and now.get(record.get("memory_id")) == record
            if line.strip() and not in_bank and not any(line in k or k in line for k in kept if k):
                return f"a line was lost (neither in the bank nor in quarantine): {line[:80]!r}"
        for memory_id, record in state["records"].items():
            if memory_id not in changed and memory_id in now and now[memory_id] != record:
                return f"record {memory_id} changed"
        entries = {e.item_id: e for e in bank.entries()}
        after = bank.all_stats()
        events = EventLog(events_path)
        for item_id, old in state["stats"].items():
            owner = next(m for m, r in state["records"].items()
                         if any(i.get("item_id") == item_id for i in r["memory_items"]))
            if owner not in now:
                continue  # its line is quarantined (checked above)
            if item_id not in entries:
                return f"item {item_id} is no longer searchable"
            if write and {k: getattr(after[item_id], k) for k in KEPT} != old:
                return f"item {item_id} lost its lifecycle statistics: {old} -> {after[item_id]}"
            entry = entries[item_id]
            text = f"{entry.query}\n{entry.title}: {entry.description}\n{entry.content}"
            expected = (embedder or HashingEmbedder(256)).encode([text])[0]
            if not np.allclose(bank.view.index.vectors()[bank.view.row_of[item_id]], expected, atol=1e-5):
                return f"item {item_id} has a vector that is not its text's"
            top = bank.search(text, exclude_task_id=None, k=1, threshold=-1.0, events=events)
            if not top or top[0].item_id != item_id:
                return f"item {item_id} is not found by a search for its own text"
        if not notices:
            return "nothing was reported"
        if not [e for e in read_events(events_path) if e["type"].startswith("memory.bank.")]:
            return "no memory.bank.* event reached run.events.jsonl"
    finally:
        bank.close()
    if write:
        again = open_bank(directory, embedder)
        left = list(again.notices)
        again.close()
        if left:
            return f"a second open still repaired something: {left}"
    listed = cli(directory, "list")
    if listed.returncode != 0 or "Traceback" in listed.stderr:
        return f"memory list after healing: exit {listed.returncode}: {listed.stderr[-300:]}"
    return ""


def check_refused(directory: Path, argv: tuple[str, ...] = ("list",), needle: str = "memory repair",
                  model: str = MODEL) -> str:
    """'' when the CLI refuses with exit 2, one error line naming the bank and a hint, nothing changed."""
    before = files(directory)
    done = cli(directory, *argv, model=model)
    if done.returncode != 2:
        return f"memory {' '.join(argv)} exited {done.returncode}: {done.stderr[-400:]}"
    if "Traceback" in done.stderr or "Traceback" in done.stdout:
        return "a traceback was printed"
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    if len(errors) != 1 or str(directory) not in done.stderr or needle not in done.stderr:
        return f"not one clear error line naming the bank and {needle!r}: {done.stderr[-400:]}"
    if files(directory) != before:
        return "the refused command changed bank files"
    return ""


def check_repaired(directory: Path, state: dict[str, Any]) -> str:
    """After a refusal: ``memory repair`` exits 0, keeps a backup and every record."""
    done = cli(directory, "repair")
    if done.returncode != 0 or "Traceback" in done.stderr:
        return f"memory repair exited {done.returncode}: {done.stderr[-400:]}"
    bank = open_bank(directory)
    try:
        now = {r["memory_id"]: r for r in bank.records()}
        if now != state["records"] or bank.size != len(state["stats"]):
            return "memory repair lost records or items"
    finally:
        bank.close()
    return ""


@dataclass(frozen=True)
class Case:
    """One way to damage a bank, and the outcome it must have."""

    name: str
    expected: str  # healed | refused
    damage: Callable[[Path, dict[str, Any]], Any]
    check: Callable[[Path, dict[str, Any]], str] = check_healed


def _jsonl(d: Path) -> Path:
    return d / f"{TASK}.jsonl"


def _edit_lines(d: Path, edit: Callable[[list[bytes]], list[bytes]]) -> None:
    lines = _jsonl(d).read_bytes().split(b"\n")[:-1]
    _jsonl(d).write_bytes(b"".join(line + b"\n" for line in edit(lines)))


def _sqlite(d: Path, action: str, journal: bool = True) -> None:
    db = d / f"{TASK}.lifecycle.sqlite"
    if action == "corrupt":
        db.write_bytes(b"this is not a database, it is what a bad disk left behind\n" * 100)
    elif action == "empty":
        db.write_bytes(b"")
    else:
        db.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if not journal:
        (d / f"{TASK}.lifecycle.jsonl").unlink()


def _sql(d: Path, statement: str) -> None:
    with sqlite3.connect(d / f"{TASK}.lifecycle.sqlite") as db:
        db.execute(statement)
    db.close()


def _vector_row(d: Path, row: int, value: float) -> None:
    meta = json.loads((d / f"{TASK}.meta.json").read_text())
    with open(d / f"{TASK}.embeddings.npy", "r+b") as handle:
        handle.seek(128 + (row % meta["count"]) * meta["dim"] * 4 + 8)
        handle.write(np.array([value], dtype="<f4").tobytes())


def _meta(d: Path, edit: Callable[[dict[str, Any]], Any]) -> None:
    path = d / f"{TASK}.meta.json"
    meta = json.loads(path.read_text())
    edit(meta)
    path.write_text(json.dumps(meta))


class OtherModel:
    """Another model under the same name: same dimension, different vectors."""

    name, dim = MODEL, 256

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.roll(HashingEmbedder(256).encode(texts), 7, axis=1)


def _torn_then_written(d: Path, state: dict[str, Any]) -> str:
    bank = open_bank(d)  # the resumed run writes again: the torn tail is kept aside, then cut
    state["damaged"] = state["damaged"][:-1]  # the torn bytes are not a line; checked below
    torn = _jsonl(d).read_bytes()[-200:].rsplit(b"\n", 1)[-1]
    bank.add_record(MemoryRecord(memory_id="rec-new", task_id="new/f", task_type=TASK, kind="success",
                                 query="project new; target f", is_success=True,
                                 memory_items=[MemoryItem(title="New lesson", description="any",
                                                          content="A lesson written after the crash.")]))
    bank.search("new lesson", exclude_task_id=None, events=EventLog(d.parent / "run.events.jsonl"))
    notices = tuple(bank.notices)
    bank.close()
    if not any(torn in k for k in kept_lines(d / f"{TASK}.quarantine.jsonl")):
        return "the torn last line was cut without being kept"
    return check_healed(d, state, reported=notices)


def _changed_record(d: Path, state: dict[str, Any]) -> str:
    return check_healed(d, state, changed=frozenset({"rec-1"}))


def _other_model(d: Path, state: dict[str, Any]) -> str:
    problem = check_healed(d, state, embedder=OtherModel())
    if not problem and not any(e["type"] == "memory.bank.reembed" for e in
                               read_events(d.parent / "run.events.jsonl")):
        return "the model change under the same name was not reported"
    return problem


def _refused_then_repaired(d: Path, state: dict[str, Any]) -> str:
    return check_refused(d) or check_repaired(d, state)


HOLDER = r"""
import sys
from pathlib import Path
from long_term_memory.experience import ExperienceBank, ExperienceConfig, HashingEmbedder
cfg = ExperienceConfig.load().with_overrides(embedding__model="hashing-256")
bank = ExperienceBank.open("fuzz-c", Path(sys.argv[1]), cfg, HashingEmbedder(256))
print("ready", flush=True)
sys.stdin.read()
bank.close()
"""


def _two_models(d: Path, state: dict[str, Any]) -> str:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(d)], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        if holder.stdout is None or holder.stdout.readline().strip() != "ready":
            return "the first writer did not start"
        for _ in range(3):  # the second model tries again and again: refused every time
            problem = check_refused(d, ("repair",), needle="same embedding model", model="hashing-512")
            if problem:
                return problem
    finally:
        holder.communicate("", timeout=60)
    meta = json.loads((d / f"{TASK}.meta.json").read_text())
    if meta["model"] != MODEL:
        return "the live writer's vectors were re-embedded"
    switched = open_bank(d, HashingEmbedder(512), model="hashing-512")  # no live writer: switching is fine
    switched.close()
    return "" if switched.size == len(state["stats"]) else "the switch after the writer ended lost items"


def _read_only(d: Path, state: dict[str, Any]) -> str:
    before = files(d)
    bank = open_bank(d, read_only=True)
    try:
        for entry in bank.entries():
            bank.search(f"{entry.query}\n{entry.title}", exclude_task_id=None, k=3, threshold=-1.0)
        if bank.size != len(state["stats"]) or not bank.notices:
            return "a read-only open did not keep every item or did not report the bad line"
    finally:
        bank.close()
    return "" if files(d) == before else "a read-only open changed files"


def _while_open(d: Path, state: dict[str, Any]) -> str:
    bank = open_bank(d)
    try:
        _edit_lines(d, lambda ls: [*ls[:1], b"X" + ls[1][1:], *ls[2:]])
        state["damaged"] = _jsonl(d).read_bytes().split(b"\n")[:-1]
        events = EventLog(d.parent / "run.events.jsonl")
        for entry in state["records"].values():
            bank.search(entry["query"], exclude_task_id=None, k=5, threshold=-1.0, events=events)
        notices = tuple(bank.notices)
        if not any(n["type"] == "memory.bank.quarantine" for n in notices):
            return "a line corrupted while the bank was open was not quarantined"
    finally:
        bank.close()
    return check_healed(d, state, reported=notices)


CASES = [
    Case("bad line in the middle, same size", "healed",
         lambda d, s: _edit_lines(d, lambda ls: [*ls[:2], b"X" + ls[2][1:], *ls[3:]])),
    Case("garbage line inserted in the middle", "healed",
         lambda d, s: _edit_lines(d, lambda ls: [*ls[:1], b"{not json", *ls[1:]])),
    Case("bad line at the end", "healed",
         lambda d, s: _edit_lines(d, lambda ls: [*ls, b'{"memory_id": "rec-9", "task_id": '])),
    Case("binary garbage in the middle", "healed",
         lambda d, s: _edit_lines(d, lambda ls: [*ls[:3], bytes(range(256)) + b"\xff\xfe\x00", *ls[3:]])),
    Case("record missing a field", "healed",
         lambda d, s: _edit_lines(d, lambda ls: [*ls[:1], ls[1].replace(b'"query"', b'"qu3ry"'), *ls[2:]])),
    Case("truncated last line (crash mid-write)", "healed",
         lambda d, s: _jsonl(d).write_bytes(_jsonl(d).read_bytes()[:-40]), _torn_then_written),
    Case("record text changed on disk (checksum mismatch)", "healed",
         lambda d, s: _edit_lines(d, lambda ls: [*ls[:1], ls[1].replace(b"inflateEnd", b"inflateENd"),
                                                 *ls[2:]]), _changed_record),
    Case("catalog checksum tampered", "healed",
         lambda d, s: _sql(d, "UPDATE catalog_state SET jsonl_crc = 12345")),
    Case("line corrupted while the bank is open", "healed", lambda d, s: None, _while_open),
    Case("corrupt lifecycle SQLite", "healed", lambda d, s: _sqlite(d, "corrupt")),
    Case("empty lifecycle SQLite", "healed", lambda d, s: _sqlite(d, "empty")),
    Case("deleted lifecycle SQLite", "healed", lambda d, s: _sqlite(d, "delete")),
    Case("corrupt lifecycle SQLite, no journal", "refused",
         lambda d, s: _sqlite(d, "corrupt", journal=False), _refused_then_repaired),
    Case("empty lifecycle SQLite, no journal", "refused",
         lambda d, s: _sqlite(d, "empty", journal=False), _refused_then_repaired),
    Case("deleted lifecycle SQLite, no journal", "refused",
         lambda d, s: _sqlite(d, "delete", journal=False), _refused_then_repaired),
    Case("NaN vector row in the middle", "healed", lambda d, s: _vector_row(d, 2, float("nan"))),
    Case("infinite vector row at the end", "healed", lambda d, s: _vector_row(d, -1, float("inf"))),
    Case("index with a wrong row count", "healed",
         lambda d, s: _meta(d, lambda m: (m["item_ids"].pop(2), m.update(count=len(m["item_ids"]))))),
    Case("vectors file truncated", "healed",
         lambda d, s: os.truncate(d / f"{TASK}.embeddings.npy", 128 + 2 * 256 * 4)),
    Case("meta file garbage", "healed", lambda d, s: (d / f"{TASK}.meta.json").write_text("{{{")),
    Case("another model under the same name", "healed", lambda d, s: None, _other_model),
    Case("two models, the first writer still running", "refused", lambda d, s: None, _two_models),
    Case("read-only open of a bank with a bad line", "healed",
         lambda d, s: _edit_lines(d, lambda ls: [*ls[:2], b"{broken", *ls[2:]]), _read_only),
]


def run_case(case: Case, directory: Path) -> dict[str, Any]:
    """Seed, damage and check one case; the result says its outcome and why."""
    directory.mkdir(parents=True)
    try:
        state = seed(directory)
        case.damage(directory, state)
        state["damaged"] = _jsonl(directory).read_bytes().split(b"\n")[:-1]
        problem = case.check(directory, state)
    except Exception as exc:  # a crash is what this measures: every kind counts
        return {"case": case.name, "expected": case.expected, "outcome": "crashed",
                "detail": "".join(traceback.format_exception_only(exc)).strip()[-500:]}
    outcome = "crashed" if problem else case.expected
    return {"case": case.name, "expected": case.expected, "outcome": outcome, "detail": problem}


def measure() -> dict[str, Any]:
    """Run every corrupted-file case; counts of healed, refused and crashed, and the details."""
    details = []
    with tempfile.TemporaryDirectory(prefix="logicfuzz-corrupt-") as tmp:
        for number, case in enumerate(CASES):
            details.append(run_case(case, Path(tmp) / f"case{number}" / "bank"))
    count = {k: sum(d["outcome"] == k for d in details) for k in ("healed", "refused", "crashed")}
    return {"tried": len(details), **count, "details": details}


if __name__ == "__main__":
    result = measure()
    for row in result["details"]:
        print(f"{row['outcome']:8} {row['case']}" + (f": {row['detail']}" if row["detail"] else ""))
    print(json.dumps({k: v for k, v in result.items() if k != "details"}))
