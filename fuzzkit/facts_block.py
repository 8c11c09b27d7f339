"""Facts as data in a prompt: pydantic models rendered to a fenced YAML block, and read back.

A prompt carries what the toolchain learned about a library twice: a short summary a person
(or a model) reads, and a fenced ``yaml`` block rendered from the toolchain's own pydantic
models. The offline model reads the block back with the same models, so rewording the summary
never changes what it does, and a block that does not fit its model is an error one can see,
not a silently different harness. This module is the only place that writes or reads such
blocks.

A block's first line names its kind and version (``# facts: usage v1``); the rest is the
model's ``model_dump`` as YAML.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

VERSION = 1
_FENCE = re.compile(r"^```yaml[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_HEAD = re.compile(r"^# facts: (?P<kind>[\w-]+) v(?P<version>\d+)[ \t]*$")


class FactsBlockError(ValueError):
    """A facts block of the asked kind is present but does not fit its model."""


def render_facts(kind: str, model: BaseModel) -> str:
    """``model`` as a fenced YAML block headed ``# facts: KIND v1`` (defaults left out)."""
    data = model.model_dump(mode="json", exclude_defaults=True)
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
    return f"```yaml\n# facts: {kind} v{VERSION}\n{body.rstrip()}\n```"


def read_facts(text: str, kind: str, model: type[M]) -> M | None:
    """The first ``kind`` block of ``text`` as a ``model`` (None when there is none).

    Raises:
        FactsBlockError: The block is there but is not valid YAML or does not fit ``model``;
            the message says which and where.
    """
    return next(_read(text, kind, model), None)


def read_all_facts(text: str, kind: str, model: type[M]) -> list[M]:
    """Every ``kind`` block of ``text`` as a ``model``, in order (a prompt may carry several).

    Raises:
        FactsBlockError: A block is not valid YAML or does not fit ``model``.
    """
    return list(_read(text, kind, model))


def _read(text: str, kind: str, model: type[M]) -> Iterator[M]:
    for match in _FENCE.finditer(text):
        body = match.group("body")
        first, _, rest = body.partition("\n")
        head = _HEAD.match(first.strip())
        if head is None or head.group("kind") != kind:
            continue
        if int(head.group("version")) != VERSION:
            raise FactsBlockError(
                f"the {kind} facts block is version {head.group('version')}, "
                f"this reader knows version {VERSION}"
            )
        try:
            data = yaml.safe_load(rest) or {}
            yield model.model_validate(data)
        except (yaml.YAMLError, ValidationError) as exc:
            raise FactsBlockError(f"the {kind} facts block does not fit {model.__name__}: {exc}") from exc
