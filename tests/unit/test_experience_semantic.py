"""Retrieval and dedupe with the real all-MiniLM-L6-v2 model (loaded offline from its package)."""

from __future__ import annotations

from pathlib import Path

import pytest

from long_term_memory.embeddings import get_embedder
from long_term_memory.experience import ExperienceBank, ExperienceConfig, Gatekeeper, render_experience
from tests.unit.test_experience_support import checksums, item, record

CJSON = "project cjson; target cJSON *cJSON_Parse(const char *value); archetype stateless_parser"
ZLIB = "project zlib; target int inflate(z_streamp strm, int flush); archetype stream_processor"
YAML = ("project libyaml; target int yaml_parser_parse(yaml_parser_t *parser, yaml_event_t *event); "
        "archetype object_lifecycle")
PARSE = item("stateless_parser harness: cJSON_Parse -> cJSON_Delete",
             "A stateless_parser harness for cJSON_Parse built, ran and reached 35.2% line coverage. It "
             "calls cJSON_Parse, cJSON_Delete in that order and copies the input into a NUL-terminated "
             "heap buffer of size+1.", "Targets like cJSON *cJSON_Parse(const char *value).")
INFLATE = item("Build failure on inflate: undeclared identifier 'memcpy'",
               "The harness never compiled; the last error was: use of undeclared identifier 'memcpy'. "
               "Instead: include <string.h> for memcpy.", "Targets like int inflate(z_streamp, int).")
YAML_ITEM = item("object_lifecycle harness: yaml_parser_initialize -> yaml_parser_parse",
                 "Initialize the parser, set the input string, loop yaml_parser_parse until "
                 "YAML_STREAM_END_EVENT (at most 1000 events), delete each event, then "
                 "yaml_parser_delete.", "Targets like yaml_parser_parse.")


@pytest.fixture(scope="module")
def bank_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("semantic")
    bank = ExperienceBank.open("fuzz-c", directory, ExperienceConfig.load(), get_embedder())
    for n, (task, query, lesson) in enumerate([("cjson/cJSON_Parse", CJSON, PARSE),
                                               ("zlib/inflate", ZLIB, INFLATE),
                                               ("libyaml/yaml_parser_parse", YAML, YAML_ITEM)]):
        bank.add_record(record(f"rec-{n}", task, [lesson], success=n != 1, query=query))
    bank.close()
    return directory


def open_default(directory: Path, read_only: bool = True) -> ExperienceBank:
    return ExperienceBank.open("fuzz-c", directory, ExperienceConfig.load(), get_embedder(),
                               read_only=read_only)


@pytest.mark.parametrize(("query", "task", "expected"), [
    ("project cjson; target cJSON *cJSON_ParseWithLength(const char *value, size_t buffer_length); "
     "archetype stateless_parser", "cjson/cJSON_ParseWithLength", PARSE.title),
    ("project cjson; target char *cJSON_Print(const cJSON *item); archetype round_trip",
     "cjson/cJSON_Print", PARSE.title),
    ("project zlib; target int uncompress(Bytef *dest, uLongf *destLen, const Bytef *source, "
     "uLong sourceLen); archetype buffer_codec", "zlib/uncompress", INFLATE.title),
    ("project libyaml; target int yaml_parser_scan(yaml_parser_t *parser, yaml_token_t *token); "
     "archetype object_lifecycle", "libyaml/yaml_parser_scan", YAML_ITEM.title),
])
def test_default_top1_and_threshold_pick_the_same_library(bank_dir: Path, query: str, task: str,
                                                          expected: str) -> None:
    bank = open_default(bank_dir)
    matches = bank.search(query, exclude_task_id=task)
    assert matches and matches[0].title == expected and matches[0].score >= 0.5
    assert all(m.score >= 0.5 for m in matches)
    injected = Gatekeeper(bank.config).prepare_inject(matches)
    assert len(injected) == 1 and f"[{injected[0].item_id}]" in render_experience(injected)
    bank.close()


def test_unrelated_targets_retrieve_nothing_and_own_records_are_excluded(bank_dir: Path) -> None:
    before = checksums(bank_dir)
    bank = open_default(bank_dir)
    assert bank.search("project sqlite; target int sqlite3_open(const char *filename, sqlite3 **db)",
                       exclude_task_id="sqlite/sqlite3_open") == []
    assert bank.search(CJSON, exclude_task_id="cjson/cJSON_Parse") == []
    assert [m.task_id for m in bank.search(CJSON, exclude_task_id=None)] == ["cjson/cJSON_Parse"]
    bank.close()
    assert checksums(bank_dir) == before


def test_rerun_lessons_merge_new_lessons_do_not(tmp_path: Path, bank_dir: Path) -> None:
    import shutil

    directory = tmp_path / "copy"
    shutil.copytree(bank_dir, directory)
    bank = open_default(directory, read_only=False)
    rerun = item(PARSE.title, PARSE.content.replace("35.2%", "36.0%"), PARSE.description)
    merged = bank.add_record(record("rec-rerun", "cjson/cJSON_Parse", [rerun], query=CJSON))
    assert not merged.added and merged.merged[0][1].startswith("cosine 0.9")
    new = item("Round-trip the tree through cJSON_PrintUnformatted",
               "After cJSON_Parse succeeds call cJSON_PrintUnformatted and free the string: line "
               "coverage rose from 35% to 41%.", "Targets like cJSON_Parse.")
    assert bank.add_record(record("rec-new", "cjson/cJSON_Parse", [new], query=CJSON)).added
    assert bank.size == 4
    bank.close()
