"""Signature twins: API functions used the same way, by their canonical signature and their names.

A call that crashed by misuse teaches about its family: functions taking and returning the same
canonical types, named alike (``doc_parse_file(ctx)`` and ``doc_parse_entity(ctx)``,
``obj_convert_number(obj)`` and ``obj_convert_string(obj)``), are set up the same way and fail
the same way. The canonical types come from the library's header (typedef name -> the type
behind it), so two typedef names of one struct are one type.

A family also spans signatures when the functions work one object the same way and their names
differ only at the end (``cipher_crypt_cbc(ctx, ...)``, ``cipher_crypt_ctr(ctx, ...)``;
``conn_set_hs_own_cert(conn, ...)``, ``conn_set_hs_ca_chain(conn, ...)``): the same object, the
same result type, names that share their leading words past the prefix, two when only the last
word differs, three when the last two do. An object one of them crashed on (built without the
setup it needs, or outside the phase the calls are for) fails the others too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from fuzzkit.api import FunctionDecl


def signature_twins(name: str, api: Sequence[FunctionDecl], canonical: Mapping[str, str]) -> list[str]:
    """The API functions with ``name``'s signature whose names share a word with it past the prefix.

    Functions without a pointer parameter have no twins (a family by shape needs an object).
    """
    decl = next((f for f in api if f.name == name), None)
    if decl is None or not any("*" in canonical_type(p.type, canonical) for p in decl.params):
        return []
    key, words = _signature(decl, canonical), set(name_words(name))
    return [f.name for f in api if f.name != name and _signature(f, canonical) == key
            and words & set(name_words(f.name))]


def twins(name: str, api: Sequence[FunctionDecl], canonical: Mapping[str, str]) -> list[str]:
    """``name``'s signature twins, then its object twins (see :func:`object_twins`)."""
    found = signature_twins(name, api, canonical)
    return [*found, *(n for n in object_twins(name, api, canonical) if n not in found)]


def object_twins(name: str, api: Sequence[FunctionDecl], canonical: Mapping[str, str]) -> list[str]:
    """The API functions working ``name``'s object with its result type, named alike but at the end.

    The object is the first parameter, a pointer to a record or opaque type; the names' words
    past the prefix (:func:`name_words`) share a stem: at least two leading words when the
    names differ only in their last word, at least three when they differ in the last two.
    """
    decl = next((f for f in api if f.name == name), None)
    key = _object_key(decl, canonical) if decl else None
    if key is None:
        return []
    return [f.name for f in api if f.name != name and _object_key(f, canonical) == key
            and _named_alike(name_words(name), name_words(f.name))]


def slot_twins(name: str, api: Sequence[FunctionDecl], canonical: Mapping[str, str]) -> list[str]:
    """The API functions working ``name``'s object into its result type, named alike but for one word.

    ``list_add_int_item(list, ...)`` and ``list_add_text_item(list, ...)``: one word names what
    fills the same slot of the same object, so what each hands back is held the same way,
    whatever else the call takes (see :func:`object_twins` for the object).
    """
    decl = next((f for f in api if f.name == name), None)
    key = _object_key(decl, canonical) if decl else None
    words = name_words(name)
    if key is None or len(words) < 2:
        return []
    def one_apart(other: list[str]) -> bool:
        return len(other) == len(words) and sum(x != y for x, y in zip(words, other, strict=True)) == 1
    return [f.name for f in api if f.name != name and _object_key(f, canonical) == key
            and one_apart(name_words(f.name))]


def _named_alike(a: list[str], b: list[str]) -> bool:
    """Whether two names' words share a stem long enough for what differs after it (see above)."""
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    rest = max(len(a), len(b)) - common
    return (common >= 2 and rest == 1) or (common >= 3 and rest == 2)


def called_on_an_object(name: str, api: Sequence[FunctionDecl], canonical: Mapping[str, str]) -> bool:
    """Whether ``name`` takes an object: a parameter pointing at a record or opaque type.

    What a function returns can stay owned by the object it was called on (a child, a field it
    fills) only when there is one: ``parse(const char *text, size_t len)`` takes none, and what
    it returns is its caller's.
    """
    decl = next((f for f in api if f.name == name), None)
    for p in decl.params if decl else ():
        ctype = canonical_type(p.type, canonical)
        if ctype.count("*") == 1 and ctype.rstrip("*") and ctype.rstrip("*") not in SCALARS:
            return True
    return False


def kept_family(name: str, api: Sequence[FunctionDecl], canonical: Mapping[str, str]) -> list[str]:
    """What "what ``name`` returns stays its object's" covers: ``name`` and its slot twins.

    Nothing when ``name`` is called on no object (:func:`called_on_an_object`): what it returns
    is its caller's, and such a claim was learned wrong.
    """
    if not called_on_an_object(name, api, canonical):
        return []
    return [name, *slot_twins(name, api, canonical)]


def _object_key(decl: FunctionDecl, canonical: Mapping[str, str]) -> tuple[str, str] | None:
    """``(object type, result type)`` when the first parameter points at a record or opaque type."""
    if not decl.params:
        return None
    first = canonical_type(decl.params[0].type, canonical)
    base = first.rstrip("*")
    if first.count("*") != 1 or not base or base in SCALARS:
        return None
    return base, canonical_type(decl.return_type, canonical)


def resolve_typedefs(ctype: str, canonical: Mapping[str, str]) -> str:
    """``ctype`` with a typedef name followed to the type behind it (qualifiers and stars kept)."""
    text = ctype.strip()
    for _ in range(4):  # typedef chains are short
        name = re.sub(r"\b(const|volatile|restrict)\b|\*", " ", text).split()
        if len(name) != 1 or name[0] not in canonical:
            break
        text = text.replace(name[0], canonical[name[0]], 1)
    return " ".join(text.split())


def canonical_type(spelling: str, canonical: Mapping[str, str]) -> str:
    """A type spelling with typedefs followed to their canonical type, qualifiers and tags left out."""
    resolved = resolve_typedefs(spelling, canonical)
    return re.sub(r"\b(const|volatile|restrict|struct|union|enum)\b|\s+", "", resolved)


SCALARS = {"void", "char", "unsignedchar", "signedchar", "short", "unsignedshort", "int", "unsigned",
            "unsignedint", "long", "unsignedlong", "longlong", "unsignedlonglong", "float", "double",
            "size_t", "ssize_t", "uint8_t", "int8_t", "uint16_t", "int16_t", "uint32_t", "int32_t",
            "uint64_t", "int64_t", "bool", "_Bool"}


def _signature(decl: FunctionDecl, canonical: Mapping[str, str]) -> tuple[str, ...]:
    types = (decl.return_type, *(p.type for p in decl.params))
    return tuple(canonical_type(t, canonical) for t in types)


def name_words(name: str) -> list[str]:
    """The words of a function name after its first (the library's prefix), digits left out."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", name)
    return [w.lower() for w in words[1:]]
