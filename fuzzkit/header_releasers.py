"""Which functions release what a library's API makes, read from names, types and comments.

Part of reading header facts (:mod:`fuzzkit.header_facts_collect`). A function named with a
release verb and taking one pointer releases that pointer's type, or, for a ``void *``, the
records its name or documentation names; a comment naming a releaser (or ``free()``, or the
allocator whose memory a releaser frees) tells what releases a producer's result.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from fuzzkit.api import FunctionDecl, Param
from fuzzkit.doc_sentences import affirmed, own_sentences
from fuzzkit.header_facts import Record, Releaser, _base, _words
from fuzzkit.release_names import closes_a_part, common_words, whole_first
from fuzzkit.vocabulary import alternation, ordered, verb_before, words_of


def _said(kind: str) -> list[str]:
    """The verbs of ``kind`` as documentation says them: ``free``, ``freed``, ``freeing``."""
    forms = []
    for w in ordered(kind):
        forms += [w, w + ("d" if w.endswith("e") else "ed"),
                  (w[:-1] if w.endswith("e") and not w.endswith("ee") else w) + "ing"]
    return forms


RELEASE_VERBS = ordered("release")
# `obj_put(obj)` drops a reference when its documentation says so; else "put" stores something.
_REFCOUNT_DOC = re.compile(r"\b(reference count|refcount|ref count|references?)\b", re.I)
_FREE_DOC = re.compile(r"\b(free\s*\(\s*\)|with\s+free\b|using\s+free\b|by\s+free\b|call\s+free\b)",
                       re.I)
# "Set allocator to NULL to use malloc() and free()": an allocator's description, not a release.
_DEFAULT_ALLOCATOR = re.compile(r"\bmalloc\s*\(\s*\)\s*(?:and|or|/|,)\s*free\s*\(\s*\)", re.I)
# "It is the caller's responsibility to free the returned buffer": a returned text or byte buffer
# with no releaser named goes back to free().
_CALLER_FREES = re.compile(r"\b(?:caller|user|application|you)\b[^.]{0,60}?\bfree(?:d|ing)?\b[^.]{0,40}?"
                           r"\b(?:returned|result|buffer|string|it)\b"
                           # "Returns a new string (to be freed by the caller)"
                           r"|\b(?:freed|deallocated|released)\s+by\s+(?:the\s+)?(?:caller|user|application)\b",
                           re.I)
_FREEING_DOC = re.compile(rf"\b(?:{'|'.join(_said('release_said'))})\b", re.I)
_STATUS_OUT = re.compile(r"^(?:(?:const|volatile|unsigned|signed)\s+)*(?:short|int|long|long long|_Bool|"
                         r"int\d+_t|uint\d+_t)(?:\s+int)?\s*\*$")
_PREPOSITIONS = {"from", "in", "at", "of", "to", "by", "with", "on", "into", "item", "items"}


def find_releasers(api: Sequence[FunctionDecl], docs: Mapping[str, str], records: Sequence[Record],
                   function_types: Mapping[str, list[Any]], results: Mapping[str, str] | None = None
                   ) -> list[Releaser]:
    """The functions that release what the API makes, with the evidence for each.

    Args:
        api: The library's functions.
        docs: Documentation comments by function name.
        records: The records the API reaches (a ``void *`` releaser is matched to them by name).
        function_types: The libclang argument types of each function by name.
        results: The canonical result type of each function by name (``tag_char *`` ->
            ``unsigned char *``), where libclang gave one.
    """
    out: list[Releaser] = []
    record_names = {n: r for r in records for n in (r.tag, *r.names) if n}
    common = common_words([d.name for d in api])
    # `free_error(handle, str)`: releases what its documentation links to it, given the object.
    with_object: list[str] = []
    for decl in api:
        ws = _words(decl.name)
        verbs = _release_verbs(decl, ws, docs.get(decl.name, ""))
        pointers = _object_pointers(decl, _canonical_params(decl, function_types))
        if verbs and len(pointers) == len(decl.params) == 2 and _base(pointers[0].type) != "void":
            with_object.append(decl.name)
        if not verbs or len(pointers) != 1 or set(ws[verbs[0]:]) & _PREPOSITIONS:
            continue  # `delete_item_from_list(list, i)` detaches a part, it releases no object
        ws = [w for w in ws if w not in common]
        ptype = pointers[0].type
        base = _base(ptype)
        if base != "void" and not closes_a_part(ws, base, common):
            out.append(Releaser(function=decl.name, releases=ptype, evidence="parameter type"))
            continue
        if base != "void":
            continue
        # Named by its record: the releaser's nouns are the record's, or the record's are among
        # the releaser's (`ftp_free_ctxt(void *)` releases no `parser_ctxt` for sharing `ctxt`).
        nouns = set(ws) - set(RELEASE_VERBS)
        named = [n for n in record_names if nouns and (rwords := set(_words(n)) - common)
                 and (rwords <= nouns or nouns <= rwords)]
        doc = docs.get(decl.name, "")
        documented = [n for n in record_names if re.search(rf"\b{re.escape(n)}\b", doc)]
        documented += [d.name for d in api if d.name != decl.name
                       and re.search(rf"\b{re.escape(d.name)}\b", doc)]
        for target in dict.fromkeys(named + documented):
            evidence = "by name" if target in named else "by documentation"
            out.append(Releaser(function=decl.name, releases=target, evidence=evidence))
        if not named and not documented:
            out.append(Releaser(function=decl.name, releases=ptype, evidence="parameter type"))
    out += _documented_resets(api, docs, out)
    own = own_sentences(api, docs)  # what a producer's documentation says of its own result
    out += _linked_by_documentation(api, own, out, with_object, results or {})
    out += _paired_by_name(api, with_object, out)
    found = _heap_noted(api, out + _allocated_with(api, own, out))
    return whole_first(found, common, RELEASE_VERBS)


def _release_verbs(decl: FunctionDecl, ws: list[str], doc: str) -> list[int]:
    """The positions of ``decl``'s name words that say it releases something.

    ``rxfree(rx_t *)``, ``listfree(list_t *)``, ``freecode(prog_t *)``: one word fuses the noun
    and the verb (not ``freeze``); ``put`` last, documented as dropping a reference. None after
    a property verb: ``set_end_element_handler(parser, fn)`` sets a handler, it ends nothing.
    """
    verbs = [i for i, w in enumerate(ws) if w in RELEASE_VERBS or (
        w == "put" and i == len(ws) - 1 and len(decl.params) == 1 and _REFCOUNT_DOC.search(doc)) or (
        i == len(ws) - 1 and len(w) > 4 and len(decl.params) == 1
        and (w.endswith("free") or (w.startswith("free") and not w.startswith("freez"))))]
    return [] if verbs and verb_before(ws, verbs[0]) else verbs


def _object_pointers(decl: FunctionDecl, canonical: list[str]) -> list[Param]:
    """The data pointer parameters; but for the object, ``close_file(file *f, int *error)``'s status out.

    A pointer to a plain integer beside one other pointer is a status handed back, not a second
    object released.
    """
    typed = list(zip(decl.params, canonical, strict=True))
    pointers = [p for p, canon in typed if "*" in canon and "(*)" not in canon]
    objects = [p for p, canon in typed if p in pointers and not _STATUS_OUT.match(canon)]
    return objects if len(objects) == 1 else pointers


def _heap_noted(api: Sequence[FunctionDecl], found: list[Releaser]) -> list[Releaser]:
    """Releasers of a type some maker returns (``T *t_new(void)``) say so: they free the struct itself.

    A struct of that type on the caller's stack must not be given to them (a bad free).
    """
    def spelled(ctype: str) -> str:  # `T *` or a pointer typedef, as written
        return re.sub(r"\b(const|volatile)\b|\s+", "", ctype)

    made = {spelled(d.return_type) for d in api if set(_words(d.name)) & _MAKE_VERBS}
    return [r.model_copy(update={"heap": True})
            if r.evidence == "parameter type" and spelled(r.releases) in made else r for r in found]


# "This function frees any auxiliary resources that the structure may contain."; "free a bignum".
_FREES_HELD = re.compile(rf"^\s*{alternation('release_said')}s?\b|\b{alternation('release_said')}s\b"
                         r"[^.;]*\b(resources|memory|buffers|contents)\b", re.I)


def _documented_resets(api: Sequence[FunctionDecl], docs: Mapping[str, str],
                       found: list[Releaser]) -> list[Releaser]:
    """``void x_attrs_reset(x_attrs *a)`` documented to free what the structure holds.

    Named without a release verb, it is the releaser of its one parameter's type when that
    type has no releaser by name; a record filled with copies (``x_attrs_set_params(&a, buf,
    n)``) leaked on every input without it. So is ``num_clear(num *)`` beside ``num_init(num *)``.
    """
    typed = {_base(r.releases) for r in found if r.evidence == "parameter type"}
    out = []
    for decl in api:
        if len(decl.params) != 1 or "*" not in decl.params[0].type or decl.return_type.strip() != "void":
            continue
        base = _base(decl.params[0].type)
        undoes = [w if w != "clear" else "init" for w in _words(decl.name)]
        paired = "clear" in _words(decl.name) and any(_words(d.name) == undoes and d.params
                                                     and _base(d.params[0].type) == base for d in api)
        if base == "void" or base in typed or not (
                paired or _FREES_HELD.search(affirmed(docs.get(decl.name, "")))):
            continue
        out.append(Releaser(function=decl.name, releases=decl.params[0].type,
                            evidence="parameter type, by documentation"))
        typed.add(base)
    return out


def _linked_by_documentation(api: Sequence[FunctionDecl], docs: Mapping[str, str], found: list[Releaser],
                             with_object: list[str], results: Mapping[str, str]) -> list[Releaser]:
    """Producers whose documentation names a releaser (or ``free()``) for what they return."""
    out: list[Releaser] = []
    releasing = [r.function for r in found] + with_object
    closes = {r.function: _base(r.releases) for r in found if r.evidence == "parameter type"}
    for decl in api:
        if decl.name in releasing:
            continue  # a releaser's documentation tells what it frees, not what it allocates
        doc = affirmed(docs.get(decl.name, ""))
        # "freed when x_close() is called" of a part made from an x: it belongs to the x
        held = {fn for fn, t in closes.items() if _base(decl.return_type) != t
                and any(_base(p.type) == t for p in decl.params)}
        named = [fn for fn in dict.fromkeys(releasing)
                 if fn != decl.name and fn not in held and re.search(rf"\b{re.escape(fn)}\b", doc)]
        for fn in named[:1]:
            out.append(Releaser(function=fn, releases=f"what {decl.name} allocates",
                                evidence="by documentation"))
        doc = _DEFAULT_ALLOCATOR.sub("", doc)
        result = results.get(decl.name, decl.return_type)
        caller_frees = (_returns_buffer(result) and _CALLER_FREES.search(doc)
                        and not re.search(rf"{_SOURCE}\[?\w+\s*\(", doc, re.I))  # see _allocated_with
        if not named and (_FREE_DOC.search(doc) or caller_frees):
            out.append(Releaser(function="free", releases=f"what {decl.name} allocates",
                                evidence="by documentation"))
    return out


def _returns_buffer(result: str) -> bool:
    """A non-const ``char *``, byte or ``void *`` result: memory, not an object of the library's."""
    ret = re.sub(r"\s+", " ", result).strip()
    return ret.endswith("*") and not ret.startswith("const") and _base(ret) in (
        "char", "unsigned char", "signed char", "uint8_t", "void")


_MAKE_VERBS = words_of("make")


def _paired_by_name(api: Sequence[FunctionDecl], with_object: list[str],
                    found: list[Releaser]) -> list[Releaser]:
    """``doc_free_part(doc *d, part *p)`` releases what ``doc_new_part(doc *d, ...)`` returns.

    A releaser that takes the object a producer made its result from (the same first type) and
    the result's type, named as the producer with its release verb for the producer's make verb
    (or with a release verb added: ``tab_build_free(ctx, t)`` for ``tab_build(ctx)``):
    a part made inside a document's storage must go back through it, and the plain releaser of
    the type (``free_part(part *)``) frees it wrongly (an invalid free). Documentation wins.
    """
    out: list[Releaser] = []
    linked = {r.releases for r in found}
    for name in with_object:
        rel = next(d for d in api if d.name == name)
        rest = [w for w in _words(name) if w not in RELEASE_VERBS]
        for decl in api:
            words = _words(decl.name)
            made = [w for w in words if w in _MAKE_VERBS]
            what = f"what {decl.name} allocates"
            named = (len(made) == 1 and [w for w in words if w not in _MAKE_VERBS] == rest) or words == rest
            if (named and decl.params
                    and what not in linked and _base(decl.params[0].type) == _base(rel.params[0].type)
                    and _base(decl.return_type) == _base(rel.params[1].type)):
                out.append(Releaser(function=name, releases=what,
                                    evidence="by name, given the object it was made in"))
    return out


_SOURCE = r"\b(?:obtained|allocated|got|gotten|comes?|taken|memory)\s+(?:from|by|with|using|through|of)\s+"


def _allocated_with(api: Sequence[FunctionDecl], docs: Mapping[str, str],
                    found: list[Releaser]) -> list[Releaser]:
    """Releasers of what producers return, through the allocator their documentation names.

    ``returns memory obtained from lib_malloc64(); the caller must free it``: released by
    what releases the named allocator's (or a numbered variant's) memory. The allocator is
    named as the memory's source (obtained from, allocated by or with, memory of).
    """
    allocators = {r.releases[5:-10]: r.function for r in found
                  if r.releases.startswith("what ") and r.function != "free"}
    released = {r.releases for r in found}
    releasers = set(allocators.values())  # a releaser's own documentation names what it frees
    out = []
    for decl in api:
        doc = docs.get(decl.name, "")
        if (f"what {decl.name} allocates" in released or not _FREEING_DOC.search(doc)
                or decl.name in releasers):
            continue
        for alloc, releaser in allocators.items():
            # named as where the memory comes from, not in passing ("might be freed by calls
            # to x_dump()" of a string the library keeps)
            if alloc != decl.name and re.search(rf"{_SOURCE}\[?{re.escape(alloc)}\d*\b", doc, re.I):
                out.append(Releaser(function=releaser, releases=f"what {decl.name} allocates",
                                    evidence="by documentation"))
                break
    return out


def _canonical_params(decl: FunctionDecl, function_types: Mapping[str, list[Any]]) -> list[str]:
    """The parameter types with typedefs resolved (``doc_p`` -> ``struct doc *``)."""
    types = function_types.get(decl.name, [])
    if len(types) != len(decl.params):
        return [p.type for p in decl.params]
    return [t.get_canonical().spelling for t in types]
