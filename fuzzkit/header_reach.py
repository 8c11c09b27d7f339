"""Following a library's types from its API through typedefs, pointers, arrays and record fields.

Part of reading header facts (:mod:`fuzzkit.header_facts_collect`): what the API's parameters
and results reach becomes the facts' typedefs and records, and the enums they name.
"""

from __future__ import annotations

import re
from typing import Any

from fuzzkit.field_ranges import FieldComments, documented_range
from fuzzkit.header_facts import Record, Typedef

MAX_RECORDS = 40

# A field a documented range applies to: a number (an enum's constants are listed already).
_SCALAR = re.compile(r"(const\s+)?((un)?signed\s+)?(char|short|int|long|long long|float|double|_Bool|bool)"
                     r"(\s+int)?")
_UNNAMED = re.compile(r"\((unnamed|anonymous) (struct|union|enum) at [^)]*\)")


class TypeReach:
    """Follows types from the API through typedefs, pointers, arrays and record fields."""

    def __init__(self, cindex: Any, typedef_cursors: dict[str, Any], record_cursors: dict[str, Any]) -> None:
        """Nothing reached yet; cursors by typedef name and by canonical record spelling."""
        self.ci = cindex
        self.typedef_cursors = typedef_cursors
        self.record_cursors = record_cursors
        self.typedefs: dict[str, Typedef] = {}
        self.records: dict[str, Record] = {}
        self.enum_names: list[str] = []
        self.seen: set[str] = set()
        self.seen_typedefs: set[str] = set()
        self.anonymous: list[tuple[Any, str]] = []
        self.comments = FieldComments()

    def finish(self) -> None:
        """Take the anonymous records met so far (and what their fields reach)."""
        while self.anonymous:
            under, name = self.anonymous.pop(0)
            self.record(under, alias=name)

    def spelling(self, spelling: str) -> None:
        """Follow every typedef named in a type spelling."""
        for word in re.findall(r"[A-Za-z_]\w*", spelling):
            cur = self.typedef_cursors.get(word)
            if cur is not None:
                self.typedef(cur)

    def typedef(self, cur: Any) -> None:
        """Take a typedef (not a compiler builtin) and follow its underlying type."""
        name = cur.spelling
        if name.startswith("__") or name == "va_list":
            return  # compiler builtins: nothing a harness declares
        if name in self.typedefs or name in self.seen_typedefs:
            return
        self.seen_typedefs.add(name)
        under = cur.underlying_typedef_type
        canonical = under.get_canonical().spelling
        if canonical == name:
            # `typedef struct { ... } name;`: the record has no other name. Taken after the
            # named records (:meth:`finish`), in the room their cap leaves.
            if under.get_canonical().kind == self.ci.TypeKind.RECORD:
                self.anonymous.append((under, name))
            return
        self.typedefs[name] = Typedef(name, under.spelling, canonical)
        self.type(under)

    def type(self, t: Any) -> None:
        """Follow a libclang type to the typedefs, records and enums behind it."""
        tk = self.ci.TypeKind
        if t.kind == tk.TYPEDEF:
            self.typedef(t.get_declaration())
            return
        if t.kind == tk.ELABORATED:
            self.type(t.get_named_type())
            return
        key = t.spelling
        if key in self.seen:
            return
        self.seen.add(key)
        if t.kind in (tk.POINTER, tk.LVALUEREFERENCE):
            self.type(t.get_pointee())
        elif t.kind in (tk.CONSTANTARRAY, tk.INCOMPLETEARRAY):
            self.type(t.element_type)
        elif t.kind == tk.FUNCTIONPROTO:
            self.type(t.get_result())
            for a in t.argument_types():
                self.type(a)
        elif t.kind == tk.RECORD:
            self.record(t)
        elif t.kind == tk.ENUM:
            self.enum_names.append(t.get_declaration().spelling)

    def record(self, t: Any, alias: str = "") -> None:
        """Take a struct or union (up to ``MAX_RECORDS``) and follow its fields.

        ``alias`` is the typedef naming an anonymous record (its only name).
        """
        canonical = t.get_canonical().spelling
        # A reserved name (`struct __pthread_x`, `_IO_FILE`'s internals) is the C library's, not
        # the API's; a library's own double underscore inside a name (`LIB__Entry`) is not reserved.
        reserved = (canonical.split() or [""])[-1].startswith("__")
        if (canonical in self.records or len(self.records) >= MAX_RECORDS or reserved
                or _UNNAMED.search(canonical)):
            return
        cur = self.record_cursors.get(canonical) or t.get_canonical().get_declaration()
        kind = "union" if cur.kind == self.ci.CursorKind.UNION_DECL else "struct"
        tag = "" if cur.is_anonymous() or alias else cur.spelling
        names = (alias,) if alias else tuple(n for n, td in self.typedefs.items()
                                             if td.canonical == canonical)
        definition = cur.get_definition()
        fields: list[tuple[str, str]] = []
        ranges: list[tuple[str, int, int]] = []
        if definition is not None:
            for f in definition.type.get_fields():
                fields.append((f.spelling, _UNNAMED.sub("{...}", f.type.spelling)))
                span = documented_range(self.comments.of(f))
                if span is not None and _SCALAR.fullmatch(f.type.get_canonical().spelling):
                    ranges.append((f.spelling, *span))
        self.records[canonical] = Record(kind, tag, names, tuple(fields), definition is None, tuple(ranges))
        if definition is not None:
            for f in definition.type.get_fields():
                if not _UNNAMED.search(f.type.spelling):
                    self.type(f.type)


# A text library may define a table per encoding (ASCII, ISO-8859-x, UTF-8/16/32, EUC, ...): the
# fuzzer chooses among all of them, or the harness never reaches the multibyte code.
MAX_INSTANCES, MAX_PER_TYPE = 48, 24


def library_instances(variables: dict[str, Any], reach: TypeReach) -> list[tuple[str, str]]:
    """``(name, type)`` of the header's global variables of a record type the API uses.

    ``extern const codec_table codec_utf8;`` or ``extern codec_syntax *codec_default_syntax;``:
    where the API takes a pointer to such a record (often full of function pointers), the
    library's own object is the one valid argument, and a zeroed struct crashes it. At most
    ``MAX_PER_TYPE`` of one type, in header order.
    """
    found: list[tuple[str, str]] = []
    per_type: dict[str, int] = {}
    for name, t in variables.items():
        pointee = t.get_pointee() if t.get_canonical().kind == reach.ci.TypeKind.POINTER else t
        record = pointee.get_canonical()
        spelling = re.sub(r"^((const|volatile)\s+)+", "", record.spelling)
        if name.startswith("_") or record.kind != reach.ci.TypeKind.RECORD:
            continue
        if spelling not in reach.records or per_type.get(spelling, 0) >= MAX_PER_TYPE:
            continue
        per_type[spelling] = per_type.get(spelling, 0) + 1
        found.append((name, t.spelling))
    return found[:MAX_INSTANCES]
