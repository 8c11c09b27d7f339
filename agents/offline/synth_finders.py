"""Finding functions with a given job in an API.

The library's free, its version string, a worst-case size bound, input feeders, output setters,
printers, copiers and child getters.
"""

from __future__ import annotations

import os
import re
from functools import cached_property
from typing import TYPE_CHECKING

from agents.offline import ckinds
from agents.offline.synth_io import callback_source
from agents.offline.synth_knowledge import INVERSE_PREFIXES, INVERSES, stream_fields
from fuzzkit.api import FunctionDecl
from fuzzkit.header_releasers import RELEASE_VERBS
from fuzzkit.input_flow import feeders_of, made_type
from fuzzkit.vocabulary import alternation, words_of

if TYPE_CHECKING:
    from agents.offline.synth_api import ApiIndex

FEED = {"input", "feed", "source", "buffer", "string", "memory", "attach", "data"}


def words(name: str) -> list[str]:
    """The lower-case words of an identifier (``acmeNode_PrintUnformatted`` -> acme,node,print,...)."""
    parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)
    return [p.lower() for p in parts if not p.isdigit()]


# Words of a function turning text into new text (`uri_escape(const char *)`), allocated for the caller.
NEW_TEXT = {"escape", "unescape", "quote", "unquote", "canonicalize", "normalize", "concat", "join"}


def sets_up_decoding(fn: FunctionDecl, type_key: str) -> bool:
    """``x_stream_decoder(x_stream *strm, uint64_t memlimit, uint32_t flags)``: named for a decoder.

    A stream struct (input and output cursors) made ready to decode by a function named with a
    noun (``decoder``, ``decompressor``, ``reader``) rather than an init verb: it
    takes the struct and options, no data, and returns a status.
    """
    if not fn.params or ckinds.base_name(fn.params[0].type) != type_key or stream_fields(type_key) is None:
        return False
    nouns = {"decoder", "decompressor", "decompress", "reader"}
    data = any(ckinds.is_bytes(p.type) or ckinds.is_string(p.type) for p in fn.params[1:])
    status = ckinds.is_integer(fn.return_type) or ckinds.is_enum_like(fn.return_type)
    writable = not ckinds.is_const_target(fn.params[0].type)
    return bool(nouns & set(words(fn.name))) and not data and status and writable


def makes_new_text(fn: FunctionDecl) -> bool:
    """``tt_uri_escape(const char *)``: text turned into new text, which the caller then owns.

    Only when no caller buffer could be what it hands back (no writable text or byte parameter).
    """
    if not ckinds.is_string(fn.return_type) or not set(words(fn.name)) & NEW_TEXT:
        return False
    return not any(ckinds.is_pointer(p.type) and not ckinds.is_const_target(p.type)
                   and (ckinds.is_string(p.type) or ckinds.is_bytes(p.type)) for p in fn.params)


class ApiFinders:
    """Lookups by role, mixed into :class:`agents.offline.synth_api.ApiIndex`."""

    api: list[FunctionDecl]

    if TYPE_CHECKING:  # provided by ApiIndex; declared for the type checker only

        def type_key(self, ctype: str) -> str | None:
            """The object type a parameter or return type refers to."""

        def returns_owned(self, fn: FunctionDecl) -> bool:
            """Whether the caller must free what ``fn`` returns."""

        def last_verb(self, name: str, among: set[str] | None = None) -> str | None:
            """The last verb of a function name."""

    def free_function(self) -> str | None:
        """The library's own ``free(void *)`` for memory it hands out, if it has one."""
        for f in self.api:
            if (
                len(f.params) == 1
                and ckinds.strip_const(f.params[0].type) == "void *"
                and re.search(r"free$", f.name, re.I)
            ):
                return f.name
        return None

    def version_function(self, near: str = "", integer: bool = False) -> str | None:
        """A no-argument version function, the one named most like ``near``.

        ``const char *xVersion(void)`` for ABI-checking init functions, or with ``integer`` one
        returning a number (for an ``unsigned version`` parameter).
        """
        found = [
            f
            for f in self.api
            if not f.params
            and "version" in f.name.lower()
            and (
                ckinds.is_integer(f.return_type) and not ckinds.is_bool(f.return_type)
                if integer
                else ckinds.is_string(f.return_type)
            )
        ]
        found.sort(key=lambda f: (-_shared(f.name, near), len(f.name), f.name))
        return found[0].name if found else None

    def bound_function(self, near: str = "") -> FunctionDecl | None:
        """A worst-case output size function (``size_t acme_compress_bound(size_t len)``).

        Its first parameter is the input length and any others are pointers (options that
        may be NULL); among several, the one named most like ``near``
        (``acme_compress_frame_bound`` for ``acme_compress_frame``).
        """
        found = [
            f
            for f in self.api
            if f.params
            and ckinds.is_integer(f.params[0].type)
            and all(ckinds.is_pointer(p.type) for p in f.params[1:])
            and ckinds.is_integer(f.return_type)
            and f.name.lower().endswith("bound")
        ]
        found.sort(key=lambda f: (-_shared(f.name, near), len(f.params), f.name))
        return found[0] if found else None

    def generic_free(self) -> str | None:
        """The library's one ``f(void *)`` release function (``lib_free``), if it has exactly one."""
        found = [f.name for f in self.api if len(f.params) == 1
                 and re.search(alternation("release_memory"), f.name, re.I)
                 and ckinds.strip_const(f.params[0].type) == "void *"]
        return found[0] if len(found) == 1 else None

    def feeders(self, type_key: str) -> list[FunctionDecl]:
        """``f(T *, bytes, len)`` / ``f(T *, text)`` functions that attach input to an object."""
        found = []
        for f in self.api:
            if not f.params or self.type_key(f.params[0].type) != type_key:
                continue
            rest = f.params[1:]
            has_input = any(ckinds.is_bytes(p.type) or ckinds.is_string(p.type) for p in rest)
            ws = set(words(f.name))
            setter = ws & {"input", "feed", "source", "import"} or ("set" in ws and ws & FEED)
            if has_input and setter and "output" not in ws and not ws & {"add", "to"}:
                found.append(f)
            elif callback_source(f):  # `set_read_fn(obj, void *io_ptr, read_fn)`: served by a callback
                found.append(f)
        return sorted(found, key=lambda f: (not re.search("string|buffer|memory", f.name), f.name))

    def input_feeders(self, target: FunctionDecl, type_key: str) -> list[FunctionDecl]:
        """:meth:`feeders` by name, then those the input-flow gate knows by shape alone.

        Drafting and repair share this list: what :mod:`fuzzkit.input_flow` rejects is repaired its way.
        """
        found = list(self.feeders(type_key))
        shaped = [*feeders_of(target, self.api), *feeders_of(target, self.api, made_type(target))]
        found += [f for i, f in enumerate(shaped) if f not in found and f not in shaped[:i]
                  and self.type_key(f.params[0].type) == type_key]
        # The same shape through the Types section (a handle typedef hides its `*`).
        found += [f for f in self.api if f not in found and f.name != target.name
                  and 2 <= len(f.params) <= 3 and self.type_key(f.params[0].type) == type_key
                  and (ckinds.is_bytes(f.params[1].type) or ckinds.is_string(f.params[1].type))
                  and not any(ckinds.is_pointer(p.type) for p in f.params[2:])]
        # `tab_free(ctx, const uint8_t *tables)` has the shape, but releases what it is given
        return [f for f in found if not set(words(f.name)) & set(RELEASE_VERBS)]

    def counted(self, type_key: str) -> bool:
        """Whether ``type_key`` is reference-counted (an ``x_ref(T *)`` exists).

        Its ``x_unref`` then drops the harness's reference, while ``x_free`` destroys it under
        whatever else holds one (an object it was attached to, which frees it again later).
        """
        return type_key in self._counted_types

    @cached_property
    def _counted_types(self) -> set[str]:
        """The types an ``x_ref(T *)`` takes (looked up once per index: destructors ask often)."""
        return {key for f in self.api if words(f.name)[-1:] == ["ref"] and f.params
                and (key := self.type_key(f.params[0].type))}

    def keyers(self, type_key: str) -> list[FunctionDecl]:
        """``f(T *, const bytes *key, bits)`` functions that bind a key to an object (``setkey``).

        A cipher context is set up by its initializer and then keyed; any call on an unkeyed
        one reads a key schedule that was never written. Named ``setkey`` or ``set ... key``,
        taking the object first, then only key bytes, their length and options (a key of a fixed
        size, read whole from a shorter input, would overflow), returning a status.
        """
        found = []
        for f in self.api:
            if not f.params or self.type_key(f.params[0].type) != type_key:
                continue
            ws = set(words(f.name))
            named = "setkey" in ws or {"set", "key"} <= ws
            rest = f.params[1:]
            key = any(ckinds.is_bytes(p.type) and ckinds.is_const_target(p.type) for p in rest)
            sized = any(ckinds.is_integer(p.type) for p in rest)  # a fixed-size key has no length
            # nothing else to build (a callback, another object): keying never stops the object
            plain = all(ckinds.is_bytes(p.type) or ckinds.is_integer(p.type) or ckinds.is_enum_like(p.type)
                        for p in rest)
            if named and key and sized and plain and ckinds.is_integer(f.return_type):
                found.append(f)
        return sorted(found, key=lambda f: (len(f.params), "dec" in words(f.name), f.name))

    def outputs(self, type_key: str) -> list[FunctionDecl]:
        """``f(T *, out...)`` functions that tell an object where to write (``set_output*``)."""
        found = [
            f
            for f in self.api
            if f.params
            and self.type_key(f.params[0].type) == type_key
            and "output" in f.name.lower()
            and len(f.params) > 1
            and not any(ckinds.is_enum_like(p.type) for p in f.params[1:])
        ]
        return sorted(found, key=lambda f: (not re.search("string|buffer|memory", f.name), f.name))

    def printer(self, type_key: str) -> FunctionDecl | None:
        """A function turning a (const) object into an owned string."""
        for f in self.api:
            if (
                len(f.params) == 1
                and self.type_key(f.params[0].type) == type_key
                and ckinds.is_string(f.return_type)
                and self.returns_owned(f)
            ):
                return f
        return None

    def copier(self, type_key: str) -> FunctionDecl | None:
        """A function returning an owned copy of an object (``acme_duplicate``)."""
        for f in self.api:
            if (
                f.params
                and self.type_key(f.params[0].type) == type_key
                and self.type_key(f.return_type) == type_key
                and self.last_verb(f.name) in words_of("copy")
            ):
                return f
        return None

    def child_getter(self, type_key: str) -> FunctionDecl | None:
        """A ``T *get(T *parent, int index)`` accessor returning a borrowed child."""
        for f in self.api:
            if (
                len(f.params) == 2
                and self.type_key(f.params[0].type) == type_key
                and self.type_key(f.return_type) == type_key
                and ckinds.is_integer(f.params[1].type)
                and not self.returns_owned(f)
            ):
                return f
        return None


def _shared(a: str, b: str) -> int:
    """The length of the common prefix of two names."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


_PIECEWISE = words_of("piecewise")


def piecewise_ctor(ctors: list[FunctionDecl], near: str) -> FunctionDecl | None:
    """The push/stream constructor for a target that takes its input in pieces, if any."""
    if not set(words(near)) & _PIECEWISE:
        return None
    found = [c for c in ctors if set(words(c.name)) & _PIECEWISE]
    # The family closest to the target's name (an HTML parser's, not the XML one's), then the simplest.
    return min(found, key=lambda c: (-len(os.path.commonprefix([c.name, near])), len(c.params), c.name),
               default=None)


def inverse_of(idx: ApiIndex, name: str) -> FunctionDecl | None:
    """The API function undoing ``name`` (``acme_compress`` -> ``acme_uncompress``), if any."""
    for a, b in INVERSES:
        # Each case style of the pair: `acme_encode`, `AcmeEncodeRGB`.
        for x, y in dict.fromkeys(((a, b), (b, a), (a.capitalize(), b.capitalize()),
                                   (b.capitalize(), a.capitalize()))):
            if x in name and y not in name:
                cand = name.replace(x, y, 1)
                if cand in idx.by_name:
                    return idx.by_name[cand]
    # Morphology: a verb and its prefixed inverse (`encrypt`/`decrypt`, `xflate` pairs).
    for word in re.findall(r"[a-z]{4,}", name.lower()):
        for p in INVERSE_PREFIXES:
            if not p or not word.startswith(p):
                continue
            stem = word[len(p):]
            for q in INVERSE_PREFIXES:
                if q == p or not q or len(stem) < 4:
                    continue
                pos = name.lower().find(word)
                cand = name[:pos] + q + stem + name[pos + len(word):]
                if cand in idx.by_name:
                    return idx.by_name[cand]
    return None
