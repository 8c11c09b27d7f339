"""Actionable lessons from a MaTTS contrast: what the harness that got further did differently.

Several attempts (or refinement rounds) at one target end at different stages. When one
harness did not build and another did, or one built but did not run cleanly and another ran,
the code change between the two is the lesson, read from the two harnesses (measured facts,
whatever model wrote them), as one of the actions of :mod:`long_term_memory.experience.lessons`:

- built: a tag written with its keyword (``keep_struct_tag``), a by-value variable held through a
  pointer (``hold_by_pointer``), one name respelled on an otherwise equal line (``apply_fixit``);
- ran: a result released (``release_out_param``, ``release_field``), the input handed to a
  function that takes ``data`` (``feed_input_via``), an early return on the empty input
  (``guard_empty_input``), a call the crash went through left out (``avoid_call``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from fuzzkit.api import FunctionDecl
from fuzzkit.input_flow import EMPTY_GUARD
from fuzzkit.vocabulary import c_words
from long_term_memory.experience.lesson_effects import by_value
from long_term_memory.experience.lessons import RELEASE_NAME, calls, name_family
from long_term_memory.experience.models import MemoryItem
from long_term_memory.experience.trajectory import Trajectory
from long_term_memory.experience.trajectory_steps import CrashStep, is_token

_TAGGED = re.compile(r"\b(struct|union|enum)\s+([A-Za-z_]\w*)")
_DECL = re.compile(r"(?m)^[ \t]*(?:const\s+)?([A-Za-z_]\w*)\s+[A-Za-z_]\w*\s*(?:=[^;]*)?;")
_NOT_TYPES = c_words("statement", "type", "sign", "tag") | {
    "size_t", "uint8_t", "int8_t", "uint16_t", "int16_t", "uint32_t", "int32_t", "uint64_t", "int64_t",
    "ssize_t"}
_IDENT = re.compile(r"[A-Za-z_]\w*")
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_RELEASE = re.compile(rf"\b({RELEASE_NAME})\s*\(\s*([A-Za-z_]\w*)\s*\)", re.I)
_FIELD_RELEASE = re.compile(rf"\b({RELEASE_NAME})\s*\(\s*([A-Za-z_]\w*)->([A-Za-z_]\w*)\s*\)", re.I)
_KEYWORDS = c_words("statement") | {"LLVMFuzzerTestOneInput"}


def _item(title: str, content: str, scope: dict[str, str], failure: str, action: str) -> MemoryItem:
    return MemoryItem.model_validate({
        "title": title[:120], "description": "Learned by contrast: one attempt at the target got "
        "further than another, and this is the change between their harnesses.", "content": content[:2000],
        "scope": {k: v for k, v in scope.items() if v}, "failure": failure, "action": action})


def _tag_items(failing: str, passing: str) -> list[MemoryItem]:
    had = set(_TAGGED.findall(failing))
    out = []
    for kind, tag in dict.fromkeys(_TAGGED.findall(passing)):
        bare = re.search(rf"(?<![\w.>])(?<!struct )(?<!union )(?<!enum )\b{re.escape(tag)}\b"
                         r"(?=\s*[*)A-Za-z_])", failing)
        if (kind, tag) not in had and bare:
            out.append(_item(f"{tag} is a {kind} tag, not a typedef",
                             f"The harness that wrote `{tag}` bare did not build; the one that wrote "
                             f"`{kind} {tag}` did.", {"type": tag}, "compile:must-use-tag",
                             f"keep_struct_tag(tag={tag}, kind={kind})"))
    return out


def _pointer_items(failing: str, passing: str, family: str) -> list[MemoryItem]:
    out = []
    for ctype in dict.fromkeys(t for t in _DECL.findall(failing) if t not in _NOT_TYPES):
        if by_value(failing, ctype) and not by_value(passing, ctype) and re.search(
                rf"\b{re.escape(ctype)}\s*\*", passing):
            out.append(_item(f"{ctype} is opaque: hold it through a pointer",
                             f"The harness that declared a {ctype} by value did not build; the one "
                             f"that held a `{ctype} *` did.", {"name": family}, "compile:incomplete-type",
                             f"hold_by_pointer({ctype})"))
    return out


def _respelled(failing: str, passing: str) -> list[tuple[str, str]]:
    """``(old, new)`` for each line pair that differs in one name only."""
    a, b = failing.splitlines(), passing.splitlines()
    found = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "replace" or i2 - i1 != j2 - j1:
            continue
        for old_line, new_line in zip(a[i1:i2], b[j1:j2], strict=True):
            old, new = _IDENT.findall(old_line), _IDENT.findall(new_line)
            diff = [(x, y) for x, y in zip(old, new, strict=False) if x != y]
            if len(old) == len(new) and len(diff) == 1 and not re.search(rf"\b{diff[0][0]}\b", passing):
                found.append(diff[0])
    return list(dict.fromkeys(found))


def _fixit_items(failing: str, passing: str, family: str) -> list[MemoryItem]:
    return [_item(f"{old} is spelled {new}", f"The harness that wrote {old} did not build; the one that "
                  f"wrote {new} did.", {"name": family}, "compile:undeclared-identifier",
                  f"apply_fixit(old={old}, new={new})") for old, new in _respelled(failing, passing)]


def _declared(code: str, var: str) -> str:
    found = re.search(rf"(?:\b(?:struct|union|enum)\s+)?\b([A-Za-z_]\w*)\s*\*+\s*{re.escape(var)}\b", code)
    return found.group(1) if found else ""


def _maker(code: str, var: str) -> tuple[str, str]:
    """``(function, shape)``: the call that hands ``var`` back (``v = f(...)`` or ``f(..., &v)``)."""
    found = re.search(rf"\b{re.escape(var)}\s*=\s*(?:\([^()]*\)\s*)?([A-Za-z_]\w*)\s*\(", code)
    if found and found.group(1) not in _KEYWORDS:
        return found.group(1), "returns_pointer"
    found = re.search(rf"\b([A-Za-z_]\w*)\s*\([^;]*&\s*{re.escape(var)}\b", code)
    return (found.group(1), "out_param") if found and found.group(1) not in _KEYWORDS else ("", "")


def _release_items(failing: str, passing: str) -> list[MemoryItem]:
    had = {(r, v) for r, v in _RELEASE.findall(failing)}
    out = []
    for releaser, var in dict.fromkeys(_RELEASE.findall(passing)):
        maker, shape = _maker(passing, var)
        ctype = _declared(passing, var)
        if (releaser, var) in had or not maker or not ctype or maker == releaser:
            continue
        out.append(_item(f"Release what {maker} hands back with {releaser}",
                         f"The harness that never released {var} (a {ctype} from {maker}) did not run "
                         f"cleanly; the one that released it with {releaser} ran.",
                         {"shape": shape, "type": ctype}, f"sanitizer:leak@{maker}",
                         f"release_out_param(type={ctype}, releaser={releaser})"))
    return out


def _field_items(failing: str, passing: str) -> list[MemoryItem]:
    had = set(_FIELD_RELEASE.findall(failing))
    out = []
    for found in _FIELD_RELEASE.finditer(passing):
        releaser, holder_var, field = found.groups()
        holder = _declared(passing, holder_var)
        before = [m.group(1) for m in re.finditer(rf"\b([A-Za-z_]\w*)\s*\([^;]*\b{re.escape(holder_var)}\b",
                                                  passing[:found.start()]) if m.group(1) not in _KEYWORDS]
        maker = next((f for f in reversed(before) if not re.fullmatch(RELEASE_NAME, f, re.I)), "")
        if found.groups() in had or not holder or not maker:
            continue
        out.append(_item(f"Release the {field} field {maker} fills with {releaser}",
                         f"The harness that left {holder_var}->{field} after {maker} did not run cleanly; "
                         f"the one that released it with {releaser} ran.", {"name": maker, "type": holder},
                         f"sanitizer:leak@{maker}",
                         f"release_field(function={maker}, holder={holder}, field={field}, "
                         f"releaser={releaser})"))
    return out


def _run_items(failing: Trajectory, passing: Trajectory, target: FunctionDecl | None) -> list[MemoryItem]:
    """Feeding, the empty-input guard, and a call the failing harness crashed through left out."""
    a, b, out = failing.harness, passing.harness, []
    name = target.name if target else ""
    for function in dict.fromkeys(_CALLED.findall(b)):
        fed = re.search(rf"\b{re.escape(function)}\s*\([^;]*\bdata\b", b)
        if function not in (name, *_KEYWORDS) and fed and not calls(a, function) and name:
            out.append(_item(f"Feed the input with {function} before calling {name_family(name)} functions",
                             f"The harness without {function} did not get the input to {name}; the one "
                             f"that handed `data` to {function} ran.", {"name": name_family(name)},
                             "input-not-reaching-target", f"feed_input_via({function})"))
    if name and EMPTY_GUARD.search(b) and not EMPTY_GUARD.search(a):
        out.append(_item(f"{name} fails on the empty input: return early on it",
                         "The harness that called it on zero bytes crashed; the one that returned early ran.",
                         {"name": name}, f"empty-input@{name}", f"guard_empty_input({name})"))
    for crash in (s for s in failing.steps if isinstance(s, CrashStep) and is_token(s.kind)):
        function = crash.entry
        if function and function != name and calls(a, function) and not calls(b, function):
            out.append(_item(f"Calling {function} crashed ({crash.kind}); the harness without it ran",
                             f"Tried and failed: the harness that called {function} crashed through it; "
                             f"the one without it ran. Do not add {function}.", {"name": function},
                             f"sanitizer:{crash.kind}@{function}", f"avoid_call({function})"))
    return out


def contrast_items(trajectories: Sequence[Trajectory],
                   target: FunctionDecl | None = None) -> list[MemoryItem]:
    """Actionable lessons from the code changes between attempts that ended at different stages.

    A harness that did not build is compared with one that built (compile lessons); one that built
    but did not run cleanly with one that ran (release, feeding, guard, left-out call). Each action
    once, the first contrast first.
    """
    family = name_family(target.name) if target else ""
    items: dict[str, MemoryItem] = {}
    for fail in trajectories:
        for win in trajectories:
            o, p = fail.outcome, win.outcome
            if not fail.harness or not win.harness:
                continue
            found: list[MemoryItem] = []
            if not o.compiles and p.compiles:
                found += _tag_items(fail.harness, win.harness)
                found += _pointer_items(fail.harness, win.harness, family) if family else []
                found += _fixit_items(fail.harness, win.harness, family) if family else []
            elif o.compiles and not o.runs and p.runs:
                found += _release_items(fail.harness, win.harness) + _field_items(fail.harness, win.harness)
                found += _run_items(fail, win, target)
            for item in found:
                items.setdefault(item.action, item)
    return list(items.values())


def with_contrast(contrast: Sequence[MemoryItem], extracted: Sequence[MemoryItem]) -> list[MemoryItem]:
    """The contrast's actionable items first, then the extracted ones whose action they do not repeat."""
    actions = {i.action for i in contrast}
    return [*contrast, *(i for i in extracted if not i.action or i.action not in actions)]
