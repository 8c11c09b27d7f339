"""The three memory modes and what each allows.

``baseline``: no retrieval, no writes. ``retrieve-extract``: retrieve, then write hits,
validations and new records. ``retrieve-only``: retrieve, never write. Only
``retrieve-extract`` may change a bank; the other two leave every bank file byte-identical.
"""

from __future__ import annotations

from long_term_memory.memory_modes import MODES


def check_mode(mode: str) -> str:
    """``mode`` itself when it is valid.

    Raises:
        ValueError: ``mode`` is not one of the three.
    """
    if mode not in MODES:
        raise ValueError(f"memory mode {mode!r} is not one of {', '.join(MODES)}")
    return mode


def mode_allows_retrieval(mode: str) -> bool:
    """True when experience is retrieved and shown to the agents."""
    return check_mode(mode) != "baseline"


def mode_allows_writes(mode: str) -> bool:
    """True when the run may write to the bank (hits, validations, new records)."""
    return check_mode(mode) == "retrieve-extract"
