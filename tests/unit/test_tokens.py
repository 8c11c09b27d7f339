import hashlib
import logging
import math
import sys
import time
from collections.abc import Iterator

import pytest
import tiktoken
from langchain_core.messages.utils import count_tokens_approximately

from agent_graph.memory.messages import to_langchain
from agent_graph.memory.tokens import (
    MESSAGE_OVERHEAD,
    REPLY_OVERHEAD,
    clear_encoding_cache,
    count_message_tokens,
    count_text_tokens,
    encoding_name_for,
    encoding_source,
    estimate_tokens,
    get_encoding,
    local_encoding_file,
    set_encoding,
)

# Real cl100k_base counts, measured with tiktoken 0.14 and the genuine encoding file (SHA-256
# 223921b7...). test_recorded_counts_match_real_cl100k re-checks them wherever that file is
# available locally.
SAMPLES = {
    "english": (
        29,
        "The harness must call the parser on the whole input, check the returned pointer "
        "for NULL, and free every object it allocates before returning zero.",
    ),
    "c_harness": (
        137,
        "#include <stddef.h>\n#include <stdint.h>\n#include \"cJSON.h\"\n\n"
        "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
        "    char *buf = (char *)malloc(size + 1);\n"
        "    if (buf == NULL) { return 0; }\n"
        "    memcpy(buf, data, size);\n    buf[size] = '\\0';\n"
        "    cJSON *json = cJSON_ParseWithLengthOpts(buf, size, NULL, 0);\n"
        "    if (json != NULL) {\n        char *out = cJSON_PrintUnformatted(json);\n"
        "        free(out);\n        cJSON_Delete(json);\n    }\n"
        "    free(buf);\n    return 0;\n}\n",
    ),
    "compile_error": (
        54,
        "harness.c:12:5: error: call to undeclared function 'yaml_parser_load'; ISO C99 and "
        "later do not support implicit function declarations [-Wimplicit-function-declaration]\n"
        "    yaml_parser_load(&parser, &document);\n    ^\n1 error generated.\n",
    ),
    "chinese": (35, "必须先调用 init() 再调用 decode()，否则解析器的状态未初始化，会导致崩溃。"),
    "json_args": (
        23,
        '{"archetype": "stateless_parser", "confidence": "HIGH", "functions": ["cJSON_Parse"]}',
    ),
}


def byte_encoding() -> tiktoken.Encoding:
    """A byte-level BPE with no merges: every UTF-8 byte is one token."""
    return tiktoken.Encoding(
        name="bytes_only",
        pat_str=r"[^\s]+|\s+",
        mergeable_ranks={bytes([i]): i for i in range(256)},
        special_tokens={},
    )


@pytest.fixture(autouse=True)
def fresh_lookup() -> Iterator[None]:
    set_encoding(None)
    clear_encoding_cache()
    yield
    set_encoding(None)
    clear_encoding_cache()


@pytest.fixture
def no_local_encoding(tmp_path, monkeypatch) -> None:
    """Neither a tiktoken file on disk nor bpe-openai installed: the estimate's world."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # `import bpe_openai` raises ImportError


def test_without_a_tiktoken_file_bpe_openai_counts_exactly(tmp_path, monkeypatch) -> None:
    pytest.importorskip("bpe_openai")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    enc = get_encoding("gpt-4")
    assert enc is not None and type(enc).__module__.startswith("bpe_openai")
    for real, text in SAMPLES.values():  # counts recorded from real cl100k_base
        assert count_text_tokens(text) == real


@pytest.mark.parametrize("name", list(SAMPLES))
def test_injected_encoding_counts_bytes(name: str) -> None:
    set_encoding(byte_encoding())
    text = SAMPLES[name][1]
    assert count_text_tokens(text) == len(text.encode("utf-8"))
    assert count_text_tokens(text, model="openai:gpt-4o") == len(text.encode("utf-8"))


def test_message_count_formula_with_injected_encoding() -> None:
    set_encoding(byte_encoding())
    plain = [{"role": "system", "content": "abc"}, {"role": "user", "content": "hello"}]
    assert count_message_tokens(plain) == 2 * MESSAGE_OVERHEAD + 3 + 5 + REPLY_OVERHEAD
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "name": "build", "args": {"x": 1}}]}
    result = {"role": "tool", "content": "ok", "tool_call_id": "c1"}
    args_len = len('{"x": 1}')
    expected = (2 * MESSAGE_OVERHEAD + 2 + len("build") + args_len) + (MESSAGE_OVERHEAD + 2 + 2)
    assert count_message_tokens([call, result]) == expected + REPLY_OVERHEAD
    assert count_message_tokens([]) == 0


def test_set_encoding_none_restores_lookup(no_local_encoding) -> None:
    set_encoding(byte_encoding())
    assert count_text_tokens("abcdefgh") == 8
    set_encoding(None)
    assert get_encoding() is None
    assert count_text_tokens("abcdefgh") == estimate_tokens("abcdefgh")


def test_fallback_warns_once_per_process(no_local_encoding, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="logicfuzz.tokens")
    assert get_encoding("") is None
    first = count_text_tokens(SAMPLES["english"][1])
    count_text_tokens("more text", model="gpt-4o")
    count_message_tokens([{"role": "user", "content": "x"}], model="openai:gpt-4")
    warnings = [r for r in caplog.records if r.name == "logicfuzz.tokens"]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "not available locally" in message and "TIKTOKEN_CACHE_DIR" in message
    assert first == estimate_tokens(SAMPLES["english"][1])


def test_missing_encoding_is_not_retried_and_is_fast(no_local_encoding) -> None:
    started = time.perf_counter()
    for _ in range(200):
        count_text_tokens("int x = 1;")
    assert time.perf_counter() - started < 1.0


def test_corrupt_cached_file_is_left_alone_and_not_handed_to_tiktoken(
    tmp_path, monkeypatch, caplog
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setitem(sys.modules, "bpe_openai", None)
    path = local_encoding_file("cl100k_base")
    assert path is not None and path.parent == tmp_path
    path.write_bytes(b"not an encoding\n")
    caplog.set_level(logging.WARNING, logger="logicfuzz.tokens")
    assert get_encoding() is None
    # tiktoken itself would delete a file with the wrong hash and try to download again.
    assert path.read_bytes() == b"not an encoding\n"
    assert "SHA-256" in caplog.records[0].getMessage()


def test_cache_disabled_means_estimate(monkeypatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    monkeypatch.setitem(sys.modules, "bpe_openai", None)
    assert local_encoding_file("cl100k_base") is None
    assert get_encoding() is None


def test_encoding_source_is_read_from_tiktoken() -> None:
    blob, digest = encoding_source("cl100k_base") or ("", "")
    assert blob.endswith("cl100k_base.tiktoken")
    assert digest == "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
    harmony = encoding_source("o200k_harmony")
    assert harmony is not None and harmony == encoding_source("o200k_base")
    assert encoding_source("no_such_encoding") is None


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("", "cl100k_base"),
        ("offline", "cl100k_base"),
        ("gpt-4", "cl100k_base"),
        ("openai:gpt-4-turbo", "cl100k_base"),
        ("gpt-4o", "o200k_base"),
        ("openai:gpt-4o-mini", "o200k_base"),
        ("ft:gpt-4o:acme::x1", "o200k_base"),
        ("openai:qwen2.5-coder", "cl100k_base"),
    ],
)
def test_encoding_name_for(model: str, name: str) -> None:
    assert encoding_name_for(model) == name


@pytest.mark.parametrize("name", list(SAMPLES))
def test_estimate_overcounts_real_cl100k(name: str) -> None:
    real, text = SAMPLES[name]
    estimate = estimate_tokens(text)
    assert real <= estimate <= 2 * real
    # BPE never merges across pre-tokenizer pieces, so a byte-level count bounds it from above.
    assert estimate <= len(text.encode("utf-8"))


@pytest.mark.parametrize("name", ["c_harness", "chinese", "json_args"])
def test_chars_over_four_would_undercount(name: str) -> None:
    real, text = SAMPLES[name]
    assert math.ceil(len(text) / 4) < real <= estimate_tokens(text)


def test_fallback_message_count_not_below_langchain_approximation(no_local_encoding) -> None:
    msgs = [
        {"role": "system", "content": SAMPLES["english"][1]},
        {"role": "user", "content": SAMPLES["c_harness"][1]},
        {"role": "assistant", "content": SAMPLES["compile_error"][1], "tool_calls": [
            {"id": "call_1", "name": "build", "args": {"code": SAMPLES["c_harness"][1]}}]},
        {"role": "tool", "content": SAMPLES["compile_error"][1], "tool_call_id": "call_1"},
    ]
    assert count_message_tokens(msgs) >= count_tokens_approximately(to_langchain(msgs))


def _real_file_available() -> bool:
    path = local_encoding_file("cl100k_base")
    source = encoding_source("cl100k_base")
    return bool(path and source and path.is_file()
                and hashlib.sha256(path.read_bytes()).hexdigest() == source[1])


@pytest.mark.skipif(not _real_file_available(), reason="cl100k_base file not available locally")
def test_recorded_counts_match_real_cl100k() -> None:
    enc = get_encoding("gpt-4")
    assert enc is not None and enc.name == "cl100k_base"
    for real, text in SAMPLES.values():
        assert count_text_tokens(text) == real



def test_a_text_longer_than_the_tokenizer_takes_is_counted_in_pieces(tmp_path, monkeypatch) -> None:
    pytest.importorskip("bpe_openai")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    line = "int value = parse(data, size);\n"
    assert count_text_tokens(line * 40_000) == 40_000 * count_text_tokens(line)
