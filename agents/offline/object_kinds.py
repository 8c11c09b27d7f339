r"""A call given an object of another kind than its documentation asserts.

``\assert object->type == X_TYPE_COMMENT`` in a function's comment says which kind of object it
accepts (:mod:`fuzzkit.doc_conditions`; the crash report carries the conditions of the functions
the harness calls). A harness that never names that kind (it made the object from a type drawn
from the input, or of another kind) cannot have made sure of it: a crash inside that call is the
harness's misuse, and the repair checks the condition on the harness's argument before the call.
A harness that names the kind (it made the object so, or checks it) is past this rule.
"""

from __future__ import annotations

import re

from fuzzkit.api import FunctionDecl
from fuzzkit.crash_facts import CrashFacts
from fuzzkit.doc_conditions import field_conditions

# Kinds of crash that say nothing about the arguments of a call (a leak, a time or memory limit).
_NOT_A_CALL = ("leak", "timeout", "out-of-memory", "oom")


def unmet_kinds(harness: str, report: CrashFacts, decl: FunctionDecl | None) -> list[str]:
    """The documented object-kind conditions of the crashed call the harness never names."""
    if decl is None or decl.name != report.entry_function or report.kind in _NOT_A_CALL:
        return []
    conditions = report.conditions.get(decl.name, [])
    kinds = field_conditions(conditions, [p.name for p in decl.params if p.name])
    unmet = {const for _param, _field, const in kinds if not re.search(rf"\b{const}\b", harness)}
    return [c for c in conditions if any(re.search(rf"\b{k}\b", c) for k in unmet)]


def wrong_kind_reason(decl: FunctionDecl, unmet: list[str]) -> str:
    """The verdict's sentence for :func:`unmet_kinds`."""
    return (f"{decl.name} is documented to take only an object for which `{unmet[0]}` holds (its "
            "documentation asserts it), and the harness never makes sure of that (it names no such "
            "kind): the call was given an object it does not accept, the harness's misuse.")
