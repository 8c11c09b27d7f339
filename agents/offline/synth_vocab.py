"""The words C APIs name their functions with, and what they say about ownership.

Lifecycle verbs (create, init, destroy), data verbs (produce, consume, print), names of
functions generated code leaves alone, and naming conventions for handing an object over.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from agents.offline.synth_finders import words
from agents.offline.type_table import active
from fuzzkit.vocabulary import ordered, words_of

CREATE = words_of("make") | words_of("make_by_reading")
INIT = words_of("init")
DESTROY = words_of("release")
# A parameter naming the object a call adds what it makes to (`load(top, text)`).
PARENT_NAMES = re.compile(r"(top|parent|root|tree)(_?node)?", re.I)
# A name ending so (`buf_alloc_ptr(b)`) says where an object keeps its memory: no new block.
POINTER_NOUNS = frozenset({"ptr", "pointer", "addr", "address"})
# A streaming parser's end call hands back what the fed chunks built (`lib_parser_finish(p)`).
FINISH = words_of("finish")
# A parameter saying the piece passed is the input's last (`is_final`, `terminate`, `eof`); a
# `more` flag says the opposite (pieces follow), so it is not one.
LAST_PIECE = re.compile(r"(final|last|done|finish|terminat|eof)", re.I)
PRODUCE = words_of("produce")
CONSUME = words_of("consume")
PRINT = words_of("write")
# Functions that alias caller memory or change process-wide state: ownership of what they
# keep cannot be inferred from a prototype, so generated code leaves them alone.
# Variants named for skipping validation (node_string_nocheck) trust their input: generated
# code uses them only when they are the target. Functions that load code from a file
# (extensions, plugins, dlopen) would run whatever a fuzz-made path names. A reference count's
# increment (`x_ref(obj)`) does nothing to fuzz and leaks the object unless dropped again.
RISKY = re.compile(
    r"Reference|InitHooks|set_allocator|SetAllocator|atexit|signal|nocheck|no_check|unchecked|_unsafe"
    r"|load_?extension|plugin|dlopen|_ref$",
    re.I,
)
DESTROY_RANK = list(ordered("release"))
VERBS = CREATE | INIT | DESTROY | PRODUCE | CONSUME | PRINT | FINISH


_MAKER_WORDS = words_of("make") | words_of("init")
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def maker_stem(name: str) -> str:
    """The family a constructor names before its verb (``acmeCreatePushCtxt`` -> ``acme``).

    The verb may sit anywhere in the name (``html_new_reader``, ``tagCreateMemoryCtxt``); a name
    with none, or that starts with one, is its own family.
    """
    for match in _WORD.finditer(name):
        if match.start() > 0 and match.group().lower() in _MAKER_WORDS:
            return name[: match.start()]
    return name


_HANDOVER = {"take", "adopt", "give"}
_SETTERS = words_of("consume") | {"set", "setn"}


def transfers_ownership(name: str) -> bool:
    """Whether the name says the callee takes the object passed to it, even when it fails.

    ``node_object_set_new`` and ``node_array_append_new`` (a setter's ``_new`` form "steals
    the reference"), ``take``/``adopt``/``give`` in the name: the caller must not release the
    value afterwards, whatever the call returned.
    """
    ws = words(name)
    if set(ws) & _HANDOVER:
        return True
    return any(w == "new" and i > 0 and ws[i - 1] in _SETTERS for i, w in enumerate(ws))


def variant_stem(word: str) -> str | None:
    """The verb of a one-letter variant (``loadb``, ``loads``, ``dumps``, ``getn``).

    Only verbs that make, read or write: ``ends`` must not read as a destructor.
    """
    if len(word) < 4:
        return None
    for suffix in ("fd", "b", "s", "n", "f"):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and stem in (CREATE | PRODUCE | PRINT | CONSUME) - {"end"}:
            return stem
    return None


def fused_verb(word: str, prefixes: list[str], nouns: set[str]) -> str | None:
    """The verb inside one word: after a library prefix (``xmlfree``) or before a type's noun.

    ``newstate`` and ``freestate`` for an API whose objects are ``ac_State``: a lifecycle verb
    fused with the name of a type the API passes, so ``newline`` is nothing without a ``line`` type.
    """
    for prefix in prefixes:
        if word.startswith(prefix) and word[len(prefix) :] in VERBS:
            return word[len(prefix) :]
    lifecycle = CREATE | INIT | DESTROY
    return next((v for n in nouns if word.endswith(n) and (v := word[: -len(n)]) in lifecycle), None)


def risky(function: str) -> bool:
    """Whether generated code leaves ``function`` alone.

    Risky by name, or documented as valid only inside a callback the library makes (called from
    a harness, it reads state that only the library's own call sets up).
    """
    return bool(RISKY.search(function)) or function in active().inside_only


def has_checked_twin(name: str, names: Collection[str]) -> bool:
    """``x_decompress`` beside ``x_decompress_safe``: the unchecked one is for trusted input only."""
    return any(name + w in names for w in ("_safe", "Safe", "_checked", "Checked"))


def names_its_result(name: str, key: str) -> bool:
    """Whether the function's name begins, after the library's prefix, with the type it returns.

    ``x_reader_walker(doc)`` and ``x_reader_for_memory(buf, n)`` return a new ``x_text_reader``:
    named for what they make, not for what they work on (``x_text_reader_current_doc(r)`` begins
    with its parameter's type). The prefix is a first word the two names share.
    """
    fn_words, type_words = words(name), words(key.lstrip("_"))
    if fn_words[:1] == type_words[:1]:  # `db *db_context_handle(ctx)`: the prefix names no type
        fn_words, type_words = fn_words[1:], type_words[1:]
    return bool(fn_words) and fn_words[0] in type_words
