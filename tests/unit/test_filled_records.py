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

DB = Param("db", "gdb_s *")
OPEN = FunctionDecl("gdb_open", "int", (Param("filename", "const char *const"), Param("flags", "uint32_t"), DB),
                    "gdb.h")
READ = FunctionDecl("gdb_read_node", "int", (Param("db", "const gdb_s *const"), Param("n", "uint32_t"),
                                             Param("node", "gdb_node_s *const")), "gdb.h")
API = [OPEN, READ, FunctionDecl("gdb_close", "void", (DB,), "gdb.h"),
       FunctionDecl("gdb_lib_version", "const char *", (), "gdb.h")]


def draft(target: FunctionDecl) -> str:
    analysis = analyze_function(target, API)
    return write_harness(target, API, ["gdb.h"], analysis.archetype, default_skeleton(analysis.archetype),
                         constraints=analysis.constraints).code


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
