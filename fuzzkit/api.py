"""Plain data describing a C API: what header parsing produces and prompts render."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Param:
    """One parameter of a C function."""

    name: str
    type: str

    def render(self) -> str:
        """The parameter as C source text, e.g. ``const char *value``.

        Function pointers and arrays take the name inside the type:
        ``int (*cb)(void *)``, ``char buf[16]``.
        """
        if "(*)" in self.type:
            return self.type.replace("(*)", f"(*{self.name})", 1)
        if self.type.endswith("]") and "[" in self.type:
            base, _, dims = self.type.partition("[")
            return f"{base.rstrip()} {self.name}[{dims}"
        if self.type.endswith("*"):
            return f"{self.type}{self.name}"
        return f"{self.type} {self.name}".strip()


@dataclass(frozen=True)
class FunctionDecl:
    """A C function declaration with normalized type spellings.

    Types are spelled the way clang prints them, with a space before the ``*`` run
    (``const char *``), so prototypes render identically whatever the header's style.
    """

    name: str
    return_type: str
    params: tuple[Param, ...] = field(default_factory=tuple)
    header: str = ""

    def prototype(self) -> str:
        """The declaration as one line of C, e.g. ``acme_node *acme_parse(const char *value);``."""
        args = ", ".join(p.render() for p in self.params) or "void"
        ret = self.return_type if self.return_type.endswith("*") else self.return_type + " "
        return f"{ret}{self.name}({args});"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict in the benchmark YAML's function shape."""
        data = asdict(self)
        data["signature"] = self.prototype().rstrip(";")
        data["params"] = [asdict(p) for p in self.params]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FunctionDecl:
        """Inverse of :meth:`to_dict` (extra keys such as ``signature`` are ignored)."""
        params = tuple(Param(name=p["name"], type=p["type"]) for p in data.get("params", []))
        return cls(
            name=data["name"],
            return_type=data.get("return_type", "void"),
            params=params,
            header=data.get("header", ""),
        )
