"""A record a function fills from the input is made by it; the filled record is released.

``int gdb_open(const char *filename, uint32_t flags, gdb_s *db)``, ``int
gdb_read_node(const gdb_s *db, uint32_t n, gdb_node_s *node)``, ``void gdb_close(gdb_s *db)``
(an invented API, shaped like a geo-IP database reader). Nothing constructs or initializes a
``gdb_s``: ``gdb_open`` fills the caller's. Its draft never closed the database (a leak on
every input, judged harness misuse with no repair), and the reader's draft read a zeroed one
(an assertion in the library on every input).
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from fuzzkit.api import FunctionDecl, Param
from tests.types_text import render_types

DB = Param("db", "gdb_s *")
OPEN = FunctionDecl("gdb_open", "int",
                    (Param("filename", "const char *const"), Param("flags", "uint32_t"), DB), "gdb.h")
READ = FunctionDecl("gdb_read_node", "int", (Param("db", "const gdb_s *const"), Param("n", "uint32_t"),
                                             Param("node", "gdb_node_s *const")), "gdb.h")
API = [OPEN, READ, FunctionDecl("gdb_close", "void", (DB,), "gdb.h"),
       FunctionDecl("gdb_lib_version", "const char *", (), "gdb.h")]


def draft(target: FunctionDecl) -> str:
    analysis = analyze_function(target, API)
    return write_harness(target, API, ["gdb.h"], analysis.archetype, default_skeleton(analysis.archetype),
                         rules=analysis.rules).code


def test_the_opener_closes_what_it_filled() -> None:
    code = draft(OPEN)
    var = re.search(r"gdb_open\([^,]+, [^,]+, &(\w+)\)", code)
    assert var, code
    assert f"gdb_close(&{var.group(1)});" in code
    assert code.index(f"{var.group(1)}_ready = 1") < code.index(f"gdb_close(&{var.group(1)})")


def test_the_reader_reads_a_database_opened_from_the_input() -> None:
    code = draft(READ)
    opened = re.search(r"(\w+) = gdb_open\((\w+), \w+, &(\w+)\);", code)
    assert opened, code
    rc, path, db = opened.groups()
    assert re.search(rf"if \(!\({rc} [^)]*\)\) goto lf_cleanup;", code)  # a failed open skips the read
    assert f"gdb_read_node(&{db}," in code and code.index("gdb_open(") < code.index("gdb_read_node(")
    assert f"gdb_close(&{db});" in code
    assert re.search(rf"lf_tmpfile\(data, size, {path},", code)  # the input is the file it opens


def test_an_improvement_makes_no_zeroed_record_that_points_into_another_object() -> None:
    from agents.offline import type_table
    from agents.offline.improver import improve_harness

    # `gdb_entry_s` is a position inside a database, filled by a lookup: zeroed, the library
    # follows its NULL database pointer (SEGV). A plain option record stays zeroable.
    types = ("struct gdb_entry_s { gdb_s *db; uint32_t offset; };\n"
             "typedef struct gdb_entry_s gdb_entry_s;\n"
             "struct gdb_s { int fd; const unsigned char *map; };\ntypedef struct gdb_s gdb_s;\n"
             "struct gdb_opts_s { int depth; };\ntypedef struct gdb_opts_s gdb_opts_s;")
    entry_list = FunctionDecl("gdb_get_entry_list", "int", (Param("start", "gdb_entry_s *"),
                                                            Param("depth", "int")), "gdb.h")
    with_opts = FunctionDecl("gdb_check_opts", "int", (Param("opts", "gdb_opts_s *"),), "gdb.h")
    api = [*API, entry_list, with_opts]
    with type_table.using(type_table.read_types(render_types(types))):
        analysis = analyze_function(OPEN, api)
        first = write_harness(OPEN, api, ["gdb.h"], analysis.archetype, default_skeleton(analysis.archetype),
                              rules=analysis.rules).code
        made = improve_harness(first, OPEN, api, ["gdb_get_entry_list", "gdb_check_opts"])
    assert "gdb_get_entry_list(" not in made.code
    assert "gdb_check_opts(" in made.code


def test_a_setter_of_one_field_from_bytes_makes_no_object() -> None:
    # `tls_set_transport_id(ssl, id, len)` takes bytes into a context but sets up nothing: a
    # context "made" by it crashed every handshake call after it (a TLS library, four targets)
    ssl = Param("ssl", "tls_ctx *")
    set_id = FunctionDecl("tls_set_transport_id", "int", (ssl, Param("info", "const unsigned char *"),
                                                         Param("ilen", "size_t")), "tls.h")
    read = FunctionDecl("tls_pending", "int", (Param("ssl", "const tls_ctx *"),), "tls.h")
    api = [read, set_id, FunctionDecl("tls_free", "void", (ssl,), "tls.h")]
    analysis = analyze_function(read, api)
    code = write_harness(read, api, ["tls.h"], analysis.archetype, default_skeleton(analysis.archetype),
                         rules=analysis.rules).code
    assert "tls_set_transport_id(" not in code, code
