"""Choosing a library's fuzz targets from its public API, for ``logicfuzz init-benchmark``.

A good default set favours entry points that take untrusted data (a buffer with a size,
or a string), especially parsers and decoders that return a status, then what such an
entry point needs or feeds (its context's constructor, the stream functions working on
that context, encoders for round trips), and what the library's own fuzz harnesses call.
It skips what fuzzing cannot exercise: version and error-string getters, free/destroy
functions, allocator hooks, setters of plain values and functions that take a ``FILE *``,
a file name or a callback. Types are judged by their canonical spelling (typedefs
resolved, :func:`fuzzkit.headers.canonical_types`), so a library's own byte, length and
handle typedefs need no listing here. The set is filled by score up to a cap; ties keep
the headers' order.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping

from fuzzkit.api import FunctionDecl
from fuzzkit.errors import ToolchainError
from fuzzkit.param_kinds import INTEGER, archetype, names_other_input, object_type, spellings
from fuzzkit.reach import CallGraph
from fuzzkit.release_names import common_words
from fuzzkit.select_io import IO_TYPES, reads_file, reads_through_callback
from fuzzkit.select_io import words as _words
from fuzzkit.vocabulary import alternation, libc_prototypes, libc_released_by, ordered, words_of

_PARSE_VERBS = (*ordered("parse"), *ordered("entry_reads"))
_WRITE_VERBS = (*ordered("write"), *ordered("entry_writes"))
_CHECKSUM = ordered("checksum")
# Lifecycle, accessors and plumbing: not where untrusted data goes in; nor a function ending the
# process or unwinding the caller (every input crashes).
_SKIP_WORDS = (
    words_of("release") | words_of("init") | words_of("copy") | words_of("open_session")
    | set(libc_prototypes()) | set(libc_released_by()) | words_of("not_entry") | words_of("ends_process")
)
_SKIP_SUFFIXES = ("open", "close", "free", "init", "end", "reset", "file", "fd")
# Container plumbing: data goes in, but the interesting code (the parser) is elsewhere.
_PLUMBING = words_of("edit") - {"set"} | words_of("plumbing")  # a setter: _ACCESSORS
# Accessor words: a penalty for getters and setters of plain values, but not for a
# function that takes the input bytes, whatever it is called.
_ACCESSORS = words_of("init") | words_of("accessor")


_ENOUGH = 3  # a plain object function scores 2: not worth a target on its own
NEW_CODE = 0.005  # of the library's instructions: what counts as reaching new code
DEPTH = 3  # calls deep: the code a target's harness reaches early; deeper, every entry reaches everything


_INPUT_NOUNS = words_of("input_nouns")


# One word fusing a verb with what it runs on (`ac_dostring`, `ac_loadbuffer`, `execstr`): data goes in.
_FUSED_ENTRY = re.compile(rf"(do|eval|exec|run|{alternation('parse')}|compile)"
                          r"(string|str|buffer|buf|text|source|src|mem|memory|bytes|data|chunk)")


def _is_verb(word: str, verbs: tuple[str, ...]) -> bool:
    """``word`` is one of ``verbs``, inflected (``decoded``, ``loads``, ``decode2``).

    A longer word that merely starts with a verb (``readonly``, ``compileoption``) is not,
    nor is the noun (``parser``: the object's name, not what the function does).
    """
    return any(re.fullmatch(re.escape(v) + r"(s|d|ed|ing|b|\d+)?", word) for v in verbs)


def _status_return(decl: FunctionDecl, canonical: Mapping[str, str]) -> bool:
    """Whether the result tells success from failure.

    An integer, enum or bool status, or an object pointer that is NULL on failure (a
    parser returning its document); ``void`` and plain values such as ``double`` do not.
    """
    ret = canonical.get(decl.return_type, decl.return_type)
    return bool(INTEGER.match(ret) or re.match(r"^(enum \w+|_Bool|bool)$", ret)
                or object_type(ret, canonical))


def score(decl: FunctionDecl, canonical: Mapping[str, str] | None = None,
          streams: Collection[str] = (), from_file: bool = False, in_memory: Collection[str] = ()) -> int:
    """How promising ``decl`` is as a fuzz target (higher is better; below 0 is skipped).

    ``from_file``: the library takes its data only from files it opens by name, so a function
    that reads one (:func:`reads_file`) scores as a buffer entry point and its ``open`` and
    ``file`` words are no penalty. ``in_memory``: object types an entry point makes from data in
    memory, so a handle of one is no file handle whatever its name.
    """
    canon = canonical or {}
    words = _words(decl.name)
    served = reads_through_callback(decl, canon)
    kind = "buffer" if from_file or served else archetype(decl, canon, streams)
    total = {"buffer": 6, "string": 4, "object": 2, "other": 0}[kind]
    # A setter that takes the input bytes and says so (`set_buffer(ctx, data, len)`) is how
    # data gets in; a setter of other bytes (a dictionary, a key) is configuration.
    feeds = kind == "buffer" and bool(set(words) & _INPUT_NOUNS) or served
    # `open_profile_from_mem(data, size)` opens nothing but that data: it parses it.
    parses = any(_is_verb(w, _PARSE_VERBS) or _FUSED_ENTRY.fullmatch(w) for w in words)
    if parses or feeds and "open" in words:
        total += 4
    elif any(_is_verb(w, _WRITE_VERBS) for w in words):
        total += 2
    if any(c in w for w in words for c in _CHECKSUM):
        total += 1
    verb = any(_is_verb(w, (*_PARSE_VERBS, *_WRITE_VERBS)) for w in words)
    # A status matters where data goes in or work is done; a plain accessor's does not.
    if _status_return(decl, canon) and (kind in ("buffer", "string") or (kind == "object" and verb)):
        total += 1
    # Length variants (getn, setn, deln) count as their base word.
    bases = {w.rstrip("0123456789") for w in words} | {w[:-1] for w in words if w.endswith("n")}
    skip = _SKIP_WORDS - _ACCESSORS - {"open"} if feeds else _SKIP_WORDS
    suffixes: tuple[str, ...] = _SKIP_SUFFIXES
    if from_file:
        skip, suffixes = skip - {"open", "file"}, ("free", "close", "fd")
    if bases & skip or (not feeds and any(w.endswith(suffixes) for w in words)):
        total -= 8
    # Container plumbing works on a container, as does `obj_defprop(obj, idx, name)` on its slot.
    slot = any(re.fullmatch(r"i?(idx|index)", p.name, re.I) for p in decl.params[1:])
    if (bases & _PLUMBING or slot) and decl.params and object_type(decl.params[0].type, canon):
        total -= 4
    if any(w in words_of("make") - {"open"} or w == "add" for w in words):  # (an opener may read a file)
        total -= 2
    # Canonical spellings too: a callback behind a typedef is still a callback.
    types = " ".join(t for p in decl.params for t in spellings(p, canon))
    # A file handle of the library's own (a typedef named like `fooFile`) is I/O, like FILE.
    # (not one an entry point reads from memory: `file *open_reader(void *user, read_fn read)`)
    handles = {w for p in decl.params if object_type(p.type, canon) not in in_memory
               for ident in re.findall(r"\w+", p.type) for w in _words(ident)}
    if (IO_TYPES.search(types) or "file" in handles) and not served:
        total -= 6
    if any(names_other_input(p, canon) for p in decl.params) and not from_file:
        total -= 4
    if not decl.params:
        total -= 5
    if decl.name.startswith("_"):
        total -= 6  # private by the C convention (a leading underscore), exported or not
    return total


def _entry(d: FunctionDecl, canonical: Mapping[str, str], streams: Collection[str] = ()) -> bool:
    """A data entry point: it takes a buffer or a string (or reads through a callback), and scores well."""
    fed = archetype(d, canonical, streams) in ("buffer", "string") or reads_through_callback(d, canonical)
    return fed and score(d, canonical, streams) >= 8


def _reachable_bonus(decls: list[FunctionDecl], canonical: Mapping[str, str]) -> dict[str, int]:
    """+2 for functions on (or creating) an object a data entry point takes or returns.

    A parser that takes a context (``parse(ctx, data, len)``) needs that context created and
    configured, and a parser returning a document hands it to the functions that walk it:
    both are reachable from the data entry point, so they rank above unrelated objects.
    """
    entries: set[str] = set()
    for d in decls:
        if _entry(d, canonical):
            entries.add(object_type(d.params[0].type, canonical))
            entries.add(object_type(d.return_type, canonical))
    entries.discard("")
    bonus = {}
    for d in decls:
        first = object_type(d.params[0].type, canonical) if d.params else ""
        kind = archetype(d, canonical)
        if _entry(d, canonical):
            continue  # an entry point itself: the bonus is for what it needs and feeds
        creates = object_type(d.return_type, canonical) in entries
        # On the context, only what feeds it or does work counts, not its plain accessors.
        busy = kind != "object" or any(_is_verb(w, (*_PARSE_VERBS, *_WRITE_VERBS)) for w in _words(d.name))
        if creates or (first in entries and busy):
            bonus[d.name] = 2
    return bonus


def _unchecked(decls: list[FunctionDecl]) -> set[str]:
    """Functions with a checked twin (``x_decompress`` beside ``x_decompress_safe``): for trusted input."""
    names = {tuple(_words(d.name)) for d in decls}
    return {d.name for d in decls if any((*_words(d.name), w) in names for w in ("safe", "checked"))}


def _related(a: str, b: str, common: Collection[str] = ()) -> bool:
    """Whether two names are variants of one function.

    ``decode``/``decode2`` and ``acme_parse_int64``/``acme_parse_double`` are;
    different verbs on one object (``acme_parser_parse``/``acme_parser_load``) are not, nor two
    names sharing only the library's prefix (``common``: ``ac_newstate``/``ac_dostring``).
    """
    wa, wb = _words(a), _words(b)
    da, db = [w.rstrip("0123456789") for w in wa], [w.rstrip("0123456789") for w in wb]
    if da[: len(db)] == db or db[: len(da)] == da:
        return True  # whole words, so a parser's constructor is no variant of the parse call
    # (`DAcmeOpen`/`DAcmeSlurp`: opening an object and reading all of it are two functions)
    verbs = (*_PARSE_VERBS, *_WRITE_VERBS, "open")
    same_family = len(wa) > 1 and wa[:-1] == wb[:-1] and not set(wa[:-1]) <= set(common)
    return same_family and not (wa[-1].startswith(verbs) and wb[-1].startswith(verbs))


def choose_functions(
    decls: list[FunctionDecl],
    max_functions: int = 8,
    canonical: Mapping[str, str] | None = None,
    fuzzed: Collection[str] = (),
    streams: Collection[str] = (),
    used: Mapping[str, int] | None = None,
    graph: CallGraph | None = None,
) -> list[FunctionDecl]:
    """A varied, promising default set of at most ``max_functions`` targets, best first.

    The set is filled by score, so a small cap keeps the strongest data entry points rather
    than one of each kind; each already chosen variant of a function (``decode2`` after
    ``uncompress``) lowers its score, and so does a function whose code is mostly reached
    already by the chosen ones (a second document parser reaches the code the first one does,
    a path evaluator does not), which keeps the set varied, and nothing weaker than a
    plain object function is added just to fill the set. Ties
    keep the headers' order (the main header first, each header top-down: the order the
    library documents its API in), never the alphabet.

    Args:
        decls: The candidate functions, in header order.
        max_functions: The cap.
        canonical: Type spellings mapped to canonical types (see :func:`archetype`).
        fuzzed: Functions the library's own fuzz harnesses call: its authors found them
            worth fuzzing, so they rank higher (+3).
        streams: Stream struct names (see :func:`archetype`).
        used: Functions the library's own tests, examples and tools hand data to, with their
            bonus (:func:`usage_bonus`).
        graph: The library's direct calls (:func:`fuzzkit.reach.call_graph`): a function two
            thirds of whose code within :data:`DEPTH` calls (by instructions) the chosen ones
            reach within as many loses 3.
    """
    used = used or {}
    canon = canonical or {}
    handlers = _callback_shapes(canon)
    decls = [d for d in decls if _shape(d, canon) not in handlers]
    order = {d.name: i for i, d in enumerate(decls)}
    bonus = _reachable_bonus(decls, canon)
    made = {object_type(d.return_type, canon) for d in decls if reads_through_callback(d, canon)} - {""}
    base = {d.name: score(d, canon, streams, in_memory=made) for d in decls}
    # No function takes data in memory: one that reads a file it is given by name is the entry.
    from_file = not any(_entry(d, canon, streams) for d in decls)
    unchecked = _unchecked(decls)
    scores = {d.name: (score(d, canon, streams, True) if from_file and reads_file(d, canon) else base[d.name])
              + bonus.get(d.name, 0) + 3 * (d.name in fuzzed) + used.get(d.name, 0)
              - 8 * (d.name in unchecked) for d in decls}
    ranked = sorted(
        (d for d in decls if scores[d.name] >= _ENOUGH), key=lambda d: (-scores[d.name], order[d.name])
    )
    return _spread(ranked, scores, common_words([d.name for d in decls]), graph or CallGraph(), max_functions)


def _spread(ranked: list[FunctionDecl], scores: Mapping[str, int], common: Collection[str],
            calls: CallGraph, max_functions: int) -> list[FunctionDecl]:
    """The best of ``ranked`` one at a time, each time preferring code the chosen ones do not reach.

    A function reaches new code when at least :data:`NEW_CODE` of the library's instructions
    within :data:`DEPTH` calls of it are not within as many of a chosen one; one that does not
    loses 3, and so does a variant (``acme_read_sync``) of a waiting function that does not
    (``acme_read``), so the variant never goes first only because its extra code is new.
    """
    order = {d.name: i for i, d in enumerate(ranked)}
    chosen: list[FunctionDecl] = []
    reached: set[str] = set()
    least = sum(calls.sizes.values()) * NEW_CODE

    def worth(d: FunctionDecl) -> int:
        return scores[d.name] - 7 * sum(_related(d.name, c.name, common) for c in chosen)

    near: dict[str, frozenset[str]] = {}  # each candidate's reach, computed once

    def reach(name: str) -> frozenset[str]:
        if name not in near:
            near[name] = calls.reach(name, DEPTH)
        return near[name]

    def stale(d: FunctionDecl) -> bool:
        return bool(calls.sizes) and calls.size(reach(d.name) - reached) < least

    def covered(d: FunctionDecl, waiting: list[FunctionDecl]) -> bool:
        words = _words(d.name)
        bases = (_words(b.name) for b in waiting if stale(b))
        return stale(d) or any(len(w) < len(words) and words[: len(w)] == w for w in bases)

    # Reaching chosen code orders a function later; only being a variant can leave it out.
    while len(chosen) < max_functions:
        waiting = [d for d in ranked if d not in chosen and worth(d) >= _ENOUGH]
        if not waiting:
            break
        best = min(waiting, key=lambda d: (-(worth(d) - 3 * covered(d, waiting)), order[d.name]))
        chosen.append(best)
        reached.update(reach(best.name))
    return sorted(chosen, key=lambda d: (-scores[d.name], order[d.name]))


_FUNCTION_POINTER = re.compile(r"^(?P<ret>.*?)\s*\(\*\)\s*\((?P<args>.*)\)$")


def _norm(ctype: str) -> str:
    return re.sub(r"\s+", " ", ctype).replace(" *", "*").strip()


def _shape(decl: FunctionDecl, canon: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """The function's canonical result and parameter types."""
    return (_norm(canon.get(decl.return_type, decl.return_type)),
            tuple(_norm(canon.get(p.type, p.type)) for p in decl.params))


def _callback_shapes(canon: Mapping[str, str]) -> set[tuple[str, tuple[str, ...]]]:
    """The API's callback signatures: a function of one is passed, not called (its user pointer is opaque)."""
    shapes = set()
    for canonical in canon.values():
        m = _FUNCTION_POINTER.match(canonical.strip())
        if m:
            args = [a for a in (x.strip() for x in m["args"].split(",")) if a and a != "void"]
            shapes.add((_norm(m["ret"]), tuple(_norm(a) for a in args)))
    return shapes


def pick_named(decls: list[FunctionDecl], names: list[str]) -> list[FunctionDecl]:
    """The declarations named ``names``, in that order.

    Raises:
        ToolchainError: A name is not in the public API (the message suggests close names).
    """
    by_name = {d.name: d for d in decls}
    missing = [n for n in names if n not in by_name]
    if missing:
        hints = {n: difflib.get_close_matches(n, list(by_name), n=3) for n in missing}
        shown = "; ".join(f"{n} (did you mean {', '.join(h)}?)" if h else n for n, h in hints.items())
        raise ToolchainError(
            f"not in the library's public API: {shown}",
            "name functions declared in the library's public headers and defined in the library",
        )
    return [by_name[n] for n in names]


def usage_bonus(calls: Iterable[tuple[str, bool]]) -> dict[str, int]:
    """Rank bonus from the library's own usage: ``(function, given data)`` per call seen.

    A function the library's own code hands data to (a buffer, its size, a callback) is an
    entry point its authors use: +2. Merely being called earns nothing: a test suite calls
    every setter and getter once, which says nothing about what is worth fuzzing.
    """
    return {name: 2 for name, fed in calls if fed}
