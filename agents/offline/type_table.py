"""The prompt's ``## Types`` section read back into a table the C type classifier consults.

A real model reads typedefs, struct fields, constants and release functions from the prompt;
so does the offline model: :func:`read_types` reads the section's facts blocks with the models
:meth:`fuzzkit.header_facts.HeaderFacts.render` wrote them from (never its human lines), and
:func:`using` makes the table the one :mod:`agents.offline.cdecl` and the synthesizer consult
while one reply is made; without one, only standard C types are known.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from fuzzkit.api import FunctionDecl
from fuzzkit.facts_block import read_facts
from fuzzkit.header_facts import (
    CONSTANTS_KIND,
    DECLARATIONS_KIND,
    NOTES_KIND,
    RELEASERS_KIND,
    ConstantFacts,
    DeclarationFacts,
    FunctionNotes,
    RecordFacts,
    ReleaserFacts,
    function_pointer,
)
from fuzzkit.header_wrappers import Wrapper, argument_names, fixed_arguments


@dataclass(frozen=True)
class Record:
    """A struct or union with its fields (``()`` when opaque)."""

    kind: str
    tag: str
    fields: tuple[tuple[str, str], ...]
    opaque: bool
    functions: tuple[str, ...] = ()  # names of its function-pointer fields
    ranges: tuple[tuple[str, int, int], ...] = ()  # (field, lo, hi) its comments document


@dataclass
class TypeTable:
    """Typedefs, records, constants, release functions and return notes of one prompt."""

    typedefs: dict[str, str] = field(default_factory=dict)
    canonical: dict[str, str] = field(default_factory=dict)
    records: dict[str, Record] = field(default_factory=dict)
    constants: dict[str, int] = field(default_factory=dict)
    groups: list[list[str]] = field(default_factory=list)
    releasers: list[tuple[str, str]] = field(default_factory=list)
    frees_heap: set[str] = field(default_factory=set)  # releasers of what the library allocates
    returns: dict[str, str] = field(default_factory=dict)
    enum_members: dict[str, list[str]] = field(default_factory=dict)
    retains: set[str] = field(default_factory=set)
    consumes: set[str] = field(default_factory=set)
    adopts: set[str] = field(default_factory=set)  # a malloc'd buffer argument is the library's on success
    # called by no harness: documented as valid inside a callback only, internal, or never returning
    inside_only: set[str] = field(default_factory=set)
    borrows: set[str] = field(default_factory=set)  # documented: what it hands back, the library keeps
    optional: dict[str, set[str]] = field(default_factory=dict)  # parameters documented as taking NULL
    # macro -> the functions its group's comment says take it; its own "only" / "not for" notes
    flag_scope: dict[str, frozenset[str]] = field(default_factory=dict)
    flag_only: dict[str, frozenset[str]] = field(default_factory=dict)
    flag_not_for: dict[str, frozenset[str]] = field(default_factory=dict)
    needed_bits: set[int] = field(default_factory=set)  # bits of flags that make the call read a field
    fixed_args: dict[str, dict[int, str]] = field(default_factory=dict)
    arg_names: dict[str, dict[int, str]] = field(default_factory=dict)  # from the header's wrappers
    instances: list[tuple[str, str]] = field(default_factory=list)  # (name, type) the library defines
    handed_out: frozenset[str] | None = None  # type names the API returns or writes out (None: unknown)
    key: int = 0

    def record(self, name: str) -> Record | None:
        """The record a type name (tag or typedef, ``struct`` word allowed) stands for."""
        name = re.sub(r"^(const\s+)?(struct|union)\s+", "", name.strip())
        found = self.records.get(name)
        if found is None and name in self.canonical:
            return self.records.get(re.sub(r"^(struct|union)\s+", "", self.canonical[name]))
        return found

    def unlisted(self, name: str) -> bool:
        """Whether ``name`` is a typedef of a record the section does not list (it may be opaque)."""
        record_type = re.fullmatch(r"(struct|union) \w+", self.canonical.get(name, ""))
        return bool(record_type) and self.record(name) is None

    def names_handle(self, name: str, under: str) -> bool:
        """Whether typedef ``name`` of ``under`` (``struct s *``) is a handle, not a spelling.

        A pointer to a record whose fields are listed and that no function hands out
        (``typedef struct img *img_p``, ``struct img { ... }``) is the caller's record to fill.
        """
        if not re.match(r"(const\s+)?(struct|union)\b", under):
            return False
        if self.handed_out is None or name in self.handed_out:
            return True
        rec = self.record(under.replace("*", "").strip())
        return rec is None or rec.opaque or not rec.fields

    def spelling(self, name: str, under: str) -> str:
        """What typedef ``name`` stands for; ``img *`` for a tagless record's pointer.

        ``typedef struct { ... } img, *img_p``: the section gives ``struct img *`` with ``/* img * */``.
        """
        canon = self.canonical.get(name, "")
        if not re.match(r"(const\s+)?(struct|union)\b", under) or "*" not in canon:
            return under
        return under if re.search(r"\b(struct|union)\b", canon) else canon

    def tag_only(self, name: str) -> str | None:
        """``struct x`` for a record ``x`` that has no typedef of that name (needs its tag)."""
        rec = self.records.get(name)
        return None if rec is None or name in self.typedefs or rec.tag != name else f"{rec.kind} {name}"


EMPTY = TypeTable()
_ACTIVE: ContextVar[TypeTable] = ContextVar("logicfuzz_type_table", default=EMPTY)


def active() -> TypeTable:
    """The table of the reply being made (empty outside :func:`using`)."""
    return _ACTIVE.get()


@contextmanager
def using(table: TypeTable) -> Iterator[TypeTable]:
    """Make ``table`` the active one for the duration of a block."""
    token = _ACTIVE.set(table)
    try:
        yield table
    finally:
        _ACTIVE.reset(token)


def read_types(text: str, api: Iterable[FunctionDecl] | None = None) -> TypeTable:
    """Read a ``## Types`` section body: its types, constants, releasers and notes facts blocks.

    ``api``: the prompt's prototypes, whose result and out-parameter types are handed out.

    Raises:
        FactsBlockError: A facts block (types, constants, releasers, notes) does not fit its model.
    """
    table = TypeTable(handed_out=_handed_out(api))
    _read_releasers(table, text)
    _read_notes(table, text)
    _read_declarations(table, text)
    _read_constants(table, text)
    _name_tagless_records(table)
    table.key = hash((text, table.handed_out))
    return table


def _name_tagless_records(table: TypeTable) -> None:
    """A tagless record's name from its pointer typedef's canonical type (``/* img * */``)."""
    for name, under in list(table.typedefs.items()):
        if table.spelling(name, under) != under:
            tagless = table.canonical[name].replace("*", "").strip()
            table.typedefs.setdefault(tagless, under.replace("*", "").strip())


def _handed_out(api: Iterable[FunctionDecl] | None) -> frozenset[str] | None:
    """The type names functions return (``img_p``) or write through ``img_p *``."""
    fns = list(api or ())
    if not fns:
        return None
    types = [f.return_type for f in fns] + [
        p.type.rsplit("*", 1)[0] for f in fns for p in f.params if p.type.rstrip().endswith("*")
    ]
    return frozenset(re.sub(r"\b(const|struct|union)\b|\*", " ", t).strip() for t in types)


def _read_releasers(table: TypeTable, text: str) -> None:
    """The release functions of the section's facts block (:class:`fuzzkit.header_facts.ReleaserFacts`)."""
    facts = read_facts(text, RELEASERS_KIND, ReleaserFacts) or ReleaserFacts()
    for r in facts.releasers:
        table.releasers.append((r.function, r.releases.strip()))
        if r.heap:
            table.frees_heap.add(r.function)


def _read_notes(table: TypeTable, text: str) -> None:
    """What functions are documented to do, from the notes block (:class:`FunctionNotes`)."""
    notes = read_facts(text, NOTES_KIND, FunctionNotes) or FunctionNotes()
    table.instances = [(i.name, i.type) for i in notes.instances]
    table.retains = set(notes.retains)
    table.consumes = set(notes.consumes)
    table.adopts = set(notes.adopts)
    table.inside_only = set(notes.inside_only) | set(notes.internal) | set(notes.noreturn)
    table.borrows = set(notes.borrows)
    table.optional = {fn: set(names) for fn, names in notes.optional.items()}
    table.needed_bits.update(f.value for f in notes.field_flags)
    table.returns = {r.function: r.text for r in notes.returns}
    wrappers = [Wrapper(w.function, tuple(w.args), w.caller, tuple(w.params)) for w in notes.wrappers]
    table.fixed_args = fixed_arguments(wrappers)
    table.arg_names = argument_names(wrappers)


def _read_constants(table: TypeTable, text: str) -> None:
    """Enums and macro groups from the constants block (:class:`~fuzzkit.header_facts.ConstantFacts`).

    Each enum, then each macro group, is a group of constants; an enum's members are also
    known by the typedefs that stand for it (read from the C fence first).
    """
    facts = read_facts(text, CONSTANTS_KIND, ConstantFacts) or ConstantFacts()
    for e in facts.enums:
        names = list(e.constants)
        table.constants.update(e.constants)
        table.groups.append(names)
        table.enum_members[e.name] = names
        for alias, canon in table.canonical.items():
            if canon == f"enum {e.name}":
                table.enum_members[alias] = names
    for g in facts.macros:
        table.constants.update(g.constants)
        table.groups.append(list(g.constants))
        if g.scope:
            table.flag_scope.update(dict.fromkeys(g.constants, frozenset(g.scope)))
        table.flag_only.update({name: frozenset(fns) for name, fns in g.only.items()})
        table.flag_not_for.update({name: frozenset(fns) for name, fns in g.not_for.items()})


def _read_declarations(table: TypeTable, text: str) -> None:
    """Typedefs, then records, from the declarations block (:class:`~fuzzkit.header_facts.DeclarationFacts`).

    A typedef of a function (pointer) type stands for ``ret (*)(args)``; a record is also known
    by each typedef whose canonical type is its ``struct tag``.
    """
    facts = read_facts(text, DECLARATIONS_KIND, DeclarationFacts) or DeclarationFacts()
    for name, under, *chain in facts.typedefs:
        canon = chain[0] if chain else under
        pointer = function_pointer(under, canon)
        table.typedefs[name] = pointer or under.strip()
        table.canonical[name] = pointer or canon.strip()
    for record in facts.records:
        _read_record(table, record)


def _read_record(table: TypeTable, r: RecordFacts) -> None:
    fields = tuple((n, t) for n, ctype in r.fields.items() if (t := _field_type(ctype)) is not None)
    functions = tuple(n for n, ctype in r.fields.items() if "(*)" in ctype)
    ranges = tuple((n, lo, hi) for n, (lo, hi) in r.ranges.items())
    if not r.tag:
        if r.names and not r.opaque:  # `typedef struct { ... } name;`: the name stands for the record
            name = r.names[0]
            table.typedefs[name] = table.canonical[name] = f"{r.kind} {{...}}"
            table.records[name] = Record(r.kind, "", fields, False, functions, ranges)
        return
    rec = Record(r.kind, r.tag, fields, r.opaque, functions, ranges)
    table.records[r.tag] = rec
    for name, canon in table.canonical.items():
        if canon == f"{r.kind} {r.tag}":
            table.records.setdefault(name, rec)


def _field_type(ctype: str) -> str | None:
    """A field's type as the classifier takes it: an array's element type; None for a function pointer.

    Fields of several array dimensions or of function-pointer-like types are left out.
    """
    if "(*" in ctype or ctype.count("[") > 1:
        return None
    base = ctype.partition("[")[0] if ctype.endswith("]") else ctype
    return re.sub(r"\s+", " ", base).strip()
