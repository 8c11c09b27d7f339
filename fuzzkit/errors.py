"""The one exception type the toolchain raises for problems a user can fix."""

from __future__ import annotations

import re

# A build tool's own statement of what stopped it (CMake puts its text on the lines after).
BUILD_CAUSE = re.compile(r"CMake Error|Could NOT find|configure: error:|\berror:|"
                         r"Package '[^']+'.* not found", re.I)


def build_failure(output: str, keep: int = 15) -> str:
    """A failed build step's last ``keep`` lines, after its first error where that came earlier."""
    lines = output.strip().splitlines()
    tail = lines[-keep:]
    first = next((i for i, line in enumerate(lines) if BUILD_CAUSE.search(line)), len(lines))
    if first < len(lines) - keep:
        tail = [*lines[first:first + 4], "...", *tail]
    return "\n".join(tail)


class ToolchainError(Exception):
    """A toolchain step failed for a reason the user can act on.

    Attributes:
        message: What went wrong.
        hint: What the user should do about it (may be empty).
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\nhint: {self.hint}"
        return self.message
