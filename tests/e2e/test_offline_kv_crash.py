"""End to end, offline: a real library bug is found, triaged and reported as one.

``kv_check`` of the tiny ``kv`` library overflows a 4-byte buffer it allocates itself when the
text starts with "!!". The offline pipeline must write a harness that reaches it, let libFuzzer
find it, keep the reproducer, and judge it a library bug (not "fix" it away as misuse).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.e2e.test_offline_cjson import logicfuzz

pytestmark = [pytest.mark.e2e, pytest.mark.toolchain]

REPO = Path(__file__).resolve().parents[2]
CHECK = {"name": "kv_check", "signature": "int kv_check(const char * text)", "return_type": "int",
         "params": [{"name": "text", "type": "const char *"}]}


def test_library_bug_is_reported_with_its_reproducer(kv_benchmark: Path, tmp_path: Path) -> None:
    bench = tmp_path / "kv.yaml"
    bench.write_text(yaml.safe_dump({**yaml.safe_load(kv_benchmark.read_text()), "functions": [CHECK]}))
    out = tmp_path / "run"
    proc = logicfuzz("run", str(bench), "--fuzz-seconds", "20", "--max-iterations", "1",
                     "--memory-mode", "baseline", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr[-4000:]
    target = out / "kv" / "kv_check"
    result = json.loads((target / "result.json").read_text())
    crash = result["crash"]
    assert crash["verdict"] == "library_bug" and crash["feasible"] is True
    assert crash["kind"] == "heap-buffer-overflow" and "kv_check" in crash["signature"]
    assert result["fix_rounds"] == 0 and "library" in result["termination_reason"]
    reproducer = Path(crash["reproducer"])
    assert reproducer.read_bytes().startswith(b"!!")
    # The reproducer replays the crash through the fuzz binary.
    binary = reproducer.parents[2] / "harness"  # v<N>/run/artifacts/crash-* -> v<N>/harness
    replay = subprocess.run([str(binary), str(reproducer)], capture_output=True, text=True, timeout=60)
    assert replay.returncode != 0 and "heap-buffer-overflow" in replay.stderr
    # The run ends with the bug as a finding: its own folder, listed in the summary.
    summary = json.loads((out / "summary.json").read_text())
    assert summary["crashing"] == 1 and [f["targets"] for f in summary["findings"]] == [["kv/kv_check"]]
    folder = out / summary["findings"][0]["folder"]
    assert (folder / "reproducer").read_bytes().startswith(b"!!")
    assert "kv_check" in (folder / "report.md").read_text().splitlines()[0]
