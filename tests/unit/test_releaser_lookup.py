"""Which function releases an object: by the documentation first, then by type at the same
pointer depth. Invented names."""

from __future__ import annotations

import re

from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.type_releasers import type_releaser
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

TYPES = render_types("""\
```c
typedef struct db db;
```
Release functions:
- db_free_table releases char ** (parameter type)
- db_free releases void * (parameter type)
- db_close releases db * (parameter type)
- db_free releases what db_exec allocates (by documentation)
- db_free_table releases what db_get_table allocates (by documentation)
""")

API = """\
int db_open(const char *filename, db **ppDb);
int db_close(db *d);
int db_exec(db *d, const char *sql, int (*callback)(void *, int, char **, char **), void *arg, char **errmsg);
int db_get_table(db *d, const char *sql, char ***pazResult, int *pnRow, int *pnColumn, char **pzErrmsg);
void db_free_table(char **result);
void db_free(void *p);
"""  # noqa: E501


def test_a_table_releaser_does_not_release_a_string() -> None:
    """``char **`` (a table) and ``char *`` (a string) differ by a pointer level."""
    with using(read_types(TYPES)):
        assert type_releaser("char **") == "db_free_table"
        assert type_releaser("char *") is None
        assert type_releaser("db *") == "db_close"


def test_the_documented_releaser_of_a_producer_wins_over_a_type_match() -> None:
    with using(read_types(TYPES)):
        assert type_releaser("char *", producer="db_exec") == "db_free"
        assert type_releaser("char **", producer="db_get_table") == "db_free_table"


def test_an_error_message_out_parameter_is_released_by_its_documented_releaser() -> None:
    with using(read_types(TYPES)):
        api = parse_prototypes(API)
        target = next(d for d in api if d.name == "db_exec")
        code = write_harness(target, api, ["db.h"], "object_lifecycle",
                             default_skeleton("object_lifecycle")).code
    assert re.search(r"if \(errmsg\w* != NULL\) db_free\(errmsg\w*\);", code), code
    assert not re.search(r"db_free_table\(errmsg", code), code


IMG_TYPES = render_types("""\
```c
typedef struct img img;
```
Release functions:
- img_cleanup releases img * (parameter type)
- img_close releases img * (parameter type)
- img_free_directory releases img * (parameter type)
""")


def test_what_undoes_an_open_is_its_close_though_the_api_list_left_it_out() -> None:
    """An image file opened with img_open was released with img_free_directory (frees one
    directory), the only releaser the prompt's API list kept: the file leaked on every input."""
    from agents.offline.synth_api import ApiIndex

    api = parse_prototypes("img *img_open(const char *name, const char *mode);\n"
                           "void img_free_directory(img *tif);\nint img_read_directory(img *tif);\n")
    with using(read_types(IMG_TYPES)):
        assert ApiIndex(api).destructor("img", "img_open") == "img_close"


def test_the_analysis_names_the_constructor_s_undoer_not_an_initializer_s() -> None:
    """`img_read_buffer_setup(img *, ...)` reads as an initializer of img too; the analysis named
    the releaser nearest to it (img_free_directory) and the prototyper followed the advice."""
    from agents.offline.analysis import analyze_function

    api = parse_prototypes("img *img_open(const char *name, const char *mode);\n"
                           "int img_read_buffer_setup(img *tif, void *bp, long size);\n"
                           "void img_free_directory(img *tif);\nvoid img_cleanup(img *tif);\n"
                           "void img_close(img *tif);\nint img_read_directory(img *tif);\n")
    with using(read_types(IMG_TYPES)):
        found = analyze_function(next(f for f in api if f.name == "img_read_directory"), api)
    assert any("released with img_close" in c for c in found.constraints), found.constraints


def test_of_two_families_constructors_the_target_s_own_family_decides_the_releaser() -> None:
    """Two families share one context type (`typedef ml_ctx hl_ctx`); the analysis of
    `ml_parse_chunk` named the other family's constructor first in its list and so its releaser
    (hl_free_ctx) for an object ml_create_push made."""
    from agents.offline.analysis import analyze_function

    api = parse_prototypes("typedef struct ml_ctx ml_ctx;\n"
                           "ml_ctx *hl_create_push(const char *chunk, int size);\n"
                           "ml_ctx *ml_create_push(const char *chunk, int size);\n"
                           "void hl_free_ctx(ml_ctx *ctx);\nvoid ml_free_ctx(ml_ctx *ctx);\n"
                           "int ml_parse_chunk(ml_ctx *ctx, const char *chunk, int size, int terminate);\n")
    found = analyze_function(next(f for f in api if f.name == "ml_parse_chunk"), api)
    rule = next(c for c in found.constraints if "released with" in c)
    assert "ml_create_push" in rule and rule.endswith("released with ml_free_ctx"), found.constraints


NAMED_STRING_TYPES = render_types("""\
```c
typedef const char *db_path;
```
Release functions:
- db_free_path releases db_path (parameter type)
- db_free releases void * (parameter type)
""")


def test_a_releaser_of_a_named_string_type_releases_only_that_type() -> None:
    """``db_free_path(db_path)`` frees what the library made as a ``db_path``, not every string.

    Its canonical ``const char *`` matched a plain ``char *`` result: the leak repair released a
    statement's expanded text with the path releaser, which read a header the string never had.
    """
    with using(read_types(NAMED_STRING_TYPES)):
        assert type_releaser("db_path") == "db_free_path"
        assert type_releaser("char *") is None
        assert type_releaser("const char *") is None


TIED_TYPES = render_types("""\
```c
typedef const char *db_path;
typedef struct db db;
```
Release functions:
- db_free_path releases db_path (parameter type; the library allocates it)
- db_free_path releases what db_make_path allocates (by documentation)
- db_close releases db * (parameter type)
- db_close releases what db_open allocates (by documentation)
- db_mem_free releases void * (parameter type)
- db_mem_free releases what db_alloc allocates (by documentation)
""")


def test_a_named_string_releaser_tied_to_its_producers_takes_no_other_result() -> None:
    """``db_path_of(db)`` hands back the connection's own path: the releaser documented for
    ``db_make_path``'s results freed it (a bad free on every run). An object's releaser stays
    the releaser of every result of its type."""
    with using(read_types(TIED_TYPES)):
        assert type_releaser("db_path", producer="db_make_path") == "db_free_path"
        assert type_releaser("db_path", producer="db_path_of") is None
        assert type_releaser("db_path") == "db_free_path"
        assert type_releaser("db *", producer="db_dup") == "db_close"
        assert type_releaser("void *", producer="db_buffer") == "db_mem_free"  # frees any block


def test_the_destructor_of_a_named_string_follows_the_documented_tie() -> None:
    api = parse_prototypes("db_path db_make_path(const char *dir, const char *name);\n"
                           "db_path db_path_of(db *d);\nvoid db_free_path(db_path p);\n"
                           "db *db_open(const char *name);\nvoid db_close(db *d);\n")
    with using(read_types(TIED_TYPES)):
        idx = ApiIndex(api)
        key = idx.type_key("db_path")
        assert key and idx.destructor(key, "db_make_path") == "db_free_path"
        assert idx.destructor(key, "db_path_of") is None
