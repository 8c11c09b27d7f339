"""Library conventions a C programmer knows by heart and a prototype does not say.

This is the offline model's memorized knowledge: value ranges of well-known parameters, success
codes, stream cursor fields, end-of-stream tests and callback signatures of common libraries.
Everything has a generic fallback so unknown libraries still get a harness that builds and runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Parameter name -> values a fuzzer should choose from (lo, hi) or an explicit set.
INT_CHOICES: list[tuple[str, tuple[int, int] | tuple[int, ...]]] = [
    (r"^windowBits$", (9, 10, 11, 12, 13, 14, 15, -9, -10, -11, -12, -13, -14, -15,
                       25, 26, 27, 28, 29, 30, 31, 40, 47, 0)),
    (r"^level$", (-1, 9)),
    (r"^memLevel$", (1, 9)),
    (r"^strategy$", (0, 4)),
    (r"^method$", (8,)),
    (r"^flush$", (0, 6)),
    (r"^bits$", (0, 16)),
    (r"^(which|index|idx|pos|position|item_index)$", (-1, 7)),
    (r"^(count|n|num|nitems|nmemb)$", (0, 8)),
    (r"^(prebuffer)$", (0, 512)),
    (r"(fmt|format|pretty|recurse|case_sensitive|implicit|canonical|unicode|require|"
     r"null_terminated|is_final|isFinal|final|boolean)", (0, 1)),
    (r"^indent$", (-1, 10)),
    (r"^width$", (-1, 200)),
    (r"^(c|ch|byte|value)$", (0, 255)),
    (r"^(good_length|max_lazy|nice_length|max_chain)$", (0, 258)),
    (r"^(whence)$", (0, 2)),
    (r"(len|size|length|bytes)", (0, 4096)),
]  # fmt: skip
DEFAULT_INT = (0, 255)
DEFAULT_ENUM = (0, 7)


def int_choices(param_name: str, function: str) -> tuple[int, int] | tuple[int, ...]:
    """The range ``(lo, hi)`` (2-tuple) or explicit value set (other length) for an int param."""
    for pattern, choice in INT_CHOICES:
        if re.search(pattern, param_name):
            if pattern == r"^windowBits$" and function.startswith("deflate"):
                return tuple(v for v in choice if v <= 31 and v not in (0, 40, 47))
            if pattern == r"^flush$" and function.startswith("deflate"):
                return (0, 5)  # Z_TREES is for inflate only
            return choice
    return DEFAULT_INT


# Function name pattern -> success test on the return value `{rc}`.
SUCCESS: list[tuple[str, str]] = [
    (r"^yaml_", "{rc}"),
    (r"^(inflate|deflate|compress|uncompress)", "{rc} == Z_OK"),
    (r"^gz(read|write|fread|fwrite|puts|putc|printf)$", "{rc} > 0"),
    (r"^XML_Parse", "{rc} == XML_STATUS_OK"),
    (r"^BZ2_", "{rc} == BZ_OK"),
]


def success_test(function: str, return_type: str, rc: str, bool_like: bool, pointer: bool) -> str:
    """A C condition that is true when ``function`` returned success in ``rc``."""
    for pattern, template in SUCCESS:
        if re.search(pattern, function):
            return template.format(rc=rc)
    if pointer:
        return f"{rc} != NULL"
    if bool_like:
        return rc
    return f"{rc} >= 0"


@dataclass(frozen=True)
class StreamFields:
    """Cursor fields of a caller-managed stream struct and its result codes."""

    next_in: str
    avail_in: str
    next_out: str
    avail_out: str
    in_cast: str
    out_cast: str
    avail_cast: str
    keep_going: str  # condition on {rc} meaning "call again"
    finish: str  # the flush/action value that finishes the stream


STREAMS = {
    "z_stream": StreamFields("next_in", "avail_in", "next_out", "avail_out", "Bytef *", "Bytef *",
                             "uInt", "{rc} == Z_OK", "Z_FINISH"),
    "bz_stream": StreamFields("next_in", "avail_in", "next_out", "avail_out", "char *", "char *",
                              "unsigned int", "({rc} == BZ_OK || {rc} == BZ_RUN_OK)", "BZ_FINISH"),
    "lzma_stream": StreamFields("next_in", "avail_in", "next_out", "avail_out",
                                "const uint8_t *", "uint8_t *", "size_t", "{rc} == LZMA_OK",
                                "LZMA_FINISH"),
}  # fmt: skip

# Out-struct type -> C condition (on variable `{v}`) meaning the machine reached its end.
END_TESTS = {
    "yaml_event_t": "{v}.type == YAML_STREAM_END_EVENT",
    "yaml_token_t": "{v}.type == YAML_STREAM_END_TOKEN",
    "yaml_document_t": "yaml_document_get_root_node(&{v}) == NULL",
}


@dataclass(frozen=True)
class Callback:
    """A callback typedef's C signature and what a harness implementation should return."""

    return_type: str
    params: tuple[str, ...]
    shape: str  # reader | writer | pull | sink
    ok_value: str


CALLBACKS = {
    "yaml_read_handler_t": Callback(
        "int", ("void *", "unsigned char *", "size_t", "size_t *"), "reader", "1"
    ),
    "yaml_write_handler_t": Callback("int", ("void *", "unsigned char *", "size_t"), "writer", "1"),
    "in_func": Callback("unsigned", ("void *", "unsigned char **"), "pull", "0"),
    "out_func": Callback("int", ("void *", "unsigned char *", "unsigned"), "writer", "0"),
}

# Running-value functions whose documented first call returns the initial value.
DIGEST_INIT = {r"^(crc32|adler32)(_z)?$": "{fn}(0L, Z_NULL, 0)"}

# Word pairs that name a function and its inverse.
INVERSES = [("compress", "uncompress"), ("encode", "decode"), ("deflate", "inflate"),
            ("pack", "unpack"), ("serialize", "deserialize"), ("escape", "unescape"),
            ("encrypt", "decrypt"), ("Print", "Parse")]  # fmt: skip

# Functions that keep a string argument's pointer (not a copy): it must outlive the object, so
# harnesses pass string literals there.
RETAINED_STRINGS = {"cJSON_AddItemToObjectCS": ("string",)}
LITERAL_KEYS = ("", "a", "key", "name", "0", "items", "\\u00e9", "x y")
