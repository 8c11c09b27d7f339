"""Each hostile harness of the corpus, built and run as the tool does, must not escape.

A probe that cannot run here (no bubblewrap, no user namespaces) is skipped with the
protection that is missing; every other probe fails the moment its escape happens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.security.hostile_harnesses import PROBES, Lab, make_lab

pytestmark = pytest.mark.toolchain


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return make_lab(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("name", sorted(PROBES))
def test_hostile_harness_does_not_escape(lab: Lab, name: str) -> None:
    outcome = PROBES[name](lab)
    if outcome.skipped:
        pytest.skip(f"{name}: {outcome.skipped}")
    assert not outcome.escaped, f"{name} escaped: {outcome.detail}"


def test_secret_in_the_parent_environment_is_invisible_to_every_step(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also the coverage replay and the compiler: every step's environment starts empty."""
    from fuzzkit.coverage import replay_inputs
    from fuzzkit.harness import build_harness

    monkeypatch.setenv("OPENAI_API_KEY", f"sk-{lab.token}")
    work = lab.run_dir("env_everywhere")
    source = work / "harness.c"
    source.write_text(
        "#include <stdint.h>\n#include <stddef.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
        "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {\n"
        '  const char *k = getenv("OPENAI_API_KEY"); fprintf(stderr, "KEY=%s\\n", k ? k : "unset");\n'
        "  return 0;\n}\n"
    )
    build = build_harness(source, lab.lib, work)
    assert build.ok and build.cov_binary, build.log
    replay_inputs(Path(build.cov_binary), [], work / "profraw", work / "replay.log")
    log = (work / "replay.log").read_text()
    assert "KEY=unset" in log and lab.token not in log
