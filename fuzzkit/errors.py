"""The one exception type the toolchain raises for problems a user can fix."""

from __future__ import annotations


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
