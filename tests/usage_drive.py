"""Drive the offline prototyper on an invented library through the real prompt path.

The library is written to a temporary tree (:mod:`tests.usage_fixtures`), built with the real
toolchain, its API, header facts and usage prepared as a run prepares them, the prototyper's
prompt rendered from that state, and the offline model's reply parsed: what a run's first draft
would be, with or without the usage index.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from agent_graph.benchmark import load_benchmark
from agents.offline.model import OfflineChatModel
from agents.offline.synth import default_skeleton
from agents.prototyper import Prototyper
from nodes.prepare import prepared_fields
from tests.usage_fixtures import LIBRARIES, write_tree


def prepared(tmp: Path, lib: str, target: str, usage: bool = True) -> dict:
    """The prepared state of ``target`` of the invented library ``lib``."""
    root = write_tree(tmp / lib, LIBRARIES[lib])
    bench = tmp / f"{lib}.yaml"
    bench.write_text(
        yaml.safe_dump(
            {
                "project": lib,
                "language": "c",
                "source": {"path": str(root)},
                "build": {"sources": [f"{lib}.c"], "include_dirs": ["."], "headers": [f"{lib}.h"]},
                "functions": [{"name": target}],
            }
        )
    )
    return prepared_fields(load_benchmark(bench), target, usage=usage)


def first_draft(state: dict, archetype: str = "stateless_parser") -> tuple[str, list[str], str]:
    """``(code, notes, prompt)`` of the offline prototyper's reply for a prepared state."""
    variables = Prototyper.variables(state, (), archetype, "", default_skeleton(archetype), "(none)")
    result = Prototyper(OfflineChatModel()).run(variables)
    prompt = "\n".join(m["content"] for m in result.new_messages if m["role"] == "user")
    return result.code or "", list(result.output.notes), prompt
