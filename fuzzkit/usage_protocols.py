"""Protocols from the usage index: how the library's own code makes, feeds and releases things.

For one target: the calls around it in the shortest usage function that makes its objects
itself (a def-use slice: the calls on the variables the target call uses, transitively, before
it; the calls on its objects after it), and per object type every usage function's evidence of
how such an object is made (a constructor's result, or an opener writing it through ``&v``),
configured (calls on it whose other arguments are constants), fed (calls giving it data, its
size or callbacks) and released (the last call the code makes on it, by a release verb or
``free``). Plain data in, plain data out (:mod:`fuzzkit.usage_models`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from fuzzkit.api import FunctionDecl
from fuzzkit.usage_index import api_type_names, base_names
from fuzzkit.usage_models import (
    Callback,
    CallSite,
    ObjectProtocol,
    Step,
    TargetProtocol,
    TargetUsage,
    UsageFacts,
    UsageFunction,
    UsageIndex,
    UsageSnippet,
    type_key,
)
from fuzzkit.usage_records import record_fields
from fuzzkit.vocabulary import has_verb

MAX_SNIPPETS = 4
SNIPPET_CHARS = 6000  # about 1,500 tokens of code for a real model
MAX_STEPS = 16
MAX_OBJECTS = 6
# Examples and tools show the common use; tests also probe edge cases (NULL, empty input).
_ORIGIN_RANK = {"example": 0, "tool": 1, "test": 2, "doc": 3, "bench": 4, "other": 5}
_FED = ("data", "size", "callback")
_READS = re.compile(r"\b(memcpy|memmove|fread|read)\s*\(")


def _step(c: CallSite) -> Step:
    return Step(call=c.function, args=c.args, result=c.result, check=c.check, loop=c.loop)


def _objects_of(c: CallSite) -> set[str]:
    return {a.var for a in c.args if a.kind == "object" and a.var}


def _vars_of(c: CallSite) -> set[str]:
    return {a.var for a in c.args if a.var} | ({c.result_var} if c.result_var else set())


def target_slice(fn: UsageFunction, target: str) -> tuple[list[CallSite], bool] | None:
    """The calls of ``fn`` around its first call of ``target``, and whether it makes its objects.

    Before the call: every call on a variable the slice uses, transitively; after it: the
    calls on the slice's objects (follow-ups and releases).
    """
    k = next((i for i, c in enumerate(fn.calls) if c.function == target), None)
    if k is None:
        return None
    call = fn.calls[k]
    wanted = _vars_of(call)
    before: list[CallSite] = []
    for c in reversed(fn.calls[:k]):
        if _vars_of(c) & wanted:
            before.insert(0, c)
            wanted |= _objects_of(c) | ({c.result_var} if c.result_var else set())
    half = MAX_STEPS // 2  # the target stays, with the calls nearest to it on each side
    before = _kept_before(_not_overwritten(before, call.result_var), call, half)
    objects = {a.var for c in [*before, call] for a in c.args if a.kind == "object" and a.var}
    objects |= {call.result_var} if call.result_var else set()
    made = {c.result_var for c in before if c.result_var} | {
        a.var for c in before for a in c.args if a.address and a.var
    }
    # A parameter's value (a key id, flags, a handle) is known only to the function's caller.
    unknown = {a.var for c in [*before, call] for a in c.args
               if a.var in fn.params and a.kind not in ("data", "size") and a.var not in made}
    complete = not unknown and all(_held(fn, v, made) for v in objects - {call.result_var})
    # After it: the calls on its objects that use nothing the slice does not make (an iterator
    # made further down would otherwise reach the harness unmade).
    have = made | objects
    after = [c for c in fn.calls[k + 1 :] if _vars_of(c) & objects
             and all(_held(fn, a.var, have) for a in c.args if a.kind == "object" and a.var)][:half]
    return [*before, call, *after], complete


def _not_overwritten(before: list[CallSite], var: str) -> list[CallSite]:
    """``before`` without the calls storing into ``var`` that nothing reads before the target does.

    ``if (ns) p = make_ns(); else p = make();`` reads as two makers in a row: the target stores
    its own object into ``p``, so an earlier one nothing used is another branch (replayed, it
    would be made and lost).
    """
    if not var:
        return before
    out = []
    for i, c in enumerate(before):
        read_later = any(var in {a.var for a in d.args} for d in before[i + 1:])
        if c.result_var == var and not read_later:
            continue
        out.append(c)
    return out


def _kept_before(before: list[CallSite], call: CallSite, half: int) -> list[CallSite]:
    """The ``half`` calls nearest the target, plus the last call making each object they use.

    A long test makes its object far above the call (``block = obj_new(TYPE_COMMENT)`` forty
    calls up): the maker stays, so the slice still says how the object was made.
    """
    kept = before[-half:]
    makes = {id(c): {c.result_var} | {a.var for a in c.args if a.address and a.var} for c in before}
    made = set().union(*(makes[id(c)] for c in kept)) if kept else set()
    need = {a.var for c in [*kept, call] for a in c.args if a.kind == "object" and a.var} - made
    extra = []
    for var in need:
        maker = next((c for c in reversed(before[:-half] if half else before) if var in makes[id(c)]), None)
        if maker is not None:
            extra.append(maker)
    keep = {id(c) for c in [*kept, *extra]}
    return [c for c in before if id(c) in keep]


def _held(fn: UsageFunction, var: str, made: set[str]) -> bool:
    """Whether ``var`` has a value in the slice: made by it, initialized (not to NULL), or not a pointer."""
    init = fn.inits.get(var, "").replace(" ", "")
    return var in made or init not in ("", "0", "NULL", "nullptr", "(void*)0") \
        or not _is_pointer(fn.variables.get(var, "*"))


def fed(fn: UsageFunction, steps: list[CallSite]) -> bool:
    """Whether data reaches the slice: data, its size, a callback or a variable holding callbacks."""
    results = {c.result_var for c in steps if c.result_var}
    readers = {cb for cb, src in fn.callbacks.items() if _READS.search(src)}  # not an event handler
    return any((a.kind == "data" or a.kind == "callback" and a.text in readers
                or any(cb in readers for cb in fn.assigned.get(a.var, []))) and a.var not in results
               for c in steps for a in c.args)


def _is_pointer(ctype: str) -> bool:
    return "*" in ctype


def target_protocol(index: UsageIndex, target: str) -> TargetProtocol | None:
    """The usage sequence around ``target`` in the best usage function (see :func:`target_slice`)."""
    best: tuple[tuple[bool, bool, bool, int, int, int], UsageFunction, list[CallSite]] | None = None
    for fn in index.calling(target):
        found = target_slice(fn, target)
        if found is None:
            continue
        steps, complete = found
        # Where the input never reaches it (a literal, or nothing at all), only its setup teaches.
        starved = not fed(fn, steps)
        call = next(c for c in steps if c.function == target)
        edge = any(a.kind == "null" for a in call.args)  # a test of the NULL case
        key = (starved, edge, not complete, _ORIGIN_RANK.get(fn.origin, 5), len(steps), fn.lines)
        if best is None or key < best[0]:
            best = (key, fn, steps)
    if best is None:
        return None
    key, fn, steps = best
    used = {v for c in steps for v in _vars_of(c)}
    # A variable's initializer may name others (`struct mem m = { data, size, 0 }`).
    for v in list(used):
        init = fn.inits.get(v, "")
        used |= {w for w in fn.variables if w in init.replace("(", " ").replace(",", " ").split()}
    variables = {v: fn.variables[v] for v in fn.variables if v in used}
    inits = {v: fn.inits[v] for v in variables if v in fn.inits}
    callbacks = [
        Callback(name=cb, passed_to=holder, source=fn.callbacks.get(cb, ""))
        for holder, cbs in fn.assigned.items()
        if holder in used or holder in {c.function for c in steps}
        for cb in cbs
    ]
    callbacks += [
        Callback(name=a.text, passed_to=c.function, source=fn.callbacks.get(a.text, ""))
        for c in steps
        for a in c.args
        if a.kind == "callback"
    ]
    # Each callback once, where it is first passed (a test registering one reader with several
    # init variants lists it once, not once per call).
    first: dict[str, Callback] = {}
    for cb in callbacks:
        first.setdefault(cb.name, cb)
    callbacks = list(first.values())
    text = " ".join([*variables.values(), *(cb.source for cb in callbacks)])
    types = [d for t, d in fn.types.items() if t in text.replace("*", " ").split() or f"struct {t}" in text]
    return TargetProtocol(
        function=target,
        seen_in=f"{fn.file}:{fn.name}",
        origin=fn.origin,
        complete=not key[2],
        fed=not key[0],
        sequence=[_step(c) for c in steps],
        variables=variables,
        inits=inits,
        types=types,
        callbacks=callbacks,
    )


def canonical_key(ctype: str, canonical: Mapping[str, str]) -> str:
    """``ctype``'s :func:`type_key` with its typedef name replaced by the type it stands for."""
    key = type_key(ctype)
    name, stars = key.replace("*", "").strip(), key.count("*")
    under = canonical.get(name, "")
    return type_key(under + " *" * stars) if under and " " not in name else key


def object_protocols(index: UsageIndex, types: Sequence[str], api_types: set[str],
                     same: Callable[[str], str] = type_key) -> list[ObjectProtocol]:
    """How the library's own code handles objects of each of ``types`` (those it handles at all).

    ``same``: the key two spellings of one type share (:func:`canonical_key`; default: the spelling).
    """
    out = []
    for ctype in types:
        want = same(ctype)
        makes: Counter[str] = Counter()
        steps: dict[str, Step] = {}
        configure: Counter[str] = Counter()
        feed: Counter[str] = Counter()
        release: Counter[str] = Counter()
        by_maker: dict[str, Counter[str]] = {}
        spelled: Counter[str] = Counter()
        uses = 0
        declared = False
        for fn in index.functions:
            for var, vtype in fn.variables.items():
                if same(vtype) != want or not base_names(vtype) & api_types:
                    continue
                calls = [c for c in fn.calls if var in _vars_of(c)]
                if not calls:
                    continue
                uses += 1
                spelled[type_key(vtype)] += 1
                declared |= "*" not in vtype and not any(c.result_var == var for c in calls)
                _tally(var, calls, makes, configure, feed, release, steps, by_maker)
        if uses == 0:
            continue
        out.append(
            ObjectProtocol(
                type=spelled.most_common(1)[0][0],  # as the library's code spells it (a harness does too)
                declared=declared,
                make=[steps[k] for k in _best_makes(makes, steps)],
                configure=[steps[k] for k, _n in configure.most_common(4)],
                feed=[steps[k] for k, _n in feed.most_common(2)],
                release=(top := release.most_common(1)[0][0] if release else ""),
                release_after={m: c.most_common(1)[0][0] for m, c in sorted(by_maker.items())
                               if c.most_common(1)[0][0] != top},
                uses=uses,
            )
        )
    return out


def _best_makes(makes: Counter[str], steps: dict[str, Step]) -> list[str]:
    """The two makes to show: those needing no other object first, then the most used."""
    def others(key: str) -> int:
        return sum(a.kind == "object" and not a.address for a in steps[key].args)
    return sorted(makes, key=lambda k: (others(k), -makes[k], k))[:2]


def _tally(
    var: str,
    calls: list[CallSite],
    makes: Counter[str],
    configure: Counter[str],
    feed: Counter[str],
    release: Counter[str],
    steps: dict[str, Step],
    by_maker: dict[str, Counter[str]],
) -> None:
    """Count one usage function's make, configure, feed and release calls on ``var``.

    ``by_maker``: maker -> the releases of what it made (one object's releaser is the last
    release call made on it, whatever other objects of its type are released with).
    """
    made = [
        i
        for i, c in enumerate(calls)
        if c.result_var == var
        and c.result == var
        or any(a.var == var and a.address for a in c.args)
        and not _objects_of(c) - {var}
        and not has_verb(c.function, "release")  # `destroy(&obj)` clears the pointer: no maker
    ]
    made_at = made[0] if made else None
    if made_at is not None:
        key = _signature(calls[made_at])
        makes[key] += 1
        steps.setdefault(key, _step(calls[made_at]))
    fed = False
    for c in calls[(made_at + 1 if made_at is not None else 0) :]:
        others = [a for a in c.args if a.var != var]
        key = _signature(c)
        if c.function == "setjmp":  # where the library longjmps on an error with this object
            configure[key] += 1
            steps.setdefault(key, _step(c))
        elif any(a.kind in _FED for a in others) and not fed:
            feed[key] += 1
            steps.setdefault(key, _step(c))
            fed = True
        elif (
            others
            and all(a.kind in ("constant", "string", "null") for a in others)
            and not fed
            and not has_verb(c.function, "release")
        ):
            configure[key] += 1
            steps.setdefault(key, _step(c))
    last = calls[-1]
    if (made_at is None or made_at < len(calls) - 1) and (
        has_verb(last.function, "release") or last.function == "free"
    ):
        release[last.function] += 1
        if made:  # the variable may be made again (a writer, then a reader): the last maker's
            by_maker.setdefault(calls[made[-1]].function, Counter())[last.function] += 1


def _signature(c: CallSite) -> str:
    return (
        c.function
        + "("
        + ", ".join(a.kind if a.kind in ("object", "data", "size") else a.text for a in c.args)
        + ")"
    )


def snippets(index: UsageIndex, target: str, types: Sequence[str]) -> list[UsageSnippet]:
    """The usage functions worth showing as code: those calling the target, shortest first.

    When none calls it, those holding one of its object types. At most :data:`MAX_SNIPPETS`
    and :data:`SNIPPET_CHARS` in all.
    """
    calling = sorted(index.calling(target), key=lambda f: (f.lines, _ORIGIN_RANK.get(f.origin, 5)))
    if not calling:
        keys = {type_key(t) for t in types}
        calling = sorted(
            (f for f in index.functions if any(type_key(v) in keys for v in f.variables.values())),
            key=lambda f: (f.lines, _ORIGIN_RANK.get(f.origin, 5)),
        )
    out: list[UsageSnippet] = []
    used = 0
    for fn in calling:
        if len(out) >= MAX_SNIPPETS or used + len(fn.source) > SNIPPET_CHARS and out:
            break
        out.append(UsageSnippet(seen_in=f"{fn.file}:{fn.name}", origin=fn.origin, code=fn.source))
        used += len(fn.source)
    return out


def target_usage(index: UsageIndex, target: FunctionDecl, api: Sequence[FunctionDecl],
                 canonical: Mapping[str, str] | None = None,
                 records: Mapping[str, Mapping[str, str]] | None = None) -> TargetUsage:
    """What the prompt of ``target`` carries of the library's own usage (empty when none).

    ``canonical``: each typedef with the type it stands for (the header facts'), so that the
    spellings of one type (``rd_structrp`` in the target, ``rd_structp`` in a test) are one.
    ``records``: each record of the headers (tag or typedef name) -> its fields' types, for the
    fields the usage sets on a record before passing it (:mod:`fuzzkit.usage_records`).
    """
    if not index.functions:
        return TargetUsage()
    api_types = api_type_names(api)
    protocol = target_protocol(index, target.name)
    same = partial(canonical_key, canonical=canonical or {})
    types: list[str] = []
    for t in [*(p.type for p in target.params), target.return_type]:
        if _object_type(t, api_types) and same(t) not in {same(x) for x in types}:
            types.append(t)
    if protocol is not None:
        for t in protocol.variables.values():
            if _object_type(t, api_types) and same(t) not in {same(x) for x in types}:
                types.append(t)
    spellings = list(dict.fromkeys(type_key(t) for t in types))
    objects = object_protocols(index, spellings, api_types, same)[:MAX_OBJECTS]
    filled = record_fields(index, target, protocol, api_types, same, records or {}, canonical or {})
    facts = UsageFacts(objects=objects, targets=[protocol] if protocol else [], records=filled)
    return TargetUsage(facts=facts, snippets=snippets(index, target.name, types))


def _object_type(ctype: str, api_types: set[str]) -> bool:
    """A type of the API's own that is no enum (an enum is a value, not an object)."""
    return bool(base_names(ctype) & api_types) and not ctype.lstrip().startswith("enum ")
