"""Reading YAML a user gives (benchmarks, configs, ``--build``) within documented bounds.

``yaml.safe_load`` refuses arbitrary objects but not size: a 503-byte file of nested aliases
(``b: [*a, *a, ...]``, nine levels) expands to hundreds of millions of nodes once anything
walks it, and a 60 MB file takes minutes and gigabytes to load. Before building any Python
object, one pass over the parser's event stream counts the nodes the document would have
with every alias expanded (an alias costs the size of what it names) and its nesting depth,
and stops at the first limit it passes, so a bomb is refused in milliseconds. Files are
checked by size before they are read.

Limits (documented in the README): a file of at most :data:`MAX_BYTES` (1 MiB), at most
:data:`MAX_NODES` nodes after alias expansion, nesting at most :data:`MAX_DEPTH` deep, and no
recursive alias. The shipped benchmarks are about 2 KB and 170 nodes each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fuzzkit.inputs import InputError

MAX_BYTES = 1 << 20
MAX_NODES = 250_000
MAX_DEPTH = 64

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlLimitError(InputError):
    """A YAML document past a size, node, depth or alias limit, or not valid YAML."""


def load_yaml_file(path: str | Path, what: str = "YAML file", max_bytes: int = MAX_BYTES) -> Any:
    """The data of the YAML file at ``path``, refused before reading when it is too large.

    Raises:
        YamlLimitError: Unreadable, larger than ``max_bytes``, invalid, or past a limit.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise YamlLimitError(
                f"{what} {path} is {size:,} bytes, over the {max_bytes:,}-byte limit for a {what}; "
                "split it or remove what it does not need"
            )
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise YamlLimitError(f"{what} {path} is not UTF-8 text; save it as UTF-8") from None
    except OSError as exc:
        why = exc.strerror or exc
        raise YamlLimitError(f"cannot read {what} {path}: {why}; give a readable file") from None
    return load_yaml_text(text, f"{what} {path}", max_bytes)


def load_yaml_text(text: str, what: str = "YAML", max_bytes: int = MAX_BYTES) -> Any:
    """The data of one YAML document given as text, within the module's limits.

    Raises:
        YamlLimitError: Larger than ``max_bytes``, invalid, or past a node, depth or alias limit.
    """
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise YamlLimitError(f"{what} is over the {max_bytes:,}-byte limit; shorten it")
    try:
        check_bounds(text, what)
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a safe loader, bounded above
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise YamlLimitError(f"{what} is not valid YAML: {problem}{at}; fix its syntax") from None
    except RecursionError:
        raise YamlLimitError(f"{what} nests too deeply to read; flatten it") from None


def check_bounds(text: str, what: str = "YAML") -> None:
    """Refuse a document whose expanded size, depth or aliases pass the limits.

    Walks the event stream once, keeping for every open collection its expanded node count
    and for every finished anchor the size an alias to it adds; stops at the first excess.

    Raises:
        YamlLimitError: Past :data:`MAX_NODES` or :data:`MAX_DEPTH`, or a recursive alias.
        yaml.YAMLError: The text is not valid YAML (the caller words it).
    """
    sizes: dict[str, int] = {}
    stack: list[tuple[str | None, int]] = []  # (anchor, nodes so far) per open collection
    total = 0

    def add(count: int) -> None:
        nonlocal total
        if stack:
            anchor, nodes = stack[-1]
            stack[-1] = (anchor, nodes + count)
        else:
            total += count
        if total + sum(n for _, n in stack) > MAX_NODES:
            raise YamlLimitError(
                f"{what} expands to more than {MAX_NODES:,} nodes (aliases counted in full); "
                "a benchmark or config needs far fewer: remove the nested aliases"
            )

    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.CollectionStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise YamlLimitError(f"{what} nests deeper than {MAX_DEPTH} levels; flatten it")
            stack.append((event.anchor, 1))
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, nodes = stack.pop()
            if anchor:
                sizes[anchor] = nodes
            add(nodes)
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor:
                sizes[event.anchor] = 1
            add(1)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor in {a for a, _ in stack}:
                raise YamlLimitError(f"{what} has a recursive alias *{event.anchor}; remove it")
            add(sizes.get(event.anchor or "", 1))  # an undefined alias fails in the loader, worded there
