"""One real llama.cpp server (SmolLM2-135M-Instruct) for the ``realmodel`` tier.

``scripts/setup.sh --dev`` installs the server (its wheel is built once and cached under
``~/.cache/logicfuzz/wheels``); ``python -m agents.local_model --install`` does the same by hand.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents.local_model import LocalModelServer, server_installed, smollm2_gguf


@pytest.fixture(scope="session")
def smollm2() -> Iterator[LocalModelServer]:
    if not server_installed():
        pytest.skip("llama-cpp-python's server is not installed: run scripts/setup.sh --dev "
                    "(or python -m agents.local_model --install; the build takes about 15 minutes)")
    with LocalModelServer(smollm2_gguf(), alias="smollm2") as server:
        yield server
