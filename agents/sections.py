"""Prompt sections every role shares, rendered from a slice of the state."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from agent_graph.memory.session_memory import format_session_memory
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.crash_facts import TerminatedInput
from fuzzkit.header_facts import HeaderFacts, _base
from fuzzkit.usage_models import TargetUsage
from fuzzkit.vocabulary import words_of

MAX_API = 80
_PRIMITIVE = re.compile(
    r"\b(const|unsigned|signed|char|short|int|long|float|double|void|size_t|uint\d+_t|int\d+_t|"
    r"bool|_Bool)\b|\*"
)


def target_decl(state: Mapping[str, Any]) -> FunctionDecl:
    """The target function of the run."""
    return FunctionDecl.from_dict(state["target"])


def _type_words(decl: FunctionDecl, canonical: Mapping[str, str] | None = None) -> set[str]:
    """The named types of a prototype, each as the record or typedef it stands for.

    With the header's typedefs (``canonical``), two spellings of one type (``doc_p`` and
    ``html_doc_p`` for ``struct doc *``) are one word, so a function taking either is related.
    """
    types = [decl.return_type, *(p.type for p in decl.params)]
    words = {w for t in types for w in _PRIMITIVE.sub(" ", t).split()}
    if not canonical:
        return words
    out = set()
    for w in words:
        canon = _TAG.sub(" ", canonical.get(w, w)).replace("*", " ").split()
        if canon and not _PRIMITIVE.fullmatch(canon[-1]) and "(" not in canonical.get(w, ""):
            out.add(canon[-1])  # scalar and function-pointer typedefs relate nothing
    return out


_TAG = re.compile(r"\b(const|struct|union|enum|volatile|restrict|__restrict|__restrict__)\b")  # no type words
_RELEASE = words_of("release") | words_of("finish")
_CREATE = words_of("make") | words_of("init") | {"ctor"}
_READ = words_of("parse")


def _name_words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name))
    return [w for w in spaced.lower().split("_") if w]


def _lifecycle_of(decl: FunctionDecl, shared: set[str], words: set[str],
                  canonical: Mapping[str, str], readers: bool = False) -> bool:
    """Whether ``decl`` makes or releases an object of one of the ``words`` types.

    ``readers``: a function reading one from data (``doc_parse_memory(buf, len)``) makes it too.
    """
    if not shared:
        return False
    verbs = set(_name_words(decl.name))
    if verbs & _RELEASE and len(decl.params) == 1:
        return True
    # A maker returns the object or hands it out through a `T **` parameter.
    made = [decl.return_type, *(p.type for p in decl.params if p.type.count("*") >= 2)]
    made_words = _type_words(FunctionDecl(decl.name, "void", tuple(
        Param(f"p{i}", t) for i, t in enumerate(made))), canonical)
    return bool(verbs & (_CREATE | _READ if readers else _CREATE) and made_words & words)


def relevant_api(state: Mapping[str, Any], limit: int = MAX_API) -> list[FunctionDecl]:
    """The API functions worth showing: all of a small API, else those related to the target.

    Related, best first: the calls the library's own code makes around the target (its usage
    sequence: the reader set up before a read), functions that make or release an object of a
    type the target takes or returns (typedef spellings of one type count as one, from the Types
    facts), then those that make or release the objects these makers take, then the others
    sharing its types,
    then those its own header declares (a family: escapers beside a URI parser), then names
    closest to the target's; reserved ``_``-names last. Returned in header order.
    """
    api = [FunctionDecl.from_dict(d) for d in state.get("api") or []]
    if len(api) <= limit:
        return api
    keep = {d.name for d in ranked_api(state)[:limit]}
    return [d for d in api if d.name in keep]


def ranked_api(state: Mapping[str, Any]) -> list[FunctionDecl]:
    """Every API function, most related to the target first (see :func:`relevant_api`)."""
    api = [FunctionDecl.from_dict(d) for d in state.get("api") or []]
    target = target_decl(state)
    facts = HeaderFacts.from_dict(state.get("header_facts"))
    canonical = _canonical(facts)
    words = _type_words(target, canonical)
    documented = {r.function for r in facts.releasers if r.releases == f"what {target.name} allocates"}
    types = {d.name: _type_words(d, canonical) for d in api}
    makers = [d for d in api if _lifecycle_of(d, words & types[d.name], words, canonical)]
    # The objects those makers need in turn (a handle opened before a blob of it is).
    needed = {w for d in makers for w in types[d.name]} - words
    produced = _produced(target, canonical)

    def tier(d: FunctionDecl) -> int:
        if _lifecycle_of(d, words & types[d.name], words, canonical):
            return 0
        # What those makers take may also be read from data: a document a context is made on.
        return 1 if _lifecycle_of(d, needed & types[d.name], needed, canonical, readers=True) else 2

    used = _used_around(state, target.name)

    def rank(d: FunctionDecl) -> tuple[bool, bool, bool, int, bool, bool, int, bool, int, bool, str]:
        shared = words & types[d.name]
        return (d.name != target.name, d.name not in used, d.name not in documented, tier(d), not shared,
                not _on_product(d, produced, canonical), -len(shared), d.header != target.header,
                -len(os.path.commonprefix([d.name, target.name])), d.name.startswith("_"), d.name)

    return sorted(api, key=rank)


def _used_around(state: Mapping[str, Any], target: str) -> set[str]:
    """The API calls the library's own code makes around the target and on its objects."""
    usage = TargetUsage.model_validate(state.get("library_usage") or {})
    # How it makes and releases the target's objects (each maker's own releaser among them).
    used = {s.call for o in usage.facts.objects for s in o.make}
    used |= {r for o in usage.facts.objects for r in (o.release, *o.release_after.values()) if r}
    protocol = usage.facts.target(target)
    if protocol is None:
        return used
    # and what its callbacks call (`mem_read` gets its buffer back with `get_io_ptr(p)`)
    called = {n for cb in protocol.callbacks for n in re.findall(r"\b([A-Za-z_]\w*)\s*\(", cb.source)}
    return used | {s.call for s in protocol.sequence} | called


def _canonical(facts: HeaderFacts) -> dict[str, str]:
    """Each typedef name with the canonical type behind it."""
    return {t.name: t.canonical for t in facts.typedefs}


def _produced(target: FunctionDecl, canonical: Mapping[str, str]) -> set[str]:
    """The named types of what the target hands back: its result and its ``T **`` out-parameters."""
    out = [target.return_type, *(p.type for p in target.params if p.type.count("*") >= 2)]
    return _type_words(FunctionDecl(target.name, "void", tuple(
        Param(f"p{i}", t) for i, t in enumerate(out))), canonical)


def _on_product(d: FunctionDecl, produced: set[str], canonical: Mapping[str, str]) -> bool:
    """Whether ``d``'s first parameter is an object of a type the target hands back.

    ``T *``, not ``T **``: a function given somewhere to put a new ``T`` (a decoder of a
    serialized form) makes its own, it does not work on the target's.
    """
    first = d.params[:1]
    if not first or first[0].type.count("*") >= 2:
        return False
    return bool(_type_words(FunctionDecl(d.name, "void", first), canonical) & produced)


# Heads the uncovered functions another harness of the same run already calls (their coverage
# counts for the run): offered after the others.
ELSEWHERE_HEADING = "Already called by the run's other harnesses (offered last):"


def next_calls(state: Mapping[str, Any], uncovered: set[str], called: set[str],
               limit: int) -> tuple[list[FunctionDecl], list[FunctionDecl]]:
    """What the enhancer is offered to call next: up to ``limit`` functions in two groups.

    First the functions on what the target produced (a statement it compiled, a tree it
    parsed) that the harness does not call yet, covered or not (a library that runs its own
    statements has run the stepper, never on the fuzz input's), those taking nothing else
    first (what runs or walks the result needs nothing more); then the other uncovered
    functions, in order of relation to the target.
    """
    target = target_decl(state)
    canonical = _canonical(HeaderFacts.from_dict(state.get("header_facts")))
    produced = _produced(target, canonical)
    ranked = [d for d in ranked_api(state) if d.name != target.name and d.name not in called]
    product = sorted((d for d in ranked if _on_product(d, produced, canonical)),
                     key=lambda d: len(d.params) > 1)[:limit]
    rest = [d for d in ranked if d.name in uncovered and d not in product]
    return product, rest[:limit - len(product)]


def api_prototypes(state: Mapping[str, Any], also: Iterable[FunctionDecl] = ()) -> str:
    """The relevant API, one prototype per line (then ``also``, where the budget left it out)."""
    shown = relevant_api(state)
    names = {d.name for d in shown}
    listed = [*shown, *(d for d in also if d.name not in names)]
    return "\n".join(d.prototype() for d in listed) or "(no API parsed)"


_ACTION = re.compile(r"^\s*- Action:\s*\w+\((.*)\)\s*$", re.M)


def lesson_api(state: Mapping[str, Any], experience: str) -> list[FunctionDecl]:
    """The library's functions the shown lessons' actions name (a call to leave out, a feeder).

    The API list is trimmed to what relates to the target; a lesson learned on another target
    names a function that may fall outside it, and neither a model nor the offline engine can
    then tell which calls it rules out (the avoided call's twins are known by its signature).
    """
    names = {n for args in _ACTION.findall(experience) for n in re.findall(r"[A-Za-z_]\w*", args)}
    return [FunctionDecl.from_dict(d) for d in state.get("api") or [] if d.get("name") in names]


def types_section(state: Mapping[str, Any]) -> str:
    """What the headers say about the API's types (typedefs, records, constants, releasers)."""
    facts = HeaderFacts.from_dict(state.get("header_facts"))
    shown = {d.name for d in relevant_api(state)}
    every = {d.get("name") for d in state.get("api") or []}
    # Notes on API functions not shown are left out; notes on callback typedefs stay.
    facts.returns = {fn: text for fn, text in facts.returns.items() if fn in shown or fn not in every}
    facts.optional = {fn: names for fn, names in facts.optional.items() if fn in shown}
    facts.utf8 = {fn: names for fn, names in facts.utf8.items() if fn in shown}
    facts.terminated = {fn: names for fn, names in facts.terminated.items() if fn in shown}
    # Likewise releasers: those of shown functions, of what a shown function allocates, and
    # those that are no API function (`free`).
    # And the one-argument releaser of a type a shown function takes or returns (a region a
    # shown search fills is released by a function the budget left out).
    canonical = _canonical(facts)
    single = {d.get("name") for d in state.get("api") or [] if len(d.get("params") or []) == 1}
    used = {_base(canonical.get(_base(t), t)) for d in relevant_api(state)
            for t in (d.return_type, *(p.type for p in d.params))}
    facts.releasers = [r for r in facts.releasers if r.function in shown or r.function not in every
                       or r.releases.removeprefix("what ").removesuffix(" allocates") in shown
                       or (r.function in single
                           and _base(canonical.get(_base(r.releases), r.releases)) in used)]
    return facts.render() or "(none)"


def _called_and_facts(state: Mapping[str, Any]) -> tuple[set[str], HeaderFacts]:
    """The names the harness calls, and the header facts (for the crash record's documented facts)."""
    return set(re.findall(r"\b(\w+)\s*\(", state.get("harness_code") or "")), \
        HeaderFacts.from_dict(state.get("header_facts"))


def utf8_arguments(state: Mapping[str, Any]) -> dict[str, list[str]]:
    """The UTF-8 text parameters (documentation) of the functions the harness calls."""
    called, facts = _called_and_facts(state)
    return {fn: list(names) for fn, names in facts.utf8.items() if fn in called}


def documented_conditions(state: Mapping[str, Any]) -> dict[str, list[str]]:
    """The conditions the documentation asserts on the parameters of the functions the harness calls."""
    called, facts = _called_and_facts(state)
    return {fn: list(conds) for fn, conds in facts.conditions.items() if fn in called}


def terminated_arguments(state: Mapping[str, Any]) -> dict[str, Any]:
    """Input documented as NUL-terminated, for the functions the harness calls (a TerminatedInput).

    The parameters of the called functions documented so, and the option constants whose
    documentation says the input is NUL-terminated (with their values, when known).
    """
    called, facts = _called_and_facts(state)
    params = {fn: list(names) for fn, names in facts.terminated.items() if fn in called}
    found = TerminatedInput(params=params, flags=dict(facts.terminated_flags))
    return found.model_dump(mode="json")


def include_lines(state: Mapping[str, Any]) -> str:
    """``#include`` lines for the library's public headers."""
    return "\n".join(f'#include "{h}"' for h in state.get("headers") or []) or "(none)"


def memory_section(state: Mapping[str, Any], categories: tuple[str, ...]) -> str:
    """Session memory filtered to the categories one agent reads."""
    return format_session_memory(state.get("session_memory") or {}, categories)


def bullet(items: list[str], empty: str = "(none)") -> str:
    """A Markdown bullet list."""
    return "\n".join(f"- {i}" for i in items) if items else empty


def coverage_summary(coverage: Mapping[str, Any]) -> str:
    """One block of coverage figures."""
    if not coverage:
        return "(not measured)"
    parts = []
    for key in ("lines", "branches", "functions"):
        entry = coverage.get(key) or {}
        if entry:
            parts.append(f"{key}: {entry.get('covered', 0)}/{entry.get('count', 0)} "
                         f"({entry.get('percent', 0.0):.1f}%)")
    return "; ".join(parts) or "(not measured)"
