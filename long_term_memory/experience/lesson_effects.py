"""What a lesson's change looks like in a harness: whether it is there, and which shown items were used.

"Used" is judged from the harness that was measured, never from a reply's words: a release is
there when its releaser (or a release of every result) is called, a feeder when it is handed
the input, an avoided call when it is absent and the agent said it left it out. Where the
engine that wrote the harness is deterministic (the offline model), it drafts with and without
each lesson and says ``applied [MEM-...] <action>: ...`` only for a lesson whose change made its
harness differ (:func:`applied_note`, :func:`changed_ids`): there, a lesson is used only when it
changed the harness and that change is in the one measured (the counterfactual); for a real
model, presence is all there is.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from fuzzkit.api import FunctionDecl
from fuzzkit.input_flow import EMPTY_GUARD
from long_term_memory.experience.lessons import (
    ACTIONS,
    RELEASE_NAME,
    Action,
    callees_in,
    calls,
    lesson_fits,
    parse_action,
    parse_scope,
    scope_matches,
)

_APPLIED = re.compile(rf"\bapplied \[(MEM-[0-9a-fA-F]{{8}})\] (?:{'|'.join(ACTIONS)})\(")


def applied_note(item_id: str, action: Action, how: str) -> str:
    """The note a deterministic engine writes for a lesson whose change made its harness differ."""
    return f"applied [{item_id}] {action.render()}: {how}"


def changed_ids(text: str, shown_ids: Iterable[str]) -> list[str]:
    """The shown ids a reply says changed its harness (:func:`applied_note`), in shown order."""
    said = {m.group(1).lower() for m in _APPLIED.finditer(text or "")}
    return [i for i in dict.fromkeys(shown_ids) if i.lower() in said]


def effect_present(action: Action | None, code: str, target: FunctionDecl | None = None) -> bool:
    """Whether the harness shows the action's change (what "used" means for an actionable lesson).

    A release names its releaser; in a library without it (a lesson learned on another library),
    the change is every result of ``target`` going to a release function.
    """
    if action is None or not code:
        return False
    a = action.args
    if action.verb == "release_out_param":
        return (re.search(rf"\b{re.escape(a['releaser'])}\s*\(", code) is not None
                or target is not None and results_released(code, target))
    if action.verb == "release_field":
        return re.search(rf"\b{re.escape(a['releaser'])}\s*\(\s*[A-Za-z_]\w*->{re.escape(a['field'])}\s*\)",
                         code) is not None
    if action.verb == "feed_input_via":
        return re.search(rf"\b{re.escape(a['function'])}\s*\([^;]*\bdata\b", code) is not None
    if action.verb == "hold_by_pointer":
        return (re.search(rf"\b{re.escape(a['type'])}\s*\*", code) is not None
                and by_value(code, a["type"]) is None)
    if action.verb == "guard_empty_input":
        return calls(code, a["function"]) and EMPTY_GUARD.search(code) is not None
    if action.verb == "avoid_call":
        return target is not None and target.name != a["function"] and not calls(code, a["function"])
    if action.verb == "keep_result":  # the function is called and nothing releases what it returns
        return calls(code, a["function"]) and not results_released_any(code, a["function"])
    if action.verb == "keep_struct_tag":  # its own keyword (any, for an entry without a kind)
        return re.search(rf"\b{a.get('kind') or '(?:struct|union|enum)'}\s+{re.escape(a['tag'])}\b",
                         code) is not None
    return (re.search(rf"\b{re.escape(a['new'])}\b", code) is not None
            and re.search(rf"\b{re.escape(a['old'])}\b", code) is None)


def written_names(action: Action) -> tuple[str, ...]:
    """The names the action's change writes into a harness (where a compile error it caused points).

    An ``avoid_call`` writes nothing, and an empty-input guard writes no name of the library.
    """
    a = action.args
    return {"keep_struct_tag": (a.get("tag", ""),), "hold_by_pointer": (a.get("type", ""),),
            "apply_fixit": (a.get("new", ""),), "release_out_param": (a.get("releaser", ""),),
            "release_field": (a.get("releaser", ""),),
            "feed_input_via": (a.get("function", ""),)}.get(action.verb, ())


def breaks_build(action: Action | None, code: str, error_lines: Iterable[int],
                 target: FunctionDecl | None = None) -> bool:
    """Whether a failed build failed on the action's change.

    The change is in ``code`` (:func:`effect_present`) and a line the compiler rejected
    (``error_lines``, 1-based, in the harness) writes a name the change writes.
    """
    if action is None or not effect_present(action, code, target):
        return False
    names = [re.compile(rf"\b{re.escape(n)}\b") for n in written_names(action) if n]
    lines = code.splitlines()
    return any(0 < n <= len(lines) and any(p.search(lines[n - 1]) for p in names) for n in set(error_lines))


def result_variables(code: str, function: FunctionDecl) -> set[str]:
    """The variables calls of ``function`` hand results back in.

    ``v = f(...)`` when it returns a pointer, and ``f(..., &v)`` for its ``T **`` parameters.
    """
    held: set[str] = set()
    outs = [i for i, p in enumerate(function.params) if p.type.count("*") == 2]
    for call in re.finditer(rf"(?:\b([A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?)?\b{re.escape(function.name)}"
                            r"\s*\(([^;]*)\)\s*;", code):
        if call.group(1) and "*" in function.return_type:
            held.add(call.group(1))
        args = [a.strip() for a in call.group(2).split(",")]
        held.update(m.group(1) for i in outs if i < len(args)
                    and (m := re.fullmatch(r"(?:\([^()]*\)\s*)?&\s*([A-Za-z_]\w*)", args[i])))
    return held


def results_released(code: str, function: FunctionDecl, releaser: str = "") -> bool:
    """Whether every result ``function`` hands back goes to ``releaser`` (any release function if '')."""
    held = result_variables(code, function)
    call = re.escape(releaser) if releaser else RELEASE_NAME
    return bool(held) and all(
        re.search(rf"\b{call}\s*\(\s*(?:\([^()]*\)\s*)?{re.escape(v)}\s*\)", code, re.I) for v in held)


def results_released_any(code: str, function: str) -> bool:
    """Whether a release function is called on a variable that a call of ``function`` was assigned to."""
    held = re.findall(rf"\b([A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?\b{re.escape(function)}\s*\(", code)
    return any(re.search(rf"\b{RELEASE_NAME}\s*\(\s*(?:\([^()]*\)\s*)?{re.escape(v)}\s*\)", code, re.I)
               for v in dict.fromkeys(held))


def by_value(code: str, ctype: str) -> re.Match[str] | None:
    """The first declaration of a variable of type ``ctype`` by value (group 1: its name)."""
    return re.search(rf"(?m)^[ \t]*(?:const\s+)?(?:(?:struct|union)\s+)?{re.escape(ctype)}\s+([A-Za-z_]\w*)"
                     r"\s*(?:=[^;]*)?;", code)


def used_items(shown: Sequence[Any], cited: Iterable[str], target: FunctionDecl | None,
               harness: str, api: Iterable[FunctionDecl] = (),
               changed: Collection[str] | None = None) -> list[str]:
    """Ids of the shown items that were used in the harness that was measured.

    An actionable item is used when it fits the harness (:func:`lesson_fits`, with the ``api``
    functions the harness calls) and its action's effect is in ``harness``; citing it changes
    nothing. An ``avoid_call`` is the absence of a call, which most harnesses show anyway: it
    counts only when the agent also says it left the call out (cites it). With ``changed`` (the
    ids a deterministic engine's counterfactual said changed a harness), an actionable item also
    counts only when it is among them: a change the draft had anyway is not the lesson's. An
    item without an action counts as used when the reply cited it (the only evidence there is).
    """
    api = list(api)
    callees = callees_in(harness, api, target)
    cited_ids = set(cited)
    out = []
    for item in shown:
        lesson = getattr(item, "lesson", None) or {}
        action = parse_action(lesson.get("action"))
        if action is not None and changed is not None and item.item_id not in changed:
            continue
        if action is None or action.verb == "avoid_call":
            if item.item_id not in cited_ids:
                continue
        if action is None or (lesson_fits(lesson, target, callees, api, could_add=False)
                              and _effect_where_it_fits(action, lesson, harness, target, callees, api)):
            out.append(item.item_id)
    return list(dict.fromkeys(out))


def _effect_where_it_fits(action: Action, lesson: dict[str, Any], harness: str, target: FunctionDecl | None,
                          callees: Sequence[FunctionDecl], api: Sequence[FunctionDecl]) -> bool:
    """Whether the action's change is there, on the function the lesson fits.

    A release of returned pointers fitted by another call the harness makes counts only when that
    call's results are released (the releaser called for something else is not this lesson's change).
    """
    scope = parse_scope(lesson.get("scope"))
    if action.verb != "release_out_param" or scope is None or scope.shape != "returns_pointer" \
            or scope_matches(scope, target):  # (a record's field release is the releaser's call)
        return effect_present(action, harness, target)
    releaser = action.args["releaser"] if any(f.name == action.args["releaser"] for f in api) else ""
    return any(results_released(harness, c, releaser) for c in callees if scope_matches(scope, c))
