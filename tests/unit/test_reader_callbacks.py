"""A decoder whose only in-memory entry is a reader callback, closed by a function reporting a status.

An invented picture library: ``DPkOpen(void *userPtr, PkReadFn read, int *err)`` hands the
callback the library's own object (``PkFile *``), which keeps the user pointer in its
``UserData`` field; every other opener takes a file name, one of them an encoder's. The decoder
is closed by ``DPkCloseFile(PkFile *, int *ErrorCode)`` (a status out, not a second object);
``PkFreeSavedFrames(PkFile *)`` frees only the frames the file holds.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_releasers import find_releasers
from fuzzkit.select_functions import choose_functions
from tests.types_text import render_types

API = """
typedef unsigned char PkByte;
typedef struct PkFile PkFile;
typedef int (*PkReadFn)(PkFile *, PkByte *, int);
PkFile *EPkOpenFileName(const char *PkFileName, const int PkTestExistence, int *Error);
int EPkCloseFile(PkFile *PkFile, int *ErrorCode);
PkFile *DPkOpenFileName(const char *PkFileName, int *Error);
PkFile *DPkOpen(void *userPtr, PkReadFn readFunc, int *Error);
int DPkSlurp(PkFile *PkFile);
int DPkGetScreenDesc(PkFile *PkFile);
int DPkCloseFile(PkFile *PkFile, int *ErrorCode);
void PkFreeSavedFrames(PkFile *PkFile);
const char *PkErrorString(int ErrorCode);
"""
TYPES = render_types("""```c
typedef unsigned char PkByte;
typedef int (*PkReadFn)(PkFile *, PkByte *, int);
typedef struct PkFile PkFile;
struct PkFile { int SWidth; int SHeight; int ImageCount; void *UserData; void *Private; };
```
Release functions:
- EPkCloseFile releases PkFile * (parameter type)
- DPkCloseFile releases PkFile * (parameter type)
""")
CANONICAL = {"PkByte *": "unsigned char *", "PkFile *": "struct PkFile *",
             "PkReadFn": "int (*)(struct PkFile *, unsigned char *, int)"}


def test_a_release_verb_with_a_status_out_releases_its_object_and_a_part_releaser_gives_way() -> None:
    found = {(r.function, r.releases) for r in find_releasers(parse_prototypes(API), {}, [], {})}
    assert ("DPkCloseFile", "PkFile *") in found and ("EPkCloseFile", "PkFile *") in found
    assert not any(f == "PkFreeSavedFrames" for f, _ in found), found  # frames, not the file
    alone = API.replace("int EPkCloseFile(PkFile *PkFile, int *ErrorCode);\n", "").replace(
        "int DPkCloseFile(PkFile *PkFile, int *ErrorCode);\n", "")
    found = {(r.function, r.releases) for r in find_releasers(parse_prototypes(alone), {}, [], {})}
    assert ("PkFreeSavedFrames", "PkFile *") in found  # the only releaser of the type stays one


def _draft(name: str) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == name)
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["pk.h"], arche, default_skeleton(arche)).code
    return code


def test_the_reader_callback_serves_the_input_from_the_objects_user_field() -> None:
    code = _draft("DPkOpen")
    # the user pointer is the input cursor, not a buffer of its own
    assert re.search(r"DPkOpen\(\(void \*\)&\w+, lf_\w+_cb\w*, &Error\)", code), code
    assert "(lf_input_t *)a0->UserData;" in code, code  # the callback gets the PkFile, not the user pointer
    # closed by the decoder's own closer, its status out given a place to go
    assert re.search(r"DPkCloseFile\(result, &\(int\)\{0\}\);", code), code
    assert "PkFreeSavedFrames" not in code


def test_the_callback_reader_is_the_entry_point_and_what_reads_its_object_follows() -> None:
    decls = parse_prototypes(API)
    chosen = [d.name for d in choose_functions(decls, 8, CANONICAL)]
    assert chosen[0] == "DPkOpen", chosen
    assert "DPkSlurp" in chosen, chosen  # shares only the library's prefix with DPkOpen: no variant
    assert "EPkOpenFileName" not in chosen and "DPkOpenFileName" not in chosen, chosen


def test_only_a_callback_filling_a_sized_byte_buffer_reads_input() -> None:
    from fuzzkit.api import FunctionDecl, Param
    from fuzzkit.select_io import reads_through_callback

    def decl(cb: str) -> FunctionDecl:
        return FunctionDecl("pk_hook", "int", (Param("ctx", "void *"), Param("fn", cb)))

    assert reads_through_callback(decl("int (*)(void *, unsigned char *, int)"))
    assert reads_through_callback(decl("long (*)(void *, void *, unsigned long)"))
    # a notifier given text, a comparison, a writer of the library's output: no input comes in
    assert not reads_through_callback(decl("int (*)(void *, int, const char *, const char *)"))
    assert not reads_through_callback(decl("int (*)(unsigned int, void *)"))
    assert not reads_through_callback(decl("int (*)(void *, const unsigned char *, int)"))
    assert not reads_through_callback(decl("void *(*)(void *, void *, int)"))  # a realloc-shaped allocator
