"""``make -n`` of a Makefile that compiles without ``-o`` and moves each object beside its source."""

from __future__ import annotations

import textwrap
from pathlib import Path

from fuzzkit.detect_make import library_compiles, parse_make_dry_run

_DRY_RUN = textwrap.dedent("""\
    make: Entering directory '/src/qux'
    clang -c -O2 -DQUX_FAST -I./inc src/qux_core.c
    mv `basename src/qux_core.o` src/qux_core.o > /dev/null 2>&1
    clang -c -O2 -DQUX_FAST -I./inc src/qux_table.c
    mv `basename src/qux_table.o` src/qux_table.o > /dev/null 2>&1
    clang -c -O2 -DQUX_FAST -I./inc src/qux_tool_io.c
    mv `basename src/qux_tool_io.o` src/qux_tool_io.o > /dev/null 2>&1
    ar cr ./lib/libqux.a ./src/qux_core.o ./src/qux_table.o
    clang -o bin/quxtool src/qux_tool_io.o lib/libqux.a
    """)


def test_objects_moved_after_compiling_are_still_the_archive_members() -> None:
    top = Path("/src/qux")
    commands = parse_make_dry_run(_DRY_RUN, top)
    entries = library_compiles(commands, top)
    assert [e.source for e in entries] == [top / "src/qux_core.c", top / "src/qux_table.c"]
    assert entries[0].flags == ["-DQUX_FAST", "-I/src/qux/inc"]


def test_an_object_name_two_compiles_share_is_not_guessed() -> None:
    top = Path("/src/qux")
    text = textwrap.dedent("""\
        clang -c -o qux_core.o src/qux_core.c
        clang -c -DQUX_A -o fast/qux_table.o src/qux_table.c
        clang -c -DQUX_B -o small/qux_table.o src/qux_table_small.c
        ar cr libqux.a ./qux_core.o ./src/qux_table.o
        """)
    commands = parse_make_dry_run(text, top)
    # Two objects are named qux_table.o and neither is at the archived path: neither is picked.
    assert [e.source for e in library_compiles(commands, top)] == [top / "src/qux_core.c"]
