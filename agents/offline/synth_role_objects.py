"""Which object a pointer parameter of one of the library's own types is.

The object the call works on, a copy's destination, a child of it, a separate item it keeps a
reference to, one it consumes, one it fills in, or an optional one that gets NULL.
"""

from __future__ import annotations

import re

from agents.offline import ckinds
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_knowledge import always_consumes
from agents.offline.synth_vocab import CONSUME, transfers_ownership
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.vocabulary import words_of

OPTIONAL_NAMES = re.compile(r"(_start$|_end$|directive|hint|opt|reserved|user|extra)", re.I)


def object_role(fn: FunctionDecl, fn_words: set[str], idx: ApiIndex, first_key: str | None, i: int,
                p: Param, key: str) -> str:
    """The role of parameter ``i``, a pointer to the library's ``key``: which object it is."""
    lname = p.name.lower()
    verbs = idx.verbs(fn.name)
    if lname in {"dest", "dst", "target"} | words_of("copy") and set(verbs) & words_of("copy"):
        return "out_object"
    if i == 0:
        # Documented to release it (even on failure) and to hand back one of its type: the result replaces it.
        given_up = always_consumes(fn.name) and idx.type_key(fn.return_type) == key
        return "consumed" if given_up or replaced_by_result(fn, idx, key) else "object"
    if lname in ("item", "child", "node") and fn_words & (words_of("unlink") | {"via"}):
        return "child"
    if "reference" in fn_words:
        # The object keeps a reference, not ownership: a separate item that outlives it.
        return "fresh"
    if transfers_ownership(fn.name) and not ckinds.is_const_target(p.type):
        return "consumed"
    if set(verbs) & CONSUME and not ckinds.is_const_target(p.type):
        # A counted item (`x_ref(T *)` exists) added to another is referenced by it, not given:
        # the harness drops its own reference after (else the item outlives both: a leak).
        return "fresh" if idx.counted(key) and not always_consumes(fn.name) else "consumed"
    if (
        first_key is not None  # a producer steps an object; a plain out struct is a report
        and key != first_key
        and not ckinds.is_const_target(p.type)
        and not ckinds.is_opaque(key)  # the caller cannot hold one to be filled
        and not idx.lifecycle(key).create  # one the library constructs is no struct to fill
        and set(verbs)
        & words_of("produce")
    ):
        return "out_object"
    if OPTIONAL_NAMES.search(lname) and not idx.lifecycle(key).create:
        return "null"
    return "object"


def replaced_by_result(fn: FunctionDecl, idx: ApiIndex, key: str) -> bool:
    """``str_t str_cat(str_t s, const void *t, size_t n)``: the result is ``s``, maybe moved.

    The object comes first and comes back (non-const, owned), nothing else of its type goes in
    but read-only (``str_cat_str(s, const str_t t)``), and the name neither makes nor copies:
    like ``realloc``, the call may free the argument, so once it succeeds only the result is
    used and released (releasing both freed one twice).
    """
    ret = fn.return_type
    writable_peer = any(idx.type_key(p.type) == key and not ckinds.is_const_target(p.type)
                        for p in fn.params[1:])
    return (bool(fn.params) and not ckinds.is_const_target(fn.params[0].type)
            and not ckinds.is_const_target(ret) and idx.type_key(ret) == key and not writable_peer
            and idx.kind(fn) == "other" and idx.returns_owned(fn)
            and not set(idx.verbs(fn.name)) & (words_of("copy") | {"get", "find"}))
