# ruff: noqa: E501
"""A store opened by path that resolves the path it is given, and hands back a handle even when
the open fails.

``rs`` (written here, built in a temporary directory) does what several real stores do: the
open call runs ``realpath`` on its path (to name a journal beside the file), and on failure
still fills ``*out`` with a handle that only carries the error. Calling anything else on that
handle reads through its NULL file pointer. The library has no bug: a crash is the harness's.

Two engine rules are checked end to end, with the harness built by clang and run by libFuzzer in
the sandbox, and the coverage build showing the target ran:

* a path parameter names a real file in ``$TMPDIR`` (a ``/proc/self/fd/N`` path of a memfd
  resolves to ``/memfd:... (deleted)``, which does not exist, so the open would always fail);
* the status of an open call that returns its object through ``T **`` is tested, not just the
  pointer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.coverage import measure_coverage
from fuzzkit.harness import build_harness
from fuzzkit.header_facts_collect import collect_facts
from fuzzkit.headers import parse_header
from fuzzkit.library import LibraryBuild
from fuzzkit.runner import run_fuzzer
from tests.toolchain.conftest import tiny_library

pytestmark = pytest.mark.toolchain

RS_HEADER = """\
#ifndef RS_H
#define RS_H
#define RS_OK 0
#define RS_CANTOPEN 14
typedef struct rs_store rs_store;
/* Opens the store at path. Returns RS_OK on success; *out is set even on failure (it carries
   the error) and must be closed with rs_close. */
int rs_open(const char *path, rs_store **out);
int rs_close(rs_store *st);
/* Runs nByte bytes of the statement text against the store. */
int rs_exec(rs_store *st, const char *zText, int nByte);
#endif
"""

RS_SOURCE = """\
#include "rs.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rs_file { char journal[PATH_MAX + 16]; long statements; };
struct rs_store { struct rs_file *file; int err; };

int rs_open(const char *path, rs_store **out) {
  char real[PATH_MAX];
  *out = calloc(1, sizeof **out);
  if (*out == NULL) return RS_CANTOPEN;
  if (path == NULL || realpath(path, real) == NULL) { (*out)->err = RS_CANTOPEN; return RS_CANTOPEN; }
  (*out)->file = calloc(1, sizeof *(*out)->file);
  if ((*out)->file == NULL) { (*out)->err = RS_CANTOPEN; return RS_CANTOPEN; }
  snprintf((*out)->file->journal, sizeof (*out)->file->journal, "%s-journal", real);
  return RS_OK;
}

int rs_close(rs_store *st) { if (st) { free(st->file); free(st); } return RS_OK; }

int rs_exec(rs_store *st, const char *zText, int nByte) {
  int words = 0;
  st->file->statements++;  /* a handle whose open failed has no file */
  for (int i = 0; i < nByte; i++)
    if (zText[i] == ' ' && i + 1 < nByte && zText[i + 1] != ' ') words++;
  return words > 3 ? 1 : RS_OK;
}
"""


@pytest.fixture(scope="module")
def rs_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("rslib"), "rs", RS_HEADER, RS_SOURCE, cache)


def _draft(rs_lib: LibraryBuild) -> str:
    """The offline model's first harness for ``rs_exec``, from the header's facts."""
    api = parse_header(Path(rs_lib.headers[0]), rs_lib.include_dirs, rs_lib.defines)
    facts = collect_facts(rs_lib.headers, rs_lib.include_dirs, rs_lib.defines, api)
    target = next(f for f in api if f.name == "rs_exec")
    with using(read_types(facts.render())):
        analysis = analyze_function(target, api)
        return write_harness(target, api, ["rs.h"], analysis.archetype,
                             default_skeleton(analysis.archetype), rules=analysis.rules).code


def test_a_store_that_resolves_its_path_is_opened_checked_and_reached(rs_lib: LibraryBuild, tmp_path: Path) -> None:
    code = _draft(rs_lib)
    assert "\"/proc/self/fd/%d\"" not in code and "lf_tmpfile(" in code, code
    assert "RS_OK)) goto" in code, code  # the open's status, not only its pointer
    assert "(int)size)" in code, code  # nByte measures the text: the payload's size
    source = tmp_path / "rs_exec.c"
    source.write_text(code)
    built = build_harness(source, rs_lib, tmp_path / "out")
    assert built.ok, built.log
    run = run_fuzzer(Path(str(built.fuzz_binary)), tmp_path / "work", seconds=3)
    assert run.crash is None, run.crash.excerpt
    assert run.stats.execs > 100, Path(run.log_path).read_text()[-2000:]
    report = measure_coverage(Path(str(built.cov_binary)), run.replay_inputs(), rs_lib, tmp_path / "cov")
    assert report.function_hits.get("rs_exec", 0) > 0, report.function_hits
    left = [p.name for p in (tmp_path / "work").rglob("lf_input_*")]
    assert left == [], left  # each input's file is removed after it ran


def test_the_engine_reaches_the_target_only_with_both_rules(rs_lib: LibraryBuild, tmp_path: Path) -> None:
    """The same harness with the path as /proc/self/fd/N never gets an open store, and without
    the status test it crashes on the first input: the failure both rules remove."""
    lines = _draft(rs_lib).splitlines()
    call = next(i for i, line in enumerate(lines) if "= lf_tmpfile(data, 0," in line)
    fd = lines[call].split("=")[0].strip()
    path = lines[call].split(",")[2].strip()
    lines[call] = f'  {fd} = (int)syscall(SYS_memfd_create, "lf_input", 0);'
    lines.insert(call + 2, f'  snprintf({path}, sizeof {path}, "/proc/self/fd/%d", {fd});')
    old = "#include <sys/syscall.h>\n" + "\n".join(line for line in lines if "RS_OK)) goto" not in line)
    source = tmp_path / "old.c"
    source.write_text(old)
    built = build_harness(source, rs_lib, tmp_path / "out")
    assert built.ok, built.log
    run = run_fuzzer(Path(str(built.fuzz_binary)), tmp_path / "work", seconds=3)
    assert run.crash is not None and "rs_exec" in run.crash.excerpt
