"""Each lesson judged by its own failure: the stage where that failure shows, and whether it showed.

A lesson's failure signature names a class of failure, and so the stage of a target's run where
it would show: ``compile:<class>`` at the build, ``sanitizer:<kind>@<function>``,
``empty-input@<function>`` and ``input-not-reaching-target`` at the fuzz run, ``plateau`` when the
coverage iterations end. The build and execution nodes record what each harness version showed
(an *observation*, plain data in the state) and which shown lessons had their change in it. A
lesson applied to a version whose stage was reached gets, from that version:

- ``fail``: its own failure showed there (or its change broke the build);
- ``pass``: the stage was reached and its failure did not show;
- nothing: the stage failed for another reason (another compile error, another crash), or the
  version never reached it.

Its verdict for the target is ``fail`` if any version failed it, else ``pass`` if any passed it,
else none: no validation, no trust change. An action whose signature cannot be read is judged
by the signature its verb prevents (:data:`VERB_FAILURE`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fuzzkit.api import FunctionDecl
from long_term_memory.experience.lessons import Action, parse_action, parse_scope, scope_matches

STAGES = ("compile", "run", "coverage")
# The failure each verb prevents, for a lesson whose own signature is missing or unreadable.
VERB_FAILURE = {
    "keep_struct_tag": "compile:must-use-tag", "hold_by_pointer": "compile:incomplete-type",
    "apply_fixit": "compile:undeclared-identifier", "release_out_param": "sanitizer:leak",
    "release_field": "sanitizer:leak", "feed_input_via": "input-not-reaching-target",
    "guard_empty_input": "empty-input", "avoid_call": "sanitizer:crash",
}
# The name a verb's failure is about: a compile error about another tag is another failure.
_SUBJECT = {"keep_struct_tag": "tag", "hold_by_pointer": "type", "apply_fixit": "old"}
_FUNCTION_OF = {"guard_empty_input": "function", "avoid_call": "function", "release_field": "function"}
_SIGNATURE = re.compile(r"^\s*(compile|sanitizer|empty-input|input-not-reaching-target|plateau)"
                        r"(?::\s*([\w.+-]+))?(?:\s*@\s*([A-Za-z_]\w*))?", re.I)
_WORD = re.compile(r"[a-z0-9]+")
MAX_ERRORS = 12


@dataclass(frozen=True)
class Signature:
    """A failure signature read: its stage, its kind (compile class, sanitizer kind...), its function."""

    stage: str
    kind: str
    function: str = ""

    def render(self) -> str:
        """The canonical text (``compile:must-use-tag``, ``sanitizer:leak@f``, ``plateau``)."""
        head = {"compile": f"compile:{self.kind}", "coverage": "plateau"}.get(self.stage, "")
        if not head:
            bare = self.kind in ("empty-input", "input-not-reaching-target")
            head = self.kind if bare else f"sanitizer:{self.kind}"
        return head + (f"@{self.function}" if self.function else "")


def parse_failure(text: Any) -> Signature | None:
    """The signature in a lesson's ``failure`` text; ``None`` when it names no known class."""
    found = _SIGNATURE.match(str(text or ""))
    if not found:
        return None
    head, kind, function = found.group(1).lower(), (found.group(2) or "").lower(), found.group(3) or ""
    if head == "compile":
        return Signature("compile", kind or "error", function)
    if head == "sanitizer":
        return Signature("run", kind or "crash", function)
    if head == "plateau":
        return Signature("coverage", "plateau")
    return Signature("run", head, function)


def own_signature(lesson: Mapping[str, Any]) -> Signature | None:
    """The failure a stored lesson prevents: its own signature, else the one its verb prevents."""
    action = parse_action(lesson.get("action"))
    signature = parse_failure(lesson.get("failure"))
    if signature is None and action is not None:
        signature = parse_failure(VERB_FAILURE[action.verb])
        key = _FUNCTION_OF.get(action.verb)
        if signature is not None and key:
            signature = Signature(signature.stage, signature.kind, action.args.get(key, ""))
    return signature


def failure_class(lesson: Mapping[str, Any]) -> str:
    """The class of failure a lesson is about: compile, leak, crash, input or plateau ('' for none)."""
    signature = own_signature(lesson)
    if signature is None:
        return ""
    if signature.stage == "compile":
        return "compile"
    if signature.stage == "coverage":
        return "plateau"
    return {"leak": "leak", "input-not-reaching-target": "input"}.get(signature.kind, "crash")


def compile_observation(version: int, ok: bool, errors: Iterable[str],
                        present: Sequence[str]) -> dict[str, Any]:
    """What one build showed: whether it built, its errors in the harness, the lessons whose change it had."""
    return {"version": version, "stage": "compile", "ok": ok,
            "errors": [" ".join(e.split())[:200] for e in errors][:MAX_ERRORS], "present": list(present)}


def run_observation(version: int, run: Mapping[str, Any], crash: Mapping[str, Any] | None,
                    empty_input: bool, input_missing: bool, present: Sequence[str]) -> dict[str, Any]:
    """What one fuzz run showed: a crash (kind, functions it names, empty input) or a clean run."""
    crash = crash or {}
    functions = [str(crash.get(k) or "") for k in ("entry_function", "crash_function", "allocated_in")]
    functions += [str(f.get("function") or "") for f in crash.get("frames") or [] if isinstance(f, Mapping)]
    return {"version": version, "stage": "run", "crashed": bool(run.get("crashed")),
            "kind": str(crash.get("kind") or "").lower(),
            "functions": [f for f in dict.fromkeys(functions) if f],
            "empty_input": empty_input, "input_missing": input_missing,
            "target_hits": int(run.get("target_hits") or 0) + int(run.get("seed_target_hits") or 0),
            "present": list(present)}


def _compile_seen(signature: Signature, action: Action | None, errors: Iterable[str]) -> bool:
    """Whether an error is the signature's class (all its words in the message) about the lesson's name."""
    words = set(_WORD.findall(signature.kind))
    subject = action.args.get(_SUBJECT.get(action.verb, ""), "") if action else ""
    for error in errors:
        said = set(_WORD.findall(error.lower()))
        if words <= said and (not subject or re.search(rf"\b{re.escape(subject)}\b", error)):
            return True
    return False


def _function_seen(function: str, lesson: Mapping[str, Any], names: Sequence[str],
                   api: Sequence[FunctionDecl]) -> bool:
    """Whether a crash naming ``names`` is about the signature's ``function``.

    A function this library does not have (a lesson learned on another) stands for the functions
    the lesson's scope fits here.
    """
    if not function or function in names:
        return True
    if any(f.name == function for f in api):
        return False
    scope = parse_scope(lesson.get("scope"))
    return any(scope_matches(scope, f) for f in api if f.name in names)


def _run_seen(signature: Signature, lesson: Mapping[str, Any], obs: Mapping[str, Any],
              api: Sequence[FunctionDecl]) -> bool:
    names = list(obs.get("functions") or [])
    if signature.kind == "input-not-reaching-target":
        return bool(obs.get("input_missing"))
    if not obs.get("crashed"):
        return False
    if signature.kind == "empty-input":
        return bool(obs.get("empty_input")) and _function_seen(signature.function, lesson, names, api)
    kind = str(obs.get("kind") or "")
    same = kind == signature.kind or (signature.kind == "crash" and kind != "leak")
    return same and _function_seen(signature.function, lesson, names, api)


# A change that prevents one failure can cause its opposite: keeping a result its object does not
# own leaks it; releasing one another holds frees it twice.
_OPPOSITE = {"keep_result": (("leak",), "function"),
             "release_out_param": (("double-free", "heap-use-after-free", "bad-free"), "releaser")}


def _caused(lesson: Mapping[str, Any], obs: Mapping[str, Any]) -> str:
    """The opposite failure of the lesson's change, when a run that had it shows it (else '')."""
    action = parse_action(lesson.get("action"))
    if action is None or action.verb not in _OPPOSITE or not obs.get("crashed"):
        return ""
    kinds, key = _OPPOSITE[action.verb]
    name = action.args.get(key, "")
    if str(obs.get("kind") or "") in kinds and name in (obs.get("functions") or []):
        return f"a {obs.get('kind')} naming {name} (the failure its change causes when it does not fit)"
    return ""


def judge_observation(lesson: Mapping[str, Any], obs: Mapping[str, Any],
                      api: Sequence[FunctionDecl] = ()) -> tuple[str | None, str]:
    """One version's verdict on a lesson whose change it had: ``pass``, ``fail`` or ``None``, and why."""
    signature = own_signature(lesson)
    if signature is None:
        return None, "no failure signature to check"
    text, where = signature.render(), f"v{obs.get('version')}"
    if obs.get("stage") != signature.stage:
        return None, ""
    if signature.stage == "compile":
        if _compile_seen(signature, parse_action(lesson.get("action")), obs.get("errors") or []):
            return "fail", f"{text} seen in the build of {where}"
        if obs.get("ok"):
            return "pass", f"{text} not seen after the compile stage was reached ({where} built)"
        return None, f"the build of {where} failed for another reason"
    if _run_seen(signature, lesson, obs, api):
        return "fail", f"{text} seen in the run of {where}"
    caused = _caused(lesson, obs) if obs.get("stage") == "run" else ""
    if caused:
        return "fail", f"{caused} in the run of {where}, which had its change"
    if obs.get("crashed"):
        return None, f"the run of {where} crashed for another reason ({obs.get('kind') or '?'})"
    if int(obs.get("target_hits") or 0) <= 0:
        return None, f"the run of {where} never reached the target"
    return "pass", f"{text} not seen after the run stage was reached ({where} ran)"


def lesson_verdict(item_id: str, lesson: Mapping[str, Any], observations: Sequence[Mapping[str, Any]],
                   api: Sequence[FunctionDecl] = (), broke_build: bool = False,
                   plateau: bool | None = None) -> tuple[str | None, str]:
    """A lesson's verdict for the target, from the versions that had its change, and the reason.

    ``broke_build``: a build failed on the lesson's own change (a fail whatever its signature).
    ``plateau``: for a ``plateau`` signature, whether the target's iterations ended on one
    (``None``: the coverage stage was never reached).
    """
    signature = own_signature(lesson)
    if broke_build:
        return "fail", "its change broke the build"
    if signature is None:
        return None, "no failure signature to check"
    if signature.stage == "coverage":
        if plateau is None:
            return None, "plateau: the coverage stage was never reached"
        return ("fail", "plateau seen") if plateau else ("pass", "plateau not seen, coverage was measured")
    verdicts = [judge_observation(lesson, obs, api) for obs in observations
                if item_id in (obs.get("present") or [])]
    for wanted in ("fail", "pass"):
        found = next((why for result, why in verdicts if result == wanted), "")
        if found:
            return wanted, found
    reasons = [why for _result, why in verdicts if why]
    return None, reasons[-1] if reasons else f"{signature.render()}: the {signature.stage} stage was never " \
                                             "reached with its change"


JUDGED_BY_CHANGE = "counterfactual"  # drafted with and without the lesson: used = it changed the harness
JUDGED_BY_PRESENCE = "presence"  # no counterfactual (a real model): used = its change is in the harness


@dataclass(frozen=True)
class LessonEvidence:
    """What a target's run recorded about the lessons it was shown, for :meth:`Gatekeeper.evaluate`.

    ``observations``: one per build and fuzz run (:func:`compile_observation`,
    :func:`run_observation`); ``broke_build``: ids of lessons a build failed on; ``judged``: how
    "used" was decided (:data:`JUDGED_BY_CHANGE` or :data:`JUDGED_BY_PRESENCE`).
    """

    observations: tuple[Mapping[str, Any], ...] = ()
    api: tuple[FunctionDecl, ...] = ()
    broke_build: frozenset[str] = frozenset()
    judged: str = JUDGED_BY_PRESENCE

    def verdict(self, item_id: str, lesson: Mapping[str, Any], used: bool,
                plateau: bool | None) -> tuple[str | None, str]:
        """The lesson's own verdict; none for a lesson that was not used (it changed nothing)."""
        broke = item_id in self.broke_build
        if not used and not broke:
            return None, "not used: its change did not make the measured harness differ"
        return lesson_verdict(item_id, lesson, self.observations, self.api, broke, plateau)

    def used_note(self) -> str:
        """How "used" was judged, for a validation's note."""
        if self.judged == JUDGED_BY_CHANGE:
            return "judged by counterfactual: the harness differs because of it"
        return "judged by presence: its change is in the harness (no counterfactual for this model)"
