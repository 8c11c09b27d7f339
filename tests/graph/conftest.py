"""Graph tests run twice: on a recorded toolchain (fast tier) and on the real one (toolchain tier).

The recording lives in ``cassettes/kv.json``. Re-record it after changing a scripted harness or
the toolchain's result shapes (the real-toolchain runs write it):

    LOGICFUZZ_RECORD_CASSETTE=tests/graph/cassettes/kv.json python -m pytest tests/graph -m toolchain
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzzkit.toolchain import register_toolchain
from tests.recorded_toolchain import RecordingToolchain, ReplayToolchain

CASSETTE = Path(__file__).parent / "cassettes" / "kv.json"


@pytest.fixture(params=[pytest.param("recorded"),
                        pytest.param("fuzzkit", marks=pytest.mark.toolchain)])
def tools(request: pytest.FixtureRequest) -> Iterator[str]:
    """The name of the toolchain the test's Context uses."""
    record_to = os.environ.get("LOGICFUZZ_RECORD_CASSETTE", "")
    if request.param == "recorded":
        if record_to:
            pytest.skip("recording: only the real-toolchain runs")
        replay = ReplayToolchain(CASSETTE)
        register_toolchain("recorded", lambda: replay)
        yield "recorded"
    elif record_to:
        recorder = RecordingToolchain()
        register_toolchain("recording", lambda: recorder)
        yield "recording"
        path = Path(record_to)
        earlier = json.loads(path.read_text()) if path.is_file() else {}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(recorder.merge_into(earlier), indent=1, sort_keys=True) + "\n")
    else:
        yield "fuzzkit"
