"""``logicfuzz export``, for real: run the offline pipeline on an invented library, export, build, fuzz.

The library ``tally`` needs its include directory and two ``-D`` macros (one a quoted string) to
compile, so the export's ``build.sh`` builds only if it carries the run's recipe. The export is
built the way OSS-Fuzz and ClusterFuzzLite build a project (``SRC``, ``OUT``, ``CC``, ``CFLAGS``,
``LIB_FUZZING_ENGINE`` set for libFuzzer), and each harness runs on its seed corpus.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from fuzzkit.export_build import build_script, generated_files
from fuzzkit.library import LibraryBuild

pytestmark = [pytest.mark.e2e, pytest.mark.toolchain]

REPO = Path(__file__).resolve().parents[2]

HEADER = """\
#ifndef TALLY_H
#define TALLY_H
#include <stddef.h>
/* Counts the words (runs of letters) of a NUL-terminated text; -1 when it is longer than the limit. */
int tally_words(const char *text);
/* Sums the decimal digits among size bytes of data; -1 on a byte above 0x7f. */
int tally_digits(const unsigned char *data, size_t size);
const char *tally_version(void);
#endif
"""

INTERNAL = """\
#ifndef TALLY_INTERNAL_H
#define TALLY_INTERNAL_H
#if !defined(TALLY_LIMIT) || !defined(TALLY_VERSION)
#error "tally needs -DTALLY_LIMIT and -DTALLY_VERSION"
#endif
static int is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
#endif
"""

SOURCE = """\
#include "tally.h"
#include "tally_internal.h"
#include <string.h>

int tally_words(const char *text) {
  int words = 0, in_word = 0;
  if (strlen(text) > TALLY_LIMIT) return -1;
  if (strncmp(text, "STOP", 4) == 0) return 0;
  for (; *text; text++) {
    if (is_letter(*text)) {
      if (!in_word) words++;
      in_word = 1;
    } else if (*text == '-' && in_word) {
      continue; /* a hyphen joins two parts of one word */
    } else {
      in_word = 0;
    }
  }
  return words;
}

int tally_digits(const unsigned char *data, size_t size) {
  int sum = 0;
  for (size_t i = 0; i < size; i++) {
    if (data[i] > 0x7f) return -1;
    if (data[i] >= '0' && data[i] <= '9') sum += data[i] - '0';
    else if (data[i] == '#') sum *= 2;
  }
  return sum;
}

const char *tally_version(void) { return TALLY_VERSION; }
"""


def _functions() -> list[dict[str, object]]:
    return [
        {"name": "tally_words", "signature": "int tally_words(const char * text)", "return_type": "int",
         "params": [{"name": "text", "type": "const char *"}]},
        {"name": "tally_digits", "signature": "int tally_digits(const unsigned char * data, size_t size)",
         "return_type": "int", "params": [{"name": "data", "type": "const unsigned char *"},
                                          {"name": "size", "type": "size_t"}]},
    ]


def _library(root: Path) -> Path:
    """The tally source tree and its benchmark YAML (beside it)."""
    (root / "include").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "include" / "tally.h").write_text(HEADER)
    (root / "src" / "tally_internal.h").write_text(INTERNAL)
    (root / "src" / "tally.c").write_text(SOURCE)
    bench = {"project": "tally", "language": "c", "source": {"path": str(root)},
             "build": {"sources": ["src/tally.c"], "include_dirs": ["include", "src"],
                       "defines": ["TALLY_LIMIT=64", 'TALLY_VERSION="1.2"'], "headers": ["include/tally.h"]},
             "functions": _functions()}
    path = root.parent / "tally.yaml"
    path.write_text(yaml.safe_dump(bench))
    return path


def _oss_fuzz_env(tmp_path: Path) -> dict[str, str]:
    """The variables OSS-Fuzz and ClusterFuzzLite set, for libFuzzer with ASan, in ``tmp_path``."""
    return {**os.environ, "SRC": str(tmp_path / "SRC"), "OUT": str(tmp_path / "OUT"),
            "WORK": str(tmp_path / "WORK"), "CC": "clang", "CXX": "clang++",
            "CFLAGS": "-fsanitize=address,fuzzer-no-link -g", "LIB_FUZZING_ENGINE": "-fsanitize=fuzzer"}


def _logicfuzz(*args: str) -> subprocess.CompletedProcess[str]:
    # ``-m`` from the repository: the code under test, whatever the installed script points at.
    return subprocess.run([sys.executable, "-m", "logicfuzz.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600)


def test_export_builds_with_oss_fuzz_variables_and_each_harness_runs(tmp_path: Path) -> None:
    bench = _library(tmp_path / "tally")
    run = tmp_path / "run"
    proc = _logicfuzz("run", str(bench), "--fuzz-seconds", "3", "--max-iterations", "0", "--jobs", "1",
                      "--memory-mode", "baseline", "--out", str(run), "--quiet")
    assert proc.returncode == 0, proc.stderr[-4000:]
    export = tmp_path / "export"
    proc = _logicfuzz("export", str(run), "--to", str(export), "--json")
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout)
    # Each function has lines only its own harness reaches: the cover keeps both, and every line.
    assert sorted(h["function"] for h in result["harnesses"]) == ["tally_digits", "tally_words"]
    assert result["kept_lines"] == result["run_lines"] > 0 and result["left_out"] == []
    assert json.loads((export / "export.json").read_text()) == result
    assert "build.sh" in (export / "README.md").read_text()

    out = tmp_path / "OUT"
    (tmp_path / "SRC").mkdir()
    (tmp_path / "SRC" / "tally").symlink_to(tmp_path / "tally")  # the library's source at $SRC/<project>
    built = subprocess.run(["bash", str(export / "build.sh")], env=_oss_fuzz_env(tmp_path),
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert built.returncode == 0, built.stderr[-4000:]
    for harness in result["harnesses"]:
        name = harness["name"]
        assert harness["dictionary"]
        assert (out / f"{name}.dict").read_text() == (export / f"{name}.dict").read_text()
        corpus = tmp_path / "corpus" / name
        with zipfile.ZipFile(out / f"{name}_seed_corpus.zip") as archive:
            assert len(archive.namelist()) == harness["seeds"] > 0
            archive.extractall(corpus)
        ran = subprocess.run([str(out / name), "-runs=100", f"-dict={out / f'{name}.dict'}", str(corpus)],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert ran.returncode == 0 and "Done 100 runs" in ran.stderr, ran.stderr[-3000:]


def test_a_configured_build_carries_its_generated_header(tmp_path: Path) -> None:
    """A build from a configured copy (``config.h`` made there) builds from ``$SRC`` plus ``generated/``."""
    source, configured, export = tmp_path / "source", tmp_path / "configured", tmp_path / "export"
    for root in (source, configured):
        root.mkdir()
        (root / "sq.h").write_text("int sq(int x);\n")
        (root / "sq.c").write_text('#include "config.h"\n#include "sq.h"\n'
                                   "int sq(int x) { return x * SQ_SCALE; }\n")
    (configured / "config.h").write_text("#define SQ_SCALE 3\n")  # what a configure step writes
    lib = LibraryBuild(key="k", root=str(configured), fuzz_archive="", cov_archive="", log_path="",
                       include_dirs=[str(configured)], headers=[str(configured / "sq.h")], coverage_files=[],
                       defines=[], sources=[str(configured / "sq.c")])
    assert generated_files(lib, source) == ["config.h"]
    (export / "generated").mkdir(parents=True)
    (export / "generated" / "config.h").write_text((configured / "config.h").read_text())
    (export / "sq_fuzzer.c").write_text(
        '#include <stddef.h>\n#include <stdint.h>\n#include "sq.h"\n'
        "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return n ? sq(d[0]) * 0 : 0; }\n")
    (export / "build.sh").write_text(build_script(lib, "sq", ["sq_fuzzer.c"], generated=True))
    (tmp_path / "SRC").mkdir()
    (tmp_path / "SRC" / "sq").symlink_to(source)
    built = subprocess.run(["bash", str(export / "build.sh")], env=_oss_fuzz_env(tmp_path),
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr[-3000:]
    assert not (source / "config.h").exists()  # the source tree is left as it was
    ran = subprocess.run([str(tmp_path / "OUT" / "sq_fuzzer"), "-runs=10"], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
