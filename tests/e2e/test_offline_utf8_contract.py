"""End to end, offline: a crash on text that breaks the documented UTF-8 contract is repaired.

``rx`` (written here) documents its text type as "one byte of a UTF-8 encoded string" and
trusts it: a continuation byte where a character should start reaches a trap. That is the
harness breaking the contract, as a library's own fuzzers know (they check the text first), not
a library bug: the pipeline must judge it misuse, check the text before the call, and end with
a harness that runs. Without the rule the run ends at the first crash, reported as a bug.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.e2e.test_offline_cjson import logicfuzz

pytestmark = [pytest.mark.e2e, pytest.mark.toolchain]

RX_HEADER = """\
#ifndef RX_H
#define RX_H
/**
 * rx_char:
 *
 * One byte of a UTF-8 encoded string.
 */
typedef unsigned char rx_char;

/* Counts the characters of pattern outside brackets; -1 when a bracket is left open. */
int rx_count(const rx_char *pattern);
#endif
"""

RX_SOURCE = """\
#include "rx.h"
#include <stddef.h>

static int rx_width(rx_char c) {
  if (c < 0x80) return 1;
  if (c >= 0xF0) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  __builtin_trap();  /* a continuation byte where a character starts: never in UTF-8 */
}

int rx_count(const rx_char *pattern) {
  int n = 0, open = 0;
  size_t i = 0;
  while (pattern[i] != 0) {
    int w = rx_width(pattern[i]);
    if (pattern[i] == '[') open++;
    else if (pattern[i] == ']' && open > 0) open--;
    else if (open == 0) n++;
    for (int k = 0; k < w; k++) {
      if (pattern[i] == 0) return -1;
      i++;
    }
  }
  return open ? -1 : n;
}
"""


def test_a_crash_on_text_that_is_not_utf8_is_repaired_not_reported(tmp_path: Path) -> None:
    root = tmp_path / "rxlib"
    root.mkdir()
    (root / "rx.h").write_text(RX_HEADER)
    (root / "rx.c").write_text(RX_SOURCE)
    bench = tmp_path / "rx.yaml"
    bench.write_text(yaml.safe_dump({
        "project": "rx", "language": "c", "source": {"path": str(root)},
        "build": {"sources": ["rx.c"], "headers": ["rx.h"]},
        "functions": [{"name": "rx_count", "signature": "int rx_count(const rx_char * pattern)",
                       "return_type": "int", "params": [{"name": "pattern", "type": "const rx_char *"}]}],
    }))
    out = tmp_path / "run"
    proc = logicfuzz("run", str(bench), "--fuzz-seconds", "10", "--max-iterations", "0",
                     "--memory-mode", "baseline", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr[-4000:]
    target = out / "rx" / "rx_count"
    result = json.loads((target / "result.json").read_text())
    events = [json.loads(line) for line in (target / "events.jsonl").read_text().splitlines()]
    verdicts = [e["data"].get("verdict") for e in events if e["type"] == "crash.verdict"]
    assert verdicts and verdicts[0] == "harness_misuse", verdicts
    # the crash of the first version is kept in the record; the second checks the text and runs
    assert result["crash"]["verdict"] == "harness_misuse" and "library" not in result["termination_reason"]
    assert result["runs"] is True and result["best_version"] == 2 and result["fix_rounds"] == 1, result
    code = (target / "harness.c").read_text()
    assert "lf_utf8_ok((const char *)" in code and "rx_count(" in code
