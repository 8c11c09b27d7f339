"""Actionable lessons from a trajectory's repairs: scope, failure signature and action.

The offline extractor reads the trajectory's steps from its facts block
(:mod:`long_term_memory.experience.trajectory_steps`): the repairs it recorded (the builder's
``repair`` and ``misuse`` steps, and the rules the enhancer's fixes state as data in ``harness``
and ``fix`` steps: :class:`fuzzkit.guidance_facts.Rule`), the failure that called for them (a
compiler error class, a sanitizer kind and frame, input that never reached the target) and the
final harness, and turns each repair it recognizes into an item whose action the offline engine
can apply to the next target of the same family (see :mod:`agents.offline.lesson_apply`). It
reads no sentence a model or the fixer wrote: rewording a fix changes no lesson, and a fix that
states no rule teaches none. Deterministic; names no library.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agents.offline.cdecl import parse_prototype
from agents.offline.lesson_guards import empty_input_items, fixed_by, through
from agents.offline.lesson_guards import item as _item
from agents.offline.synth_finders import words
from fuzzkit.api import FunctionDecl
from fuzzkit.guidance_facts import Rule
from fuzzkit.vocabulary import words_of
from long_term_memory.experience.lessons import name_family, shape_of, type_name
from long_term_memory.experience.trajectory_steps import (
    BuildStep,
    CrashStep,
    DirectionStep,
    DroppedStep,
    FinalCrashStep,
    FixStep,
    HarnessStep,
    MisuseStep,
    RepairStep,
    RevertStep,
    RunStep,
    Step,
    StopStep,
    is_token,
)


def _stated(steps: Sequence[Step], kind: str) -> list[Rule]:
    """The rules of ``kind`` the trajectory's harness versions and session memory's fixes state."""
    return [rule for step in steps if isinstance(step, HarnessStep | FixStep) for rule in step.rules
            if rule.kind == kind]


def _leaked(steps: Sequence[Step]) -> bool:
    """Whether a crash of the trajectory was a leak (its kind, or LeakSanitizer's own report)."""
    kinds = [s.kind for s in steps if isinstance(s, CrashStep | FinalCrashStep) and is_token(s.kind)]
    reports = [s.summary or "" for s in steps if isinstance(s, FinalCrashStep)]
    reports += [s.errors for s in steps if isinstance(s, BuildStep)]
    return "leak" in " ".join(kinds) or any("LeakSanitizer" in r for r in reports)


def _decl(prototype: str) -> FunctionDecl | None:
    try:
        decl = parse_prototype(prototype)
    except (ValueError, IndexError):
        return None
    return decl if decl.name else None


def _declared_type(code: str, var: str) -> str:
    """The named type of ``T *var`` as the harness declares it ('' when not found)."""
    found = re.search(rf"(?:\b(?:struct|union|enum)\s+)?\b([A-Za-z_]\w*)\s*\*+\s*{re.escape(var)}\b", code)
    return found.group(1) if found else ""


def _release_items(steps: Sequence[Step], code: str) -> list[dict[str, Any]]:
    out = []
    leak = _leaked(steps)
    for var, producer, releaser in dict.fromkeys((r.var, r.producer, r.name)
                                                 for r in _stated(steps, "release_result")):
        ctype = _declared_type(code, var)
        if not ctype:
            continue
        out_param = re.search(rf"\b{re.escape(producer)}\s*\([^;]*&\s*{re.escape(var)}\b", code)
        shape = "out_param" if out_param else "returns_pointer"
        how = f"through a `{ctype} **` out-parameter" if out_param else f"as a returned `{ctype} *`"
        out.append(_item(
            f"Release {ctype} results with {releaser}",
            f"Functions that hand back a {ctype} {how} the caller owns.",
            f"{producer} hands back a {ctype} {how} that the harness owns"
            + (": the fuzz run reported a leak (LeakSanitizer) until it was released" if leak else "")
            + f". Release it with {releaser}({var}) before returning, on every path; in a library "
            f"without {releaser}, with the function its header names for releasing a {ctype}.",
            {"shape": shape, "type": ctype},
            f"sanitizer:leak@{producer}", f"release_out_param(type={ctype}, releaser={releaser})",
        ))
    return out


def _repaired_items(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """An improvement's call whose returned pointer leaked, kept and released (``[repair]`` steps).

    The lesson is about every function of the library returning that type, not the one call:
    ``ur_build`` leaked its ``ur_char *``, so ``ur_escape``'s result is released too when a later
    harness adds it, and the leak is not found again one call at a time. A repair whose version
    then crashed taught nothing to copy (a release of what the object still owned crashes as a
    use-after-free), nor a release of what a ``[misuse]`` step says the harness must keep.
    """
    out, seen = [], set()
    kept = {s.function for s in steps if isinstance(s, MisuseStep)}
    for step in _repairs(steps, field=False):
        producer, ctype, releaser = step.function, step.type, step.releaser
        named = type_name(ctype)
        if not named or named == "void" or "*" not in ctype or (named, releaser) in seen:
            continue
        if producer in kept or _crashed(steps, step.next_version):
            continue
        seen.add((named, releaser))
        out.append(_item(
            f"Release {named} * results with {releaser}",
            f"Functions of the library that return a {ctype} the caller owns.",
            f"{producer} returned a {ctype} that a harness kept without releasing it: the fuzz run "
            f"reported a leak (LeakSanitizer) allocated under {producer}, and releasing the result with "
            f"{releaser} after the call fixed it. Release what the library's functions return as "
            f"{ctype} with {releaser} right after using it, in the block that called them.",
            {"shape": "returns_pointer", "type": named},
            f"sanitizer:leak@{producer}", f"release_out_param(type={named}, releaser={releaser})",
        ))
    return out


def _repairs(steps: Sequence[Step], field: bool) -> list[RepairStep]:
    """The ``[repair]`` steps of one kind (a result, or what a call left in a field) of both versions."""
    return [s for s in steps if isinstance(s, RepairStep) and bool(s.field) == field
            and s.version is not None and s.next_version is not None and ")" not in s.type]


def _crashed(steps: Sequence[Step], version: int | None) -> bool:
    """Whether the trajectory's run of harness ``v<version>`` crashed."""
    return any(isinstance(s, RunStep) and s.version == version and s.crashed for s in steps)


def _kept_items(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """``keep_result(F)`` for each result a harness released though its object owned it (``[misuse]``)."""
    out = []
    owned = [(s.function, s.releaser, s.kind) for s in steps if isinstance(s, MisuseStep)]
    for function, releaser, kind in dict.fromkeys(owned):
        out.append(_item(
            f"What {function} returns stays its object's: never release it",
            f"Harnesses of the library that call {function} or a function named like it but for one word, "
            f"on the same object.",
            f"A harness released what {function} returned with {releaser}; the fuzz run reported a {kind}: "
            f"the block was still held by the object {function} was called on, which released it again. "
            f"Keep what {function} (and a function working the same object into the same type, named "
            f"alike but for one word) returns without releasing it: releasing the object releases it.",
            {"name": function}, f"sanitizer:{kind}@{function}", f"keep_result({function})",
        ))
    return out


def _repaired_field_items(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """A call that left what it made in a field of its object, released after the call (``[repair]``).

    The lesson covers the function and those with its signature (another parse of the same
    context leaves its document in the same field), in later harnesses of the library.
    """
    out, seen = [], set()
    found = [(s.maker, s.field, s.function, s.holder, s.releaser) for s in _repairs(steps, field=True)]
    for maker, fld, function, holder, releaser in dict.fromkeys(found):
        held = type_name(holder)
        if not held or (fld, releaser) in seen:  # a second parse of the same context: one lesson
            continue
        seen.add((fld, releaser))
        out.append(_item(
            f"Release the {fld} field {function} fills with {releaser}",
            f"{function} and the functions with its signature, called on a {holder}.",
            f"{function} left what {maker} made in the {fld} field of its {holder}, and releasing the "
            f"object does not release it: the fuzz run reported a leak (LeakSanitizer) allocated in "
            f"{maker}. After each call of {function}, or of a function with the same signature, release "
            f"that field with {releaser} and set it to NULL.",
            {"name": function, "type": held}, f"sanitizer:leak@{maker}",
            f"release_field(function={function}, holder={held}, field={fld}, releaser={releaser})",
        ))
    return out


def _field_release_items(steps: Sequence[Step], code: str) -> list[dict[str, Any]]:
    """A record passed by pointer that came back holding an owned buffer in a field."""
    out = []
    for var, fld, producer, releaser in dict.fromkeys((r.var, r.field, r.producer, r.name)
                                                      for r in _stated(steps, "release_field")):
        found = re.search(rf"\b(?:struct\s+)?([A-Za-z_]\w*)\s+{re.escape(var)}\s*[;=]", code)
        if not found:
            continue
        record = found.group(1)
        out.append(_item(
            f"Release what {producer} leaves in a {record}'s {fld}",
            f"Functions that fill a {record} passed by pointer with buffers the caller owns.",
            f"{producer} fills {var}.{fld} with a buffer the harness owns: the fuzz run reported a "
            f"leak until {releaser}(&{var}.{fld}) ran before returning. Release the buffers such a "
            f"function leaves in a {record} with the function the header names for them.",
            {"shape": "object_param", "type": record},
            f"sanitizer:leak@{producer}", f"release_out_param(type={record}, releaser={releaser})",
        ))
    return out


def _fed_and_crashed(steps: Sequence[Step], feeder: str) -> bool:
    """Whether the harness version that fed the input through ``feeder`` crashed when run."""
    fed = next((s for s in steps if isinstance(s, HarnessStep) and s.version is not None
                and any(r.kind == "feed_input" and r.name == feeder for r in s.rules)), None)
    ran = fed and next((s for s in steps if isinstance(s, RunStep) and s.version == fed.version), None)
    return bool(ran and ran.crashed)


def _feed_items(steps: Sequence[Step], target: FunctionDecl | None) -> list[dict[str, Any]]:
    out = []
    for function, feeder in dict.fromkeys((r.then, r.name) for r in _stated(steps, "feed_input")):
        if _fed_and_crashed(steps, feeder):
            continue  # what the feeder did with the input crashed: no lesson to copy it
        family = name_family(function)
        shape = "object_param" if target is None or "object_param" in shape_of(target) else ""
        out.append(_item(
            f"Feed the input with {feeder} before calling {family} functions",
            f"Functions matching {family} that work on an object the input must be attached to.",
            f"The harness ran but the fuzz input never reached {function}: its object had no input. "
            f"Call {feeder}(obj, data, size) on the object before the call.",
            {"name": family, "shape": shape}, "input-not-reaching-target", f"feed_input_via({feeder})",
        ))
    return out


def _compile_items(steps: Sequence[Step], target: FunctionDecl | None) -> list[dict[str, Any]]:
    out = []
    for kind, tag in dict.fromkeys((r.then, r.name) for r in _stated(steps, "keep_tag")):
        out.append(_item(
            f"{tag} is a {kind} tag, not a typedef",
            f"Any harness that declares a {tag}.",
            f"The build failed with \"must use '{kind}' tag to refer to type '{tag}'\": the header "
            f"declares {kind} {tag} without a typedef. Write `{kind} {tag}` in declarations, casts, sizeof.",
            {"type": tag}, "compile:must-use-tag", f"keep_struct_tag(tag={tag}, kind={kind})",
        ))
    family = name_family(target.name) if target else ""
    for ctype in dict.fromkeys(r.name for r in _stated(steps, "opaque")) if family else ():
        name = ctype.split()[-1]
        out.append(_item(
            f"{name} is opaque: hold it through a pointer",
            f"Harnesses for functions matching {family}.",
            f"The build failed with \"variable has incomplete type '{ctype}'\": the header only "
            f"declares {ctype}. Declare `{ctype} *v` (from its constructor, or NULL when there is "
            f"none) and pass `v`, never a `{ctype}` by value or `&v`.",
            {"name": family}, "compile:incomplete-type", f"hold_by_pointer({name})",
        ))
    for old, new in dict.fromkeys((r.name, r.then) for r in _stated(steps, "rename") if r.fixit):
        if not family:
            break
        out.append(_item(
            f"{old} is spelled {new}",
            f"Harnesses for functions matching {family}.",
            f"The build failed because {old} is not declared; clang suggested {new}, and that built. "
            f"Write {new}.",
            {"name": family}, "compile:undeclared-identifier", f"apply_fixit(old={old}, new={new})",
        ))
    return out


def _dropped_calls(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """``(kind, function)`` for each call that crashed by misuse and was never repaired.

    Either an improvement was dropped after crashing through a call it added (the steps read
    ``[harness] vN by enhancer.improve: ... (adds calls to F, G)``, ``[crash] KIND at WHERE
    through F``, a misuse verdict, ``[revert] vN did not run cleanly``; when only F's block was
    dropped, ``(vM has the others)`` says which version carries the rest), or the repairs of a
    harness that crashed through ``F`` gave up (``[stop] crash caused by the harness; ... gave up``),
    or the repair of a crashed run left a call out (its ``avoid`` rule: a follow-up call that
    crashed after the target): every harness of the library adds the same follow-ups on its
    objects. A direction the run's local memory lists as failed for a misuse crash counts too,
    through the calls its dropped block added (its ``calls``): a long trajectory keeps its end,
    where those steps are, and may leave out the steps of the block it dropped.
    """
    out: list[tuple[str, str]] = []
    added: dict[int, set[str]] = {}
    crash: tuple[str, str] = ("", "")
    after_crash = False  # the last build or run before this step: a run that crashed
    for step in steps:
        if isinstance(step, BuildStep | RunStep):
            after_crash = isinstance(step, RunStep) and step.crashed
        if isinstance(step, HarnessStep) and step.by_role("enhancer.improve") and step.added_calls \
                and step.version is not None:
            added[step.version] = set(step.added_calls)
            crash = ("", "")
        elif crashed := through(step):
            crash = crashed
        elif (version := _reverted(step)) is not None:
            if crash[1] in added.get(version, ()):
                out.append(crash)
            crash = ("", "")
            if isinstance(step, DroppedStep) and step.next_version is not None:
                # a block dropped: the next version has the other calls
                added[step.next_version] = added.get(version, set())
        elif isinstance(step, StopStep) and step.gave_up and crash[1]:
            out.append(crash)
        elif after_crash and (left := fixed_by(step, "avoid")):
            out += [(crash[0] or "crash", rule.name) for rule in left]
        elif (isinstance(step, DirectionStep) and step.misuse_crash and str(step.outcome) == "Failed"
              and step.calls and step.calls[0] not in {f for _, f in out}):
            out.append(("crash", step.calls[0]))
    return list(dict.fromkeys(out))


def _reverted(step: Step) -> int | None:
    """The version a step gives up because it did not run cleanly (all of it, or one of its blocks)."""
    if isinstance(step, DroppedStep) or (isinstance(step, RevertStep) and step.run_failed):
        return step.version
    return None


def _avoid_items(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """Tried and failed: a call crashed by misuse and was dropped, or its repairs gave up.

    A leak through ``F`` of what ``G`` allocated also leaves out ``G``: a harness that calls ``G``
    itself leaks the same block (the lesson is shown only where ``G`` is a library function).
    """
    out = []
    dropped = _dropped_calls(steps)
    makers = {s.entry: s.allocated_in for s in steps if isinstance(s, CrashStep) and s.kind == "leak"
              and s.entry and s.allocated_in}
    # the allocator first: several calls may leak its block, and items are capped at three
    dropped = [*(("leak", makers[f]) for kind, f in dropped if kind == "leak" and f in makers), *dropped]
    for kind, function in dict.fromkeys(dropped):
        if kind == "leak" and set(words(function)) & words_of("make"):
            continue  # what a constructor made was not released: avoiding the constructor leaves a worse way
        out.append(_item(
            f"Calling {function} crashed ({kind}) and no repair fixed it",
            f"Harnesses of the library that could add a call to {function}.",
            f"A harness called {function}; the fuzz run reported a {kind} through {function}, "
            f"judged a harness misuse, and the call was dropped or its repairs gave up. Tried and "
            f"failed: do not add {function} to another harness of this library, nor a function with "
            f"its parameter and return types whose name shares a word with it, unless how to set "
            f"up its arguments and release what it hands back is known.",
            {"name": function}, f"sanitizer:{kind}@{function}", f"avoid_call({function})",
        ))
    return out


def actionable_items(prototype: str, steps: Sequence[Step], code: str) -> list[dict[str, Any]]:
    """Items with a scope, a failure signature and an action, one per recognized repair or dropped call.

    ``steps`` are the trajectory's steps as its facts block carries them
    (:class:`long_term_memory.experience.trajectory_steps.TrajectoryFacts`).
    """
    target = _decl(prototype)
    return [*_kept_items(steps), *_release_items(steps, code), *_repaired_items(steps),
            *_repaired_field_items(steps), *_field_release_items(steps, code),
            *_feed_items(steps, target),
            *_compile_items(steps, target), *empty_input_items(steps), *_avoid_items(steps)]
