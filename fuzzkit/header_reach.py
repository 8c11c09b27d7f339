"""Following a library's types from its API through typedefs, pointers, arrays and record fields.

Part of reading header facts (:mod:`fuzzkit.header_facts_collect`): what the API's parameters
and results reach becomes the facts' typedefs and records, and the enums they name.
"""

from __future__ import annotations

import re
from typing import Any

from fuzzkit.header_facts import Record, Typedef

MAX_RECORDS = 40

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

    def record(self, t: Any) -> None:
        """Take a struct or union (up to ``MAX_RECORDS``) and follow its fields."""
        canonical = t.get_canonical().spelling
        if (canonical in self.records or len(self.records) >= MAX_RECORDS or "__" in canonical
                or _UNNAMED.search(canonical)):
            return
        cur = self.record_cursors.get(canonical) or t.get_declaration()
        kind = "union" if cur.kind == self.ci.CursorKind.UNION_DECL else "struct"
        tag = "" if cur.is_anonymous() else cur.spelling
        names = tuple(n for n, td in self.typedefs.items() if td.canonical == canonical)
        definition = cur.get_definition()
        fields: list[tuple[str, str]] = []
        if definition is not None:
            for f in definition.type.get_fields():
                fields.append((f.spelling, _UNNAMED.sub("{...}", f.type.spelling)))
        self.records[canonical] = Record(kind, tag, names, tuple(fields), definition is None)
        if definition is not None:
            for f in definition.type.get_fields():
                if not _UNNAMED.search(f.type.spelling):
                    self.type(f.type)
