"""What a library's API says about its objects: who creates, initializes, feeds and frees them.

Inferred from prototypes and naming conventions, as a reader of an unfamiliar header would.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Collection, Mapping
from functools import cached_property
from typing import Any

from agents.offline import ckinds, synth_vocab, type_releasers, type_table
from agents.offline.synth_finders import ApiFinders, makes_new_text, sets_up_decoding, words
from agents.offline.synth_handles import by_name, handle_name, handle_types, out_slot
from agents.offline.synth_types import Lifecycle
from agents.offline.synth_vocab import CREATE, DESTROY, DESTROY_RANK, FINISH, INIT, PRINT, VERBS
from fuzzkit.api import FunctionDecl
from fuzzkit.usage_models import RecordFields
from fuzzkit.vocabulary import alternation, undone_by, words_of

_CONVERSION = re.compile(r"[a-z]2[a-z]|_to_[a-z]", re.I)
_UNDOES = undone_by()


def _releases(fn: FunctionDecl) -> bool:
    """A destructor hands back no record by value (`iter_end(obj)` returning an iterator does)."""
    ret = fn.return_type
    if ckinds.is_function_pointer(ret):
        return False  # `get_close_proc(obj)` hands back the close hook: a getter
    by_value = ckinds.resolve(ret).startswith(("struct ", "union ")) or type_table.active().record(ret)
    return ckinds.is_pointer(ret) or not by_value


class ApiIndex(ApiFinders):
    """Lookups over one library's API, computed once per call of a public function."""

    def __init__(self, api: list[FunctionDecl]) -> None:
        self.api = list(api)
        self.by_name = {f.name: f for f in self.api}
        counts: Counter[str] = Counter()
        for f in self.api:
            if f.name[:1].islower():
                for n in (2, 3):
                    counts[f.name[:n]] += 1
        self._family = sorted((p for p, c in counts.items() if c >= 4), key=len, reverse=True)
        spelled = [t for f in self.api for t in (f.return_type, *(p.type for p in f.params))]
        types = {ckinds.struct_type(t) for t in spelled} - {None}  # whose nouns fuse with verbs
        self._nouns = {w for t in types for w in words(str(t)) if len(w) > 2} - set(self._family)
        # Overrides from guidance ("must be released with X", "initialise with X before Y").
        self.preferred_destroy: dict[str, str] = {}
        # maker -> the releaser the library's own code gives what it made (over the type's)
        self.made_destroy: dict[str, str] = {}
        self._lifecycles: dict[str, Lifecycle] = {}
        # name -> (declaration, roles) by synth_roles; container type -> its searches by synth_fill
        self.role_cache: dict[str, tuple[FunctionDecl, list[Any]]] = {}
        self.filler_cache: dict[str, list[FunctionDecl]] = {}
        self.preferred_init: dict[str, str] = {}
        # function -> parameter index -> the named constants the library's own code passes there
        self.usage_constants: dict[str, dict[int, list[str]]] = {}
        # function -> parameter index -> the constant the target's own usage sets it up with
        self.usage_setup: dict[str, dict[int, str]] = {}
        # record type -> the fields the library's own code sets on one before passing it
        self.usage_fields: dict[str, RecordFields] = {}
        # object type -> the constructor the library's own code makes one with
        self.usage_makers: dict[str, str] = {}
        # the calls the target's usage makes after it
        self.usage_after: list[str] = []

    def made_as_usage(self, makers: Mapping[str, str]) -> None:
        """Take ``type -> maker`` from the library's own usage (makers the API declares)."""
        self.usage_makers = {k: m for t, m in makers.items() if m in self.by_name and (k := self.type_key(t))}

    def prefer(self, name: str) -> None:
        """Make ``name`` the destructor or initializer of its first parameter's type."""
        fn = self.by_name.get(name)
        key = self.type_key(fn.params[0].type) if fn and fn.params else None
        if fn is None or key is None:
            return
        if self.kind(fn) == "init" or "init" in name.lower():
            self.preferred_init[key] = name
        elif len(fn.params) == 1:
            self.preferred_destroy[key] = name

    # ----- naming -----
    def verbs(self, name: str) -> list[str]:
        """The verb-like words of a function name, in order (library prefixes stripped)."""
        found = []
        for word in words(name):
            if word in VERBS:
                found.append(word)
                continue
            if stem := synth_vocab.variant_stem(word):
                found.append(stem)
                continue
            if fused := synth_vocab.fused_verb(word, self._family, self._nouns):
                found.append(fused)
        return found

    def last_verb(self, name: str, among: Collection[str] | None = None) -> str | None:
        """The last verb of the name (optionally only verbs in ``among``)."""
        verbs = [v for v in self.verbs(name) if among is None or v in among]
        return verbs[-1] if verbs else None

    def kind(self, fn: FunctionDecl) -> str:
        """``destroy``, ``init``, ``create`` or ``other`` by the name's last lifecycle verb."""
        verb = self.last_verb(fn.name, CREATE | INIT | DESTROY)
        if verb in DESTROY:
            return "destroy"
        if verb in INIT:
            return "init"
        # `text2tree`, `array_to_tree`: a conversion that makes the thing named after "to".
        return "create" if verb in CREATE or _CONVERSION.search(fn.name) else "other"

    @staticmethod
    def stem(name: str) -> str:
        """The name before its lifecycle verb (``lib_decodeInit_`` -> ``lib_decode``)."""
        match = re.search(rf"(?i)(init\w*|{alternation('make')}|{alternation('release')}|parse\w*)$", name)
        return name[: match.start()] if match else name

    # ----- types -----
    def type_key(self, ctype: str) -> str | None:
        """The object type a parameter or return type refers to (struct pointer or handle)."""
        if ckinds.is_struct_pointer(ctype):
            return ckinds.base_name(ctype)
        if ctype and by_name(ctype) and handle_name(ctype) in self.handle_types:
            return handle_name(ctype)
        return None

    @cached_property
    def handle_types(self) -> set[str]:
        """Named non-scalar types passed by value that a function returns and another closes."""
        return handle_types(self.api, lambda f: self.kind(f) == "destroy",
                            lambda f: self.kind(f) in ("create", "init"))

    def is_handle(self, type_key: str) -> bool:
        """Whether the type is an opaque handle passed by value (``lib_file``)."""
        return type_key in self.handle_types

    def first_object(self, fn: FunctionDecl) -> str | None:
        """The type of the first object parameter."""
        for p in fn.params:
            key = self.type_key(p.type)
            if key:
                return key
        return None

    # ----- lifecycles -----
    def lifecycle(self, type_key: str) -> Lifecycle:
        """Constructors, initializers and destructors of ``type_key``, best first."""
        if type_key not in self._lifecycles:
            self._lifecycles[type_key] = self._lifecycle(type_key)
        life = self._lifecycles[type_key]
        return Lifecycle(type_key, list(life.create), list(life.init), list(life.destroy))

    def _lifecycle(self, type_key: str) -> Lifecycle:
        life = Lifecycle(type_key)
        for f in self.api:
            ret = self.type_key(f.return_type)
            first = self.type_key(f.params[0].type) if f.params else None
            kind = self.kind(f)
            if (
                ret == type_key
                and self.returns_owned(f)
                and not any(self.type_key(p.type) == type_key for p in f.params)
            ) or self.out_created(f) == type_key:
                life.create.append(f.name)
            elif (first == type_key and kind == "init" and ckinds.is_pointer(f.params[0].type)
                  and not ckinds.is_const_target(f.params[0].type) and ret in (None, type_key)
                  and (ret == type_key or not ckinds.is_pointer(f.return_type))):
                # An initializer fills caller memory through a pointer; a handle passed by
                # value (`typedef struct s *handle_t`) can only come from a constructor. It
                # returns a status or nothing: one returning a string is a getter
                # (`get_tag_start(obj, n)`, "start" notwithstanding).
                life.init.append(f.name)
            elif first == type_key and kind == "other" and sets_up_decoding(f, type_key):
                life.init.append(f.name)
            elif first == type_key and kind == "destroy" and len(f.params) == 1 and _releases(f):
                life.destroy.append(f.name)
        life.create.sort(key=lambda n: (len(self.by_name[n].params) > 0, n))
        life.init.sort(key=lambda n: (len(self.by_name[n].params), len(n), n))
        return life

    def out_slot(self, fn: FunctionDecl) -> int | None:
        """The ``T **`` parameter through which a constructor hands out a new object.

        ``codec_create_context(codec_ctx **ctxPtr, unsigned version)`` returns an error code and
        the object through ``ctxPtr``: an opaque type can only come from there, never by value.
        """
        kind = self.kind(fn)
        if kind not in ("create", "init") or self.type_key(fn.return_type) and self.returns_owned(fn):
            return None
        return out_slot(fn, kind, self.is_handle)

    def out_created(self, fn: FunctionDecl) -> str | None:
        """The type a constructor hands out through its ``T **`` parameter, if it does."""
        slot = self.out_slot(fn)
        return ckinds.base_name(fn.params[slot].type) if slot is not None else None

    def destructor(self, type_key: str, near: str = "") -> str | None:
        """The destructor of ``type_key`` whose stem best matches ``near`` (a creator's name)."""
        # The library's own code's releaser, unless it is another object's that takes this one
        # along (`destroy_read_struct(&rd, &info, NULL)` is no releaser of `info` alone).
        if near in self.made_destroy and self._releases_first(self.made_destroy[near], type_key):
            return self.made_destroy[near]
        preferred = self.preferred_destroy.get(type_key, "")
        if preferred and self._releases_first(preferred, type_key):
            return preferred
        paired = type_releasers.producer_releaser(near) if near else None  # the header ties it to the maker
        counted, fits = self.counted(type_key), lambda o: not near or type_releasers.releases_from(o, near)
        options = [o for o in self.lifecycle(type_key).destroy if fits(o)]
        # The documented pairing (a counted type drops its reference instead), or the Types section's.
        if paired and paired != "free" and not counted or not options:
            return paired or type_releasers.type_releaser(type_key, producer=near)
        options = list(dict.fromkeys(options + [o for o in type_releasers.releasers_of(type_key) if fits(o)]))
        stem, made = self.stem(near), self.last_verb(near, CREATE | INIT) or ""
        def score(name: str) -> tuple[int, int, int, int, int, int, str]:
            common = len(os.path.commonprefix([stem, self.stem(name)]))
            verb = self.last_verb(name, DESTROY) or ""
            rank = DESTROY_RANK.index(verb) if verb in DESTROY_RANK else len(DESTROY_RANK)
            paired = verb == _UNDOES.get(made)  # open/close: what undoes the creator's verb
            first = counted and verb == "unref"  # a counted type's reference dropped
            return (-first, -(self.stem(name) == stem), -paired, -common, rank, len(name), name)

        return sorted(options, key=score)[0]

    def _releases_first(self, name: str, type_key: str) -> bool:
        """Whether ``name``'s first parameter is a ``type_key`` object (or its address)."""
        fn = self.by_name.get(name)
        if fn is None or not fn.params:
            return False
        first = ckinds.resolve(fn.params[0].type)
        return type_key in (self.type_key(first), self.type_key(ckinds.pointee(first)))

    def returns_owned(self, fn: FunctionDecl) -> bool:
        """Whether the caller must free what ``fn`` returns (by the name's verbs)."""
        ret = fn.return_type
        if not ckinds.is_pointer(ret) and (not self.type_key(ret) or ckinds.is_enum_like(ret)):
            return False  # a status code is no object, whatever the documentation says of free()
        handle = self.type_key(ret)
        inside = [p.name for p in fn.params if handle and self.type_key(p.type) == handle]
        if any(map(synth_vocab.PARENT_NAMES.fullmatch, inside)):
            return False  # made into the parent it was given (`load(top, text)`): the parent's
        if handle and self.is_handle(handle):
            # A handle type has a releaser (``handle_types``), const pointer or not; one found
            # inside another of its type (`tree_get(tree, path)`) belongs to that one.
            return not (inside and set(self.verbs(fn.name)) & {"get", "find", "lookup"})
        if self.documented_releaser(fn):
            return True  # the header ties a releaser to it: owned, const pointer or not
        if fn.name in type_table.active().borrows or (ckinds.is_pointer(ret) and ckinds.is_const_target(ret)):
            return False  # documented as the library's, or a const pointer
        if fn.params and words(fn.name)[-1] in synth_vocab.POINTER_NOUNS and self.type_key(fn.params[0].type):
            return False  # `buf_alloc_ptr(b)`: where an object keeps its memory, not a new block
        verbs = self.verbs(fn.name)
        if "get" not in verbs and makes_new_text(fn):
            return True
        if ckinds.is_string(ret) or ckinds.is_bytes(ret):
            return (
                any(v in PRINT | words_of("make") for v in verbs)
                and "get" not in verbs
            )
        last = self.last_verb(fn.name, CREATE | FINISH | {"get", "add", "find", "lookup"})
        if last is None and not self.verbs(fn.name) and self._noun_constructor(fn):
            return True
        return last in CREATE | FINISH or (last is None and self._made_from_input(fn))

    def _noun_constructor(self, fn: FunctionDecl) -> bool:
        """``node_t *node_string(const char *value)``: a new object named by its type alone.

        A function without a verb that returns a non-const object pointer, takes no object
        (so it is no accessor) and only values or read-only data, for a type the API destroys.
        """
        key = ckinds.struct_type(fn.return_type)
        if key is None or ckinds.is_const_target(fn.return_type):
            return False
        if any(self.type_key(p.type) or ckinds.is_function_pointer(p.type)
               or (ckinds.is_pointer(p.type) and not ckinds.is_const_target(p.type)) for p in fn.params):
            return False
        return self._destroyed(key)

    def documented_releaser(self, fn: FunctionDecl) -> str | None:
        """What the header says releases ``fn``'s result, or a same-signature variant's.

        Variants documented once for the group (``decode_rgb`` documented, ``decode_bgr``
        "the same, in another order") share the ownership rule of the documented one.
        """
        found = type_releasers.producer_releaser(fn.name)
        if found or ckinds.is_const_target(fn.return_type):
            return found
        shape = (fn.return_type, [p.type for p in fn.params])
        for other in self.api:
            if other.name != fn.name and (other.return_type, [p.type for p in other.params]) == shape:
                found = type_releasers.producer_releaser(other.name)
                if found:
                    return found
        return None

    def _made_from_input(self, fn: FunctionDecl) -> bool:
        """``dec_t *x_idecode(const uint8_t *data, size_t n, opts_t *o)``: a new object from bytes.

        Whatever its verb: a non-const object pointer of a type no parameter is, from read-only data
        or named first by that type (``x_reader_walker(doc)``), with a destructor for that type.
        """
        key = ckinds.struct_type(fn.return_type)
        if key is None or ckinds.is_const_target(fn.return_type):
            return False
        if any(ckinds.struct_type(p.type) == key or self.type_key(p.type) == key for p in fn.params):
            return False
        data = synth_vocab.names_its_result(fn.name, key) or any(
            ckinds.is_pointer(p.type) and ckinds.is_const_target(p.type)
            and (ckinds.is_bytes(p.type) or ckinds.is_string(p.type)
                 or bool(ckinds.blob_fields(ckinds.struct_type(p.type) or ""))) for p in fn.params)
        return data and self._destroyed(key)

    def _destroyed(self, key: str) -> bool:
        """Whether the API has a one-argument destructor of struct ``key``."""
        return any(
            len(f.params) == 1 and ckinds.struct_type(f.params[0].type) == key and self.kind(f) == "destroy"
            for f in self.api
        )
