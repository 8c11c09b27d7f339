"""The bank on disk: add and search, self-exclusion, dedupe, restart without re-encoding, torn
tails, a changed embedding model, mode isolation (checksums of every file), prune."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from long_term_memory.experience import (
    EventLog,
    Gatekeeper,
    HashingEmbedder,
    ReadOnlyBankError,
    mode_allows_retrieval,
    mode_allows_writes,
)
from long_term_memory.experience.admin import PruneCriteria, prune
from long_term_memory.experience.models import item_key_text
from tests.unit.test_experience_support import (
    CountingEmbedder,
    checksums,
    config,
    item,
    open_bank,
    outcome,
    record,
)

PARSE = item("Copy the input into a NUL-terminated buffer",
             "kv_parse reads a C string: copy data into malloc(size + 1), set the last byte to 0, "
             "call kv_parse and kv_free the result.", "string parsers such as kv_parse")
INFLATE = item("Initialise the z_stream before inflate",
               "Call inflateInit on a zeroed z_stream before inflate and inflateEnd after it, "
               "otherwise the harness crashes in its own code.", "zlib stream decoders")
PRINT = item("Round-trip the parsed tree through the printer",
             "After cJSON_Parse succeeds, call cJSON_PrintUnformatted and cJSON_Delete on the tree: "
             "line coverage rose from 25% to 37%.", "JSON parsers with a printer")
ZLIB_QUERY = "project zlib; target int inflate(z_streamp strm, int flush); inflateInit z_stream"


def seeded(directory: Path) -> list[str]:
    bank = open_bank(directory)
    ids = []
    for n, (task, lesson) in enumerate([("kv/kv_parse", PARSE), ("zlib/inflate", INFLATE),
                                        ("cjson/cJSON_Parse", PRINT)]):
        ids += bank.add_record(record(f"rec-{n}", task, [lesson], success=n != 1)).added
    bank.close()
    return ids


def test_add_then_search_finds_the_relevant_item(tmp_path: Path) -> None:
    ids = seeded(tmp_path)
    bank = open_bank(tmp_path)
    assert (bank.size, bank.record_count) == (3, 3)
    matches = bank.search(ZLIB_QUERY, exclude_task_id="zlib/deflate", threshold=0.0)
    assert matches[0].item_id == ids[1] and matches[0].title == INFLATE.title
    assert matches[0].is_success is False and matches[0].task_id == "zlib/inflate"
    assert matches[0].status == "active" and matches[0].trust == 0.5 and matches[0].freshness > 0.99
    assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)
    assert bank.search("inflate", exclude_task_id=None, threshold=0.99) == []
    assert len(bank.search("inflate zlib", exclude_task_id=None, k=1, threshold=-1.0)) == 1
    bank.close()


def test_a_task_never_retrieves_its_own_fresh_record(tmp_path: Path) -> None:
    bank = open_bank(tmp_path)
    query = "project kv; target int kv_parse(const char * text)"
    bank.add_record(record("rec-own", "kv/kv_parse", [PARSE], query=query))
    assert bank.search(query, exclude_task_id="kv/kv_parse", threshold=-1.0) == []
    others = bank.search(query, exclude_task_id="kv/kv_count", threshold=-1.0)
    assert [m.task_id for m in others] == ["kv/kv_parse"]
    # Many own items cannot crowd out the others either.
    for n in range(12):
        lesson = item(f"Own lesson {n}", f"kv_parse detail {n} " * 5)
        bank.add_record(record(f"rec-own{n}", "kv/kv_parse", [lesson], query=query))
    bank.add_record(record("rec-other", "kv/kv_get", [item("Other lesson", "kv_get after kv_parse " * 4)]))
    got = bank.search(query, exclude_task_id="kv/kv_parse", k=1, threshold=-1.0)
    assert [m.task_id for m in got] == ["kv/kv_get"]
    bank.close()


def test_duplicates_are_merged_not_appended(tmp_path: Path) -> None:
    bank = open_bank(tmp_path)
    first = bank.add_record(record("rec-1", "kv/kv_parse", [PARSE]))
    events = EventLog(None)
    # Same text (case and spacing differ): exact-hash merge.
    shouty = item(PARSE.title.upper(), "  " + PARSE.content + " ", PARSE.description)
    same = bank.add_record(record("rec-2", "kv/kv_parse2", [shouty]), events)
    assert same.added == [] and same.merged == {0: (first.added[0], "same text")}
    # Near-duplicate (one word changed, cosine 0.97): merged above the 0.95 threshold.
    near = item(PARSE.title, PARSE.content.replace("last", "final"), PARSE.description)
    near_result = bank.add_record(record("rec-3", "kv/kv_parse", [near]))
    assert near_result.added == [] and near_result.merged[0][1].startswith("cosine ")
    # Two copies inside one record: the second merges into the first.
    both = bank.add_record(record("rec-4", "zlib/inflate", [INFLATE, INFLATE]))
    assert len(both.added) == 1 and both.merged[1][0] == both.added[0]
    # A different lesson is appended.
    assert bank.add_record(record("rec-5", "cjson/cJSON_Parse", [PRINT])).added
    assert bank.size == 3 and bank.record_count == 5
    stats = bank.stats([first.added[0]])[first.added[0]]
    assert stats.support == 3
    assert events.of_type("memory.candidate.merge")[0]["data"]["into"] == first.added[0]
    # Replaying a record id (a resumed run) stores nothing.
    again = bank.add_record(record("rec-1", "kv/kv_parse", [PARSE]))
    assert again.duplicate and bank.record_count == 5
    lines = (tmp_path / "fuzz-c.jsonl").read_text().splitlines()
    assert [json.loads(line)["memory_id"] for line in lines] == [f"rec-{n}" for n in range(1, 6)]
    bank.close()


def test_dedupe_threshold_is_configurable(tmp_path: Path) -> None:
    strict = open_bank(tmp_path, cfg=config(dedupe__threshold=0.99))
    strict.add_record(record("rec-1", "kv/kv_parse", [PARSE]))
    near = item(PARSE.title, PARSE.content.replace("last", "final"), PARSE.description)
    assert strict.add_record(record("rec-2", "kv/kv_parse", [near])).added  # 0.97 < 0.99: kept apart
    strict.close()


def test_an_item_with_an_action_never_merges_into_one_with_another_action(tmp_path: Path) -> None:
    """Items of one record embed alike (a long query dominates); an action merged into plain
    advice would never be shown again. The same near-duplicate with the same action merges."""
    from long_term_memory.experience.models import MemoryItem

    bank = open_bank(tmp_path)
    near = item(PARSE.title, PARSE.content.replace("last", "final"), PARSE.description)
    acting = MemoryItem.model_validate({**near.model_dump(), "scope": {"name": "kv_*"},
                                        "action": "hold_by_pointer(type=kv_t)"})
    result = bank.add_record(record("rec-1", "kv/kv_parse", [PARSE, acting]))
    assert len(result.added) == 2 and result.merged == {}
    again = bank.add_record(record("rec-2", "kv/kv_parse2", [acting]))
    assert again.added == [] and again.merged[0][0] == result.added[1]
    bank.close()


def test_restart_reuses_vectors_and_never_re_encodes(tmp_path: Path) -> None:
    seeded(tmp_path)
    counting = CountingEmbedder()
    bank = open_bank(tmp_path, embedder=counting)
    assert counting.encoded == 0 and bank.size == 3
    bank.search("kv_parse", exclude_task_id=None)
    assert counting.encoded == 1  # the query only
    stored = np.load(tmp_path / "fuzz-c.embeddings.npy")
    meta = json.loads((tmp_path / "fuzz-c.meta.json").read_text())
    assert stored.shape == (3, 256) and meta["model"] == "hashing-256" and meta["count"] == 3
    rec = bank.record("rec-0")
    assert rec is not None
    texts = [item_key_text(rec["query"], PARSE)]
    np.testing.assert_allclose(stored[0], HashingEmbedder(256).encode(texts)[0], atol=1e-6)
    bank.close()


def test_torn_last_line_is_skipped_and_cut_by_the_next_writer(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seeded(tmp_path)
    path = tmp_path / "fuzz-c.jsonl"
    with path.open("ab") as handle:
        handle.write(b'{"memory_id": "rec-torn", "task_id": "kv/kv_get", "memory_ite')
    before = checksums(tmp_path)
    reader = open_bank(tmp_path, read_only=True)
    assert reader.size == 3 and reader.record_count == 3
    assert any(n["type"] == "memory.bank.torn_line" for n in reader.notices)
    assert "unterminated last line" in caplog.text
    reader.close()
    assert checksums(tmp_path) == before  # read-only: left exactly as found
    writer = open_bank(tmp_path)
    lesson = item("After the tear", "kv_get needs a parsed list " * 3)
    writer.add_record(record("rec-new", "kv/kv_get", [lesson]))
    writer.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])
    assert [json.loads(line)["memory_id"] for line in lines[:-1]] == ["rec-0", "rec-1", "rec-2", "rec-new"]
    assert open_bank(tmp_path).size == 4


def test_corrupt_middle_line_is_skipped_rest_kept(tmp_path: Path) -> None:
    seeded(tmp_path)
    path = tmp_path / "fuzz-c.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "{not json", lines[1], lines[2]]) + "\n")
    bank = open_bank(tmp_path)
    assert bank.size == 3 and bank.view.skipped_lines == 0  # invalid JSON lines are skipped earlier
    assert {m.title for m in bank.search("z", exclude_task_id=None, threshold=-1)} == \
        {PARSE.title, INFLATE.title, PRINT.title}
    bank.close()


def test_changed_embedding_model_re_embeds_from_stored_text(tmp_path: Path) -> None:
    ids = seeded(tmp_path)
    small = CountingEmbedder(HashingEmbedder(512))
    bank = open_bank(tmp_path, cfg=config(embedding__model="hashing-512"), embedder=small)
    assert small.encoded == 3
    assert any(n["type"] == "memory.bank.reembed" and n["old_model"] == "hashing-256"
               for n in bank.notices)
    meta = json.loads((tmp_path / "fuzz-c.meta.json").read_text())
    assert (meta["model"], meta["dim"]) == ("hashing-512", 512)
    assert np.load(tmp_path / "fuzz-c.embeddings.npy").shape == (3, 512)
    top = bank.search(ZLIB_QUERY, exclude_task_id=None, threshold=0.0)
    assert top[0].item_id == ids[1]
    bank.close()
    again = CountingEmbedder(HashingEmbedder(512))
    open_bank(tmp_path, cfg=config(embedding__model="hashing-512"), embedder=again).close()
    assert again.encoded == 0  # converted once, reused afterwards
    back = CountingEmbedder()
    reverted = open_bank(tmp_path, embedder=back)
    assert back.encoded == 3
    assert reverted.search(ZLIB_QUERY, exclude_task_id=None, threshold=0.0)[0].item_id == ids[1]
    reverted.close()


def test_read_only_changed_model_re_embeds_in_memory_only(tmp_path: Path) -> None:
    seeded(tmp_path)
    before = checksums(tmp_path)
    bank = open_bank(tmp_path, read_only=True, cfg=config(embedding__model="hashing-128"),
                     embedder=HashingEmbedder(128))
    assert bank.size == 3 and bank.search("inflate", exclude_task_id=None, threshold=0.0)
    bank.close()
    assert checksums(tmp_path) == before


def memory_cycle(directory: Path, mode: str, run: str) -> None:
    """What the memory-manager node does for one target in ``mode`` (the lead's wiring)."""
    events = EventLog(directory.parent / f"{run}.events.jsonl")
    if not mode_allows_retrieval(mode):
        return
    bank = open_bank(directory, read_only=not mode_allows_writes(mode))
    gk = Gatekeeper(bank.config)
    matches = bank.search("project kv; target int kv_count(const kv_t * kv); kv_parse",
                          exclude_task_id="kv/kv_count", threshold=-1.0, events=events)
    shown = gk.prepare_inject(matches)
    decision = gk.evaluate(shown, [shown[0].item_id], outcome("kv/kv_count", run), matches)
    decision = gk.admit(decision, outcome("kv/kv_count", run), [PRINT], query="q", trajectory="t",
                        task_type="fuzz-c")
    bank.apply(decision, events)
    if not mode_allows_writes(mode):
        with pytest.raises(ReadOnlyBankError):
            bank.add_record(record("rec-x", "kv/kv_count", [PRINT]))
    bank.close()


@pytest.mark.parametrize("mode", ["baseline", "retrieve-only"])
def test_baseline_and_retrieve_only_leave_every_bank_file_byte_identical(tmp_path: Path, mode: str) -> None:
    bank_dir = tmp_path / "bank"
    seeded(bank_dir)
    memory_cycle(bank_dir, "retrieve-extract", "warmup")  # lifecycle rows and history exist
    with (bank_dir / "fuzz-c.jsonl").open("ab") as handle:
        handle.write(b'{"memory_id": "torn')  # and a torn tail a writer would repair
    before = checksums(bank_dir)
    for n in range(3):
        memory_cycle(bank_dir, mode, f"{mode}-{n}")
    assert checksums(bank_dir) == before
    memory_cycle(bank_dir, "retrieve-extract", "extract")
    assert checksums(bank_dir) != before  # the comparison can fail


def test_retrieve_only_logs_what_it_skipped(tmp_path: Path) -> None:
    bank_dir = tmp_path / "bank"
    seeded(bank_dir)
    memory_cycle(bank_dir, "retrieve-only", "ro")
    events = [json.loads(line) for line in (tmp_path / "ro.events.jsonl").read_text().splitlines()]
    assert [e["type"] for e in events] == ["memory.search.result", "memory.write.skip"]
    assert "read-only" in events[1]["data"]["reason"]


def test_read_only_bank_on_a_missing_directory_creates_nothing(tmp_path: Path) -> None:
    bank = open_bank(tmp_path / "absent", read_only=True)
    assert bank.size == 0 and bank.search("x", exclude_task_id=None) == []
    bank.close()
    assert not (tmp_path / "absent").exists()


def test_two_banks_see_each_others_writes(tmp_path: Path) -> None:
    a, b = open_bank(tmp_path), open_bank(tmp_path)
    a.add_record(record("rec-a", "kv/kv_parse", [PARSE]))
    assert b.search("kv_parse NUL", exclude_task_id=None, threshold=0.0)[0].title == PARSE.title
    b.add_record(record("rec-b", "zlib/inflate", [INFLATE]))
    # b's write is seen by a, and a's dedupe knows b's item.
    assert a.add_record(record("rec-c", "zlib/inflate2", [INFLATE])).merged
    assert a.size == b.size == 2
    a.close()
    b.close()


def test_prune_removes_blocked_items_from_every_file(tmp_path: Path) -> None:
    ids = seeded(tmp_path)
    bank = open_bank(tmp_path)
    gk, events = Gatekeeper(bank.config), EventLog(None)
    for n in range(3):
        bank.apply(gk.evaluate([ids[0]], [], outcome("kv/x", f"r{n}", compiles=False, runs=False)), events)
    dry = prune(bank, PruneCriteria(blocked=True), dry_run=True)
    assert [r["item_id"] for r in dry.removed] == [ids[0]] and bank.size == 3
    report = prune(bank, PruneCriteria(blocked=True))
    assert report.records_dropped == 1 and report.kept == 2 and bank.size == 2
    assert ids[0] not in (tmp_path / "fuzz-c.jsonl").read_text()
    assert ids[0] not in (tmp_path / "fuzz-c.meta.json").read_text()
    bank.close()
    counting = CountingEmbedder()
    reopened = open_bank(tmp_path, embedder=counting)
    assert reopened.size == 2 and counting.encoded == 0 and not reopened.notices
    assert {m.item_id for m in reopened.search("x", exclude_task_id=None, threshold=-1)} == set(ids[1:])
    with pytest.raises(ValueError, match="needs a criterion"):
        prune(reopened, PruneCriteria())
    reopened.close()


def test_a_deleted_jsonl_resets_the_catalog(tmp_path: Path) -> None:
    seeded(tmp_path)
    (tmp_path / "fuzz-c.jsonl").unlink()
    bank = open_bank(tmp_path)
    assert bank.size == 0 and bank.record_count == 0
    assert bank.add_record(record("rec-0", "kv/kv_parse", [PARSE])).added  # not a "duplicate"
    bank.close()
    counting = CountingEmbedder()
    reopened = open_bank(tmp_path, embedder=counting)
    assert (reopened.size, reopened.record_count, counting.encoded) == (1, 1, 0)
    reopened.close()


def test_shared_bank_is_opened_once_per_process_and_matches_round_trip(tmp_path: Path) -> None:
    from long_term_memory.experience import ExperienceBank, Match

    seeded(tmp_path)
    cfg = config(bank__directory=str(tmp_path))
    a = ExperienceBank.shared(cfg, read_only=True)
    assert ExperienceBank.shared(cfg, read_only=True) is a
    assert ExperienceBank.shared(cfg, read_only=False) is not a
    match = a.search(ZLIB_QUERY, exclude_task_id=None, threshold=0.0)[0]
    assert Match.from_dict(json.loads(json.dumps(match.to_dict()))) == match
