"""Actionable lessons: where a lesson applies (scope), what it prevents (failure), what to change (action).

A lesson learned at run time names no library in code: its scope is data (a glob over function
names, a signature shape, a type), its failure signature is a class (``compile:must-use-tag``,
``sanitizer:leak@f``, ``input-not-reaching-target``, ``plateau``) and its action is one call of a
small vocabulary the offline engine applies to a harness with its own repair functions:

- ``release_out_param(type=T, releaser=R)``: release what the target hands back as ``T`` with ``R``;
- ``feed_input_via(F)``: hand the fuzz input to the target's object with ``F`` before the call;
- ``keep_struct_tag(tag=X, kind=K)``: write ``K X`` (``K`` is ``struct``, ``union`` or ``enum``,
  the tag's own kind), never bare ``X``; an entry stored before the kind was recorded
  (``keep_struct_tag(X)``) takes it from its own text, and without one it is never applied;
- ``apply_fixit(old=A, new=B)``: the name ``A`` is spelled ``B``;
- ``hold_by_pointer(type=T)``: ``T`` is opaque: hold it through a ``T *``, never by value;
- ``release_field(function=F, holder=T, field=X, releaser=R)``: a call of ``F`` (or of a function
  with its signature) on a ``T`` leaves what it made in the object's field ``X``: release it with
  ``R`` after the call;
- ``guard_empty_input(F)``: a call of ``F`` fails on the empty input (an assertion on the
  length): a harness that calls ``F`` returns early on zero bytes;
- ``avoid_call(F)``: tried and failed: an improvement that added a call of ``F`` crashed by
  misusing it and was dropped; do not add ``F`` to another harness of the library, nor a
  function with ``F``'s signature whose name shares a word with it (its family by shape).
- ``keep_result(F)``: what ``F`` returns stays owned by the object it was called on: a harness
  that released it crashed (a use-after-free or double free when the object was released); no
  harness of the library releases what ``F`` returns, nor what a function working the same
  object into the same type returns whose name differs from ``F``'s in one word (its slot
  family: ``add_bool_to_list`` beside ``add_int_to_list``).

A real model reads the same three lines in the prompt. Whether a lesson was *used* is decided
from the harness that was measured: its action's effect is there
(:func:`long_term_memory.experience.lesson_effects.effect_present`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import alternation, c_group, c_words

ACTIONS: dict[str, tuple[str, ...]] = {
    "release_out_param": ("type", "releaser"),
    "feed_input_via": ("function",),
    "keep_struct_tag": ("tag", "kind"),
    "apply_fixit": ("old", "new"),
    "hold_by_pointer": ("type",),
    "avoid_call": ("function",),
    "guard_empty_input": ("function",),
    "release_field": ("function", "holder", "field", "releaser"),
    "keep_result": ("function",),
}
# Arguments a verb may go without (entries stored before the argument existed).
OPTIONAL: dict[str, tuple[str, ...]] = {"keep_struct_tag": ("kind",)}
TAG_KINDS = c_group("tag")
SHAPES = ("out_param", "returns_pointer", "object_param", "buffer_input")
MAX_FAILURE = 160
_IDENT = re.compile(r"[A-Za-z_]\w*")
RELEASE_NAME = rf"\w*{alternation('release_fused')}\w*"
_CALL = re.compile(r"^\s*`?\s*([a-z_]+)\s*\((.*)\)\s*`?\s*$", re.S)
_SCOPE_PAIR = re.compile(r"\b(name|shape|type)\s*=\s*([^\s;,`]+)")
_QUALIFIERS = c_words("qualifier", "tag", "sign")
_SCALARS = c_words("type") | {"size_t", "uint8_t", "int8_t", "uint16_t", "int16_t", "uint32_t", "int32_t",
                              "uint64_t", "int64_t", "ssize_t"}


@dataclass(frozen=True)
class Action:
    """One parsed action: its verb and its named arguments."""

    verb: str
    args: dict[str, str] = field(default_factory=dict)

    def render(self) -> str:
        """The canonical text, ``verb(key=value, ...)``."""
        args = ", ".join(f"{k}={self.args[k]}" for k in ACTIONS[self.verb] if k in self.args)
        return f"{self.verb}({args})"


def parse_action(text: Any) -> Action | None:
    """The action in ``text`` (``release_out_param(type=T, releaser=R)``, ``feed_input_via(F)``).

    Positional arguments fill the verb's parameters in order. Unknown verbs, missing
    arguments and values that are not C identifiers give ``None``.
    """
    if isinstance(text, Mapping):
        text = f"{text.get('verb') or text.get('name') or ''}(" + ", ".join(
            f"{k}={v}" for k, v in text.items() if k not in ("verb", "name")) + ")"
    match = _CALL.match(str(text or "")[:300])
    if not match or match.group(1) not in ACTIONS:
        return None
    keys = ACTIONS[match.group(1)]
    args: dict[str, str] = {}
    parts = [p.strip().strip("`'\"") for p in match.group(2).split(",") if p.strip()]
    for i, part in enumerate(parts):
        key, sep, value = part.partition("=")
        key, value = (key.strip(), value.strip().strip("`'\"")) if sep else (keys[min(i, len(keys) - 1)], key)
        if key in keys and _IDENT.fullmatch(value) and (key != "kind" or value in TAG_KINDS):
            args.setdefault(key, value)
    required = [k for k in keys if k not in OPTIONAL.get(match.group(1), ())]
    return Action(match.group(1), args) if all(k in args for k in required) else None


def tag_kind(action: Action, text: str = "") -> Action:
    """A ``keep_struct_tag`` action with its tag's kind, read from the lesson's ``text`` when unset.

    Entries stored before the kind was recorded say it in their own words (``X is a union tag``,
    ``write `enum X```): that kind is taken when the text names exactly one. Otherwise the
    action stays without a kind, and nothing applies it (a wrong keyword is a compile error).
    Any other action comes back unchanged.
    """
    if action.verb != "keep_struct_tag" or "kind" in action.args:
        return action
    tag = re.escape(action.args["tag"])
    said = set(re.findall(rf"\b{tag} is an? (struct|union|enum) tag\b", text))
    said |= set(re.findall(rf"\b(struct|union|enum)\s+{tag}\b", text))
    said |= set(re.findall(rf"must use '(struct|union|enum)' tag to refer to type '{tag}'", text))
    return Action(action.verb, {**action.args, "kind": said.pop()}) if len(said) == 1 else action


class LessonScope(BaseModel):
    """Where a lesson applies: a function-name glob, a signature shape, a type; all that are set."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(default="", max_length=80)
    shape: str = Field(default="", max_length=40)
    type: str = Field(default="", max_length=80)

    @field_validator("name", "shape", "type", mode="before")
    @classmethod
    def _token(cls, value: Any) -> str:
        text = str(value or "").strip().strip("`")
        return text if re.fullmatch(r"[A-Za-z0-9_*?\[\]]*", text) else ""

    def is_empty(self) -> bool:
        """No condition set: a scope that would match every target is no scope."""
        return not (self.name or self.shape or self.type)

    def render(self) -> str:
        """``name=pfx_* shape=out_param type=T`` (only the set parts)."""
        return " ".join(f"{k}={v}" for k, v in (("name", self.name), ("shape", self.shape),
                                               ("type", self.type)) if v)


def parse_scope(value: Any) -> LessonScope | None:
    """A scope from a dict or from ``name=... shape=... type=...`` text; ``None`` when empty."""
    if isinstance(value, str):
        value = dict(_SCOPE_PAIR.findall(value))
    if not isinstance(value, Mapping):
        return None
    scope = LessonScope.model_validate({k: v for k, v in value.items() if k in ("name", "shape", "type")})
    if scope.shape and scope.shape not in SHAPES:
        scope = scope.model_copy(update={"shape": ""})
    return None if scope.is_empty() else scope


def type_name(ctype: str) -> str:
    """The named type under pointers and qualifiers (``const struct doc **`` -> ``doc``)."""
    words = [w for w in _IDENT.findall(ctype) if w not in _QUALIFIERS]
    return words[-1] if words else ""


def _named(ctype: str) -> bool:
    return bool(type_name(ctype)) and type_name(ctype) not in _SCALARS


def shape_types(decl: FunctionDecl) -> dict[str, set[str]]:
    """The signature shapes a function has (see :data:`SHAPES`), each with the named types in it."""
    shapes: dict[str, set[str]] = {}
    for p in decl.params:
        stars = p.type.count("*")
        if stars == 2 and type_name(p.type) not in ("", "void") and not p.type.lstrip().startswith("const"):
            shapes.setdefault("out_param", set()).add(type_name(p.type))
        elif stars == 1 and _named(p.type):
            shapes.setdefault("object_param", set()).add(type_name(p.type))
        elif stars == 1 and type_name(p.type) in ("char", "uint8_t", "void", "int8_t"):
            shapes.setdefault("buffer_input", set()).add(type_name(p.type))
    if "*" in decl.return_type and "const" not in decl.return_type:
        shapes.setdefault("returns_pointer", set()).add(type_name(decl.return_type))
    return shapes


def shape_of(decl: FunctionDecl) -> set[str]:
    """The signature shapes a function has (see :data:`SHAPES`)."""
    return set(shape_types(decl))


def scope_matches(scope: LessonScope | None, decl: FunctionDecl | None) -> bool:
    """Whether every condition the scope sets holds for the target ``decl``.

    With both a shape and a type, the type must be the one in that shape (a lesson about a
    returned ``uint8_t *`` does not fit a function that only reads a ``const uint8_t *``).
    """
    if scope is None or scope.is_empty() or decl is None:
        return False
    if scope.name and not fnmatch.fnmatchcase(decl.name, scope.name):
        return False
    shapes = shape_types(decl)
    if scope.shape and scope.shape not in shapes:
        return False
    if scope.shape and scope.type:
        return scope.type in shapes[scope.shape]
    types = {type_name(t) for t in (decl.return_type, *(p.type for p in decl.params))}
    return not scope.type or scope.type in types


def avoid_fits(function: str, scope: LessonScope | None, target: FunctionDecl | None,
               api: Sequence[FunctionDecl] = ()) -> bool:
    """Whether ``avoid_call(function)`` applies to a harness for ``target``.

    It does when the harness could add the call: ``function`` is in the library's ``api`` (or,
    without one, the scope matches the target), and it is not the target itself.
    """
    if target is None or target.name == function:
        return False
    return any(f.name == function for f in api) if api else scope_matches(scope, target)


def lesson_fits(lesson: Mapping[str, Any], target: FunctionDecl | None,
                callees: Sequence[FunctionDecl] = (), api: Sequence[FunctionDecl] = (),
                could_add: bool = True) -> bool:
    """Whether a stored lesson (its ``scope`` and ``action``) applies to a harness for ``target``.

    A lesson fits when its scope matches the target. A release also fits when its scope matches
    another API function the harness calls (``callees``): what that call hands back is released
    the same way. With ``could_add``, a release whose releaser is this library's (in ``api``, or
    ``free``) fits when its scope matches any of the library's functions: an improvement may add
    that call, and the release then comes with it instead of a leak found one call at a time. An
    ``avoid_call`` fits any harness of the library (``api``) that could add the call (see :func:`avoid_fits`),
    a ``keep_result`` any harness of the library that has the function.
    """
    scope = parse_scope(lesson.get("scope"))
    action = parse_action(lesson.get("action"))
    if action is not None and action.verb == "avoid_call":
        return avoid_fits(action.args["function"], scope, target, api)
    if action is not None and action.verb == "keep_result":  # any harness of the library
        return action.args["function"] in {f.name for f in api} or scope_matches(scope, target)
    if action is not None and action.verb == "guard_empty_input":  # any harness that may call it
        return action.args["function"] in {f.name for f in api} or scope_matches(scope, target)
    if action is not None and action.verb == "release_field":  # the library's own function and releaser
        names = {f.name for f in api}
        return action.args["function"] in names and action.args["releaser"] in names | {"free"}
    if scope_matches(scope, target):
        return True
    if action is None or action.verb != "release_out_param":
        return False
    if any(scope_matches(scope, c) for c in callees):
        return True
    releaser = action.args["releaser"]
    return (could_add and (releaser == "free" or any(f.name == releaser for f in api))
            and any(scope_matches(scope, f) for f in api if target is None or f.name != target.name))


def calls(code: str, function: str) -> bool:
    """Whether ``code`` calls ``function``."""
    return re.search(rf"\b{re.escape(function)}\s*\(", code) is not None


def callees_in(code: str, api: Iterable[FunctionDecl], target: FunctionDecl | None) -> list[FunctionDecl]:
    """The API functions other than ``target`` that ``code`` calls."""
    name = target.name if target else ""
    return [f for f in api if f.name != name and calls(code, f.name)]


def name_family(function: str) -> str:
    """A glob for a function's API family: its prefix (``pfx_*``, ``Pfx*``) or the name itself."""
    snake = re.match(r"[A-Za-z][A-Za-z0-9]*_", function)
    if snake and len(snake.group(0)) < len(function):
        return snake.group(0) + "*"
    camel = re.match(r"[A-Z][A-Za-z0-9]*?[a-z0-9](?=[A-Z])", function)
    return camel.group(0) + "*" if camel else function


def lesson_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    """The structured part of a stored item (``scope``, ``failure``, ``action``), only what is set."""
    out: dict[str, Any] = {}
    scope = parse_scope(item.get("scope"))
    if scope:
        out["scope"] = scope.model_dump()
    if item.get("failure"):
        out["failure"] = str(item["failure"])[:MAX_FAILURE]
    action = parse_action(item.get("action"))
    if action:
        text = " ".join(str(item.get(k) or "") for k in ("title", "description", "content"))
        out["action"] = tag_kind(action, text).render()
    return out


# ----- lessons as data in a prompt -----


class ShownAction(BaseModel):
    """An action as the prompt's lessons block carries it: its verb and named arguments."""

    model_config = ConfigDict(extra="forbid")

    verb: str
    args: dict[str, str] = Field(default_factory=dict)

    def action(self) -> Action | None:
        """The :class:`Action` (None when the verb or its arguments are not the vocabulary's)."""
        return parse_action({"verb": self.verb, **self.args})


class ShownLessonFacts(BaseModel):
    """One shown lesson with an action: its id, where it applies, what it prevents, what to change."""

    model_config = ConfigDict(extra="forbid")

    id: str
    scope: LessonScope | None = None
    failure: str = ""
    action: ShownAction


class LessonsBlock(BaseModel):
    """The ``# facts: lessons v1`` block of a prompt's experience section."""

    model_config = ConfigDict(extra="forbid")

    lessons: list[ShownLessonFacts] = Field(default_factory=list)


def lesson_facts(item_id: str, lesson: Mapping[str, Any], text: str = "") -> ShownLessonFacts | None:
    """A stored lesson's actionable part as data (None without a known action).

    ``text``: the entry's own words, for a ``keep_struct_tag`` stored before its kind was
    recorded (:func:`tag_kind`); the block then carries the kind.
    """
    action = parse_action(lesson.get("action"))
    if action is None:
        return None
    action = tag_kind(action, text)
    return ShownLessonFacts(id=item_id, scope=parse_scope(lesson.get("scope")),
                            failure=str(lesson.get("failure") or "")[:MAX_FAILURE],
                            action=ShownAction(verb=action.verb, args=dict(action.args)))
