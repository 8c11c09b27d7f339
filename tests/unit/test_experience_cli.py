"""``logicfuzz memory list | show | search | stats | export | prune`` on a real bank."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from logicfuzz.cli_memory import add_memory_commands
from long_term_memory.experience import EventLog, Gatekeeper
from tests.unit.test_experience_support import checksums, item, open_bank, outcome, record


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="logicfuzz")
    add_memory_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return int(args.func(args))


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "220")  # rich folds table cells to the terminal width


@pytest.fixture
def bank_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "bank"
    bank = open_bank(directory)
    ids = []
    for n, (task, title, text) in enumerate([
        ("kv/kv_parse", "Copy the input into a NUL-terminated buffer",
         "kv_parse needs a C string: malloc(size + 1), copy, terminate."),
        ("zlib/inflate", "Initialise the z_stream before inflate",
         "inflateInit before inflate, inflateEnd after; zero the z_stream first."),
    ]):
        ids += bank.add_record(record(f"rec-{n}", task, [item(title, text)], success=n == 0)).added
    gk = Gatekeeper(bank.config)
    for n in range(3):
        bank.apply(gk.evaluate([ids[1]], [], outcome("zlib/x", f"r{n}", compiles=False, runs=False)),
                   EventLog(None))
    bank.apply(gk.evaluate([ids[0]], [ids[0]], outcome("kv/kv_get", "r9")), EventLog(None))
    bank.close()
    (tmp_path / "exp.yaml").write_text(f"embedding:\n  model: hashing-256\nbank:\n  directory: {directory}\n")
    return directory


def cfg(bank_dir: Path) -> list[str]:
    return ["--config", str(bank_dir.parent / "exp.yaml")]


def test_list_and_stats(bank_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("memory", "list", *cfg(bank_dir), "--sort", "level") == 0
    out = capsys.readouterr().out
    assert "experience bank fuzz-c: 2 items, 2 records" in out
    assert out.index("Copy the input") < out.index("Initialise the")  # verified before candidate
    assert "blocked" in out and "verified" in out
    assert cli("memory", "list", *cfg(bank_dir), "--status", "blocked") == 0
    assert "Copy the input" not in capsys.readouterr().out
    assert cli("memory", "stats", *cfg(bank_dir), "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["records"], data["items"], data["statuses"]) == (2, 2, {"active": 1, "blocked": 1})
    assert data["lifecycle"]["validations"] == {"fail": 3, "pass": 1}
    assert data["model"] == "hashing-256" and "fuzz-c.jsonl" in data["files"]
    assert cli("memory", "stats", *cfg(bank_dir)) == 0
    assert "hits / uses" in capsys.readouterr().out


def test_show_item_and_record(bank_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bank = open_bank(bank_dir, read_only=True)
    item_id = next(e.item_id for e in bank.entries() if e.title.startswith("Copy"))
    bank.close()
    assert cli("memory", "show", item_id.lower(), *cfg(bank_dir)) == 0
    out = capsys.readouterr().out
    assert item_id in out and "level 1 (verified)" in out and "validation pass" in out
    assert "record rec-0 (success, success) task kv/kv_parse" in out
    assert cli("memory", "show", "rec-1", *cfg(bank_dir), "--json") == 0
    assert json.loads(capsys.readouterr().out)["record"]["task_id"] == "zlib/inflate"


def test_search_marks_what_would_be_injected(bank_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("memory", "search", "inflateInit z_stream inflate", *cfg(bank_dir), "--threshold", "0.0") == 0
    out = capsys.readouterr().out
    assert "Initialise the" in out and "blocked" in out
    assert cli("memory", "search", "kv_parse C string copy", *cfg(bank_dir), "--threshold", "0.0",
               "--exclude-task", "kv/kv_parse") == 0
    assert "Copy the input" not in capsys.readouterr().out


def test_export_is_json_lines_with_lifecycle(bank_dir: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    before = checksums(bank_dir)
    assert cli("memory", "export", *cfg(bank_dir)) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["memory_id"] for r in rows] == ["rec-0", "rec-1"]
    assert rows[1]["memory_items"][0]["lifecycle"]["status"] == "blocked"
    assert cli("memory", "export", *cfg(bank_dir), "--out", str(tmp_path / "x.jsonl")) == 0
    assert len((tmp_path / "x.jsonl").read_text().splitlines()) == 2
    assert checksums(bank_dir) == before  # inspection never writes


def test_prune_dry_run_then_for_real(bank_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = checksums(bank_dir)
    assert cli("memory", "prune", *cfg(bank_dir), "--dry-run") == 0
    assert "would remove 1 items" in capsys.readouterr().err
    assert checksums(bank_dir) == before
    assert cli("memory", "prune", *cfg(bank_dir)) == 0  # default criterion: blocked
    assert "removed 1 items, 1 records left empty; 1 items kept" in capsys.readouterr().err
    assert cli("memory", "stats", *cfg(bank_dir), "--json") == 0
    assert json.loads(capsys.readouterr().out)["items"] == 1


@pytest.mark.parametrize(("argv", "message"), [
    (["memory", "list", "--dir", "/nonexistent/bank"], "no experience bank 'fuzz-c' in /nonexistent/bank"),
    (["memory", "show", "MEM-00000000"], "no item or record 'MEM-00000000'"),
    (["memory", "list", "--config", "/nonexistent.yaml"], "cannot read experience config"),
])
def test_errors_are_clear_and_exit_2(bank_dir: Path, capsys: pytest.CaptureFixture[str],
                                     argv: list[str], message: str) -> None:
    if "--config" not in argv:
        argv = [*argv, *cfg(bank_dir)]
    assert cli(*argv) == 2
    assert message in capsys.readouterr().err
