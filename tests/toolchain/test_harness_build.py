from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fuzzkit.diagnostics import LINK_FILE, Diagnostic, parse_compiler_output
from fuzzkit.harness import HarnessBuild, build_harness
from fuzzkit.library import LibraryBuild

pytestmark = pytest.mark.toolchain

BROKEN = """\
#include <stdint.h>
#include <stddef.h>
#include "cJSON.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *json = cJSON_Parse((const char *)data);
  int depth = json->no_such_field;
  char *text = 42;
  cJSON_Delete(json);
  return depth;
}
"""

UNLINKABLE = """\
#include <stdint.h>
#include <stddef.h>
#include "cJSON.h"
cJSON *cJSON_ParseEverything(const char *text);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON_Delete(cJSON_ParseEverything((const char *)data));
  return 0;
}
"""


def test_naive_harness_builds_both_binaries(naive_cjson: HarnessBuild, tmp_path: Path) -> None:
    assert naive_cjson.ok and naive_cjson.errors == []
    assert naive_cjson.fuzz_binary and Path(naive_cjson.fuzz_binary).is_file()
    assert naive_cjson.cov_binary and Path(naive_cjson.cov_binary).is_file()
    assert naive_cjson.seconds < 30
    assert HarnessBuild.from_dict(naive_cjson.to_dict()) == naive_cjson
    # The coverage binary replays a file given on the command line without libFuzzer.
    profile = tmp_path / "replay.profraw"
    out = subprocess.run(
        [naive_cjson.cov_binary, naive_cjson.cov_binary],
        capture_output=True,
        timeout=30,
        cwd=tmp_path,
        env={**os.environ, "LLVM_PROFILE_FILE": str(profile)},
    )
    assert out.returncode == 0
    assert profile.stat().st_size > 0


def test_compile_error_is_a_result_with_diagnostics(cjson_lib: LibraryBuild, tmp_path: Path) -> None:
    source = tmp_path / "broken.c"
    source.write_text(BROKEN)
    build = build_harness(source, cjson_lib, tmp_path / "out")
    assert not build.ok and build.fuzz_binary is None and build.cov_binary is None
    errors = build.errors
    assert len(errors) == 1
    assert Path(errors[0].file).name == "broken.c"
    assert (errors[0].line, errors[0].column) == (7, 21)
    assert "no_such_field" in errors[0].message
    warnings = [d for d in build.diagnostics if d.severity == "warning"]
    assert [(Path(w.file).name, w.line) for w in warnings] == [("broken.c", 8)]
    assert "no member named 'no_such_field'" in build.log


def test_link_error_names_the_missing_symbol(cjson_lib: LibraryBuild, tmp_path: Path) -> None:
    source = tmp_path / "unlinkable.c"
    source.write_text(UNLINKABLE)
    build = build_harness(source, cjson_lib, tmp_path / "out")
    assert not build.ok
    assert build.errors == [
        Diagnostic(
            LINK_FILE, 0, 0, "error", "undefined reference to 'cJSON_ParseEverything' (at unlinkable.c:7)"
        )
    ]


def test_parse_compiler_output_on_real_clang_output(tmp_path: Path) -> None:
    source = tmp_path / "several.c"
    source.write_text('#include "missing.h"\n')
    fatal = subprocess.run(["clang", "-c", str(source), "-o", "/dev/null"], capture_output=True, text=True)
    assert parse_compiler_output(fatal.stderr) == [
        Diagnostic(str(source), 1, 10, "error", "'missing.h' file not found")
    ]
    driver = subprocess.run(["clang", str(tmp_path / "nope.c")], capture_output=True, text=True)
    diags = parse_compiler_output(driver.stderr)
    assert diags[0].file == "<driver>" and "no such file" in diags[0].message
    calls = tmp_path / "calls.c"
    calls.write_text("int gone(void);\nint main(void) {\n  return gone() + gone();\n}\n")
    link = subprocess.run(
        ["clang", "-g", str(calls), "-o", str(tmp_path / "a.out")], capture_output=True, text=True
    )
    diags = parse_compiler_output(link.stderr)
    assert [d.message for d in diags] == ["undefined reference to 'gone' (at calls.c:3)"]
    assert parse_compiler_output("") == []
    assert parse_compiler_output("random text\n  ^~~~\n") == []
