"""A store-like API: a handle opened by path through a ``T **`` out-parameter, statements
prepared from text, opaque types, and a function named like an initializer that makes another
object. Invented names; each test states one general rule."""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

STORE = """\
int kv_open(const char *filename, kv_store **ppDb);
int kv_close(kv_store *db);
int kv_db_release_memory(kv_store *db);
kv_backup *kv_backup_init(kv_store *pDest, const char *zDestName, kv_store *pSource, const char *zSourceName);
int kv_backup_finish(kv_backup *p);
int kv_prepare(kv_store *db, const char *zSql, int nByte, kv_stmt **ppStmt, const char **pzTail);
int kv_finalize(kv_stmt *pStmt);
kv_stmt *kv_next_stmt(kv_store *pDb, kv_stmt *pStmt);
int kv_db_readonly(kv_store *db, const char *zDbName);
"""  # noqa: E501

RAW_TYPES = """\
```c
typedef struct kv_store kv_store;
typedef struct kv_stmt kv_stmt;
typedef struct kv_backup kv_backup;
struct kv_store;
struct kv_stmt;
struct kv_backup;
```
Release functions:
- kv_finalize releases kv_stmt * (parameter type)
"""
TYPES = render_types(RAW_TYPES)


def _draft(name: str) -> str:
    with using(read_types(TYPES)):
        api = parse_prototypes(STORE)
        target = next(d for d in api if d.name == name)
        arche = analyze_function(target, api).archetype
        return write_harness(target, api, ["kv.h"], arche, default_skeleton(arche)).code


def test_a_function_returning_another_object_initializes_nothing() -> None:
    with using(read_types(TYPES)):
        life = ApiIndex(parse_prototypes(STORE)).lifecycle("kv_store")
    assert life.create == ["kv_open"] and "kv_backup_init" not in life.init


def test_the_handle_of_a_call_that_takes_the_input_is_opened_on_an_empty_file() -> None:
    code = _draft("kv_prepare")
    assert "lf_tmpfile(data, 0, " in code and "lf_tmpfile(data, size, " not in code
    assert re.search(r"kv_prepare\(\w+, \(const char \*\)text, \(int\)size,", code)  # nByte: its length
    assert re.search(r"kv_close\(\w+\);", code) and "kv_finalize(" in code


def test_an_open_that_hands_back_its_handle_is_judged_by_its_status_too() -> None:
    """A handle filled even on failure (it carries the error) may only be closed then."""
    code = _draft("kv_prepare")
    assert re.search(r"rc = kv_open\(empty_path, &(\w+)\);[^;]*;\s+if \(!\(rc >= 0\)\) goto lf_cleanup;"
                     r"\s+if \(\1 == NULL\) goto lf_cleanup;", code), code
    with using(read_types(render_types(TYPES + "#define KV_OK 0\n#define KV_ERROR 1\n"))):
        api = parse_prototypes(STORE)
        target = next(d for d in api if d.name == "kv_prepare")
        code = write_harness(target, api, ["kv.h"], "object_lifecycle",
                             default_skeleton("object_lifecycle")).code
    assert "if (!(rc == KV_OK)) goto lf_cleanup;" in code, code


def test_an_opaque_type_is_never_declared_by_value() -> None:
    for name in ("kv_prepare", "kv_db_readonly"):
        code = _draft(name)
        assert not re.search(r"^\s*kv_(stmt|store|backup) \w+;", code, re.M), code


def test_a_returned_buffer_is_released_by_the_documented_releaser() -> None:
    api_text = STORE + "unsigned char *kv_serialize(kv_store *db, const char *zSchema, long *piSize);\n"
    api_text += "void kv_mem_debug_free(void *p);\nvoid kv_free(void *p);\n"
    types = render_types(RAW_TYPES + "- kv_free releases what kv_serialize allocates (by documentation)\n")
    with using(read_types(types)):
        api = parse_prototypes(api_text)
        target = next(d for d in api if d.name == "kv_serialize")
        code = write_harness(target, api, ["kv.h"], "object_lifecycle",
                             default_skeleton("object_lifecycle")).code
    assert re.search(r"if \(result != NULL\) kv_free\(result\);", code), code
    # `zSchema` is NUL-terminated by its name: the size pointer after it is a result.
    assert re.search(r"kv_serialize\(\w+, \(const char \*\)text, &\w+\)", code), code


PUSH = """\
kv_pctx *kv_new_pctx(void);
int kv_init_pctx(kv_pctx *ctxt);
void kv_free_pctx(kv_pctx *ctxt);
int kv_parse_chunk(kv_pctx *ctxt, const char *chunk, int size, int terminate);
"""


def test_a_chunk_parser_gets_a_context_the_library_allocates_and_the_last_flag() -> None:
    """The context's destructor frees the pointer: a zeroed stack struct set up by the
    initializer would be freed by it (a bad free). The zero-argument constructor makes it."""
    api = parse_prototypes(PUSH)
    target = next(d for d in api if d.name == "kv_parse_chunk")
    arche = analyze_function(target, api).archetype
    code = write_harness(target, api, ["kv.h"], arche, default_skeleton(arche)).code
    assert re.search(r"(\w+) = kv_new_pctx\(\);", code) and "kv_init_pctx" not in code
    assert not re.search(r"^\s*kv_pctx \w+;", code, re.M)
    assert arche == "stream_processor"
    assert re.search(r"kv_parse_chunk\(\w+, \(const char \*\)lf_chunk, \(int\)lf_chunk_size, lf_is_last\)",
                     code), code


def test_text_with_a_signed_length_is_terminated_and_an_unsized_target_is_a_full_buffer() -> None:
    """``unescape(const char *str, int len, char *target)``: a length <= 0 commonly means "read
    to the NUL", and the library writes about ``len`` bytes into ``target``."""
    api = parse_prototypes(
        "char *kv_unescape(const char *str, int len, char *target);\n"
        "int kv_scan(const char *buf, size_t len);\n"
    )
    code = write_harness(api[0], api, ["kv.h"], "stateless_parser", default_skeleton("stateless_parser")).code
    assert "kv_unescape((const char *)text, (int)size, (char *)out_buf)" in code, code
    assert "out_cap = 32768 + size * grow;" in code and "lf_take_str" not in code
    unsigned = write_harness(api[1], api, ["kv.h"], "stateless_parser",
                             default_skeleton("stateless_parser")).code
    assert "kv_scan((const char *)data, (size_t)size)" in unsigned, unsigned


def test_a_block_never_declares_an_opaque_type_by_value() -> None:
    from agents.offline.improver import improve_harness

    api_text = STORE + "int kv_stmt_status(kv_store *db, kv_stmt *pStmt, int op);\n"
    with using(read_types(TYPES)):
        api = parse_prototypes(api_text)
        target = next(d for d in api if d.name == "kv_db_readonly")
        code = write_harness(target, api, ["kv.h"], "object_lifecycle",
                             default_skeleton("object_lifecycle")).code
        imp = improve_harness(code, target, api, ["kv_stmt_status"])
    assert "kv_stmt_status" not in imp.added_calls
    assert not re.search(r"^\s*kv_stmt \w+;", imp.code, re.M)


STEPPED = STORE + "int kv_step(kv_stmt *pStmt);\nint kv_column_count(kv_stmt *pStmt);\n"


def _stepped_draft(types: str) -> str:
    with using(read_types(render_types(types))):
        api = parse_prototypes(STEPPED)
        target = next(d for d in api if d.name == "kv_prepare")
        return write_harness(target, api, ["kv.h"], "object_lifecycle",
                             default_skeleton("object_lifecycle")).code


def test_an_object_the_target_hands_back_is_stepped_in_a_bounded_loop() -> None:
    """``prepare(db, sql, n, &stmt)`` compiles a statement; running it reaches the rest of the
    library. The loop stops when the answer changes (row, row, done) or is negative."""
    code = _stepped_draft(TYPES)
    use = code[code.index("/* @LF:USE */"):code.index("/* @LF:CLEANUP */")]
    loop = re.search(r"if \((\w+) != NULL\) \{\n.*?for \(int (\w+) = 0; \2 < (\d+); \2\+\+\) \{\n"
                     r"\s+long long (\w+) = \(long long\)kv_step\(\1\);", use, re.S)
    assert loop and int(loop.group(3)) <= 4096, use
    assert f"if ({loop.group(4)} < 0) break;" in use
    assert "kv_step(" not in code[:code.index("/* @LF:USE */")]  # stepped after the target only
    # Without a step function there is nothing to loop over.
    assert "for (int lf_k" not in _draft("kv_prepare")


def test_the_headers_one_done_status_ends_the_step_loop() -> None:
    """A call on a finished statement may run it again from the start: the header's "done"
    status stops the loop even when it was the first answer."""
    code = _stepped_draft(TYPES + "#define KV_OK 0\n#define KV_ROW 100\n#define KV_DONE 101\n")
    assert re.search(r"if \((\w+) < 0 \|\| \1 == KV_DONE\) break;", code), code
