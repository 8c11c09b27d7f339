"""What a library's headers say about the types its API uses, read with libclang.

A prototype alone does not say that ``lib_u8`` is ``unsigned char``, that ``struct hdr`` has
the fields ``width`` and ``height``, that ``LIB_OK`` is the success status or that
``lib_free_reply(void *)`` releases what ``lib_parse_reply`` returns. :func:`collect_facts`
reads that from the headers at prepare time, for the types reachable from the API, so that every
agent (the offline model and a real LLM alike) gets it in its prompt as a ``## Types`` section
(:meth:`HeaderFacts.render`); :mod:`fuzzkit.header_facts_collect` reads the headers. Nothing
here knows any particular library.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from fuzzkit.doc_conditions import OBJECT_KIND
from fuzzkit.facts_block import render_facts
from fuzzkit.header_wrappers import Wrapper
from fuzzkit.vocabulary import c_words

_FUNCTION_TYPE = re.compile(r"^([^()]*?)\s*\(([^()]*)\)$")


@dataclass(frozen=True)
class Typedef:
    """``typedef <underlying> <name>``, with the canonical type behind the whole chain."""

    name: str
    underlying: str
    canonical: str


@dataclass(frozen=True)
class Record:
    """A struct or union: its tag, typedef names and fields (none when opaque)."""

    kind: str
    tag: str
    names: tuple[str, ...]
    fields: tuple[tuple[str, str], ...]
    opaque: bool
    # (field, lo, hi): the values the field's comment documents (fuzzkit.field_ranges)
    ranges: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True)
class Enum:
    """An enum: its tag or typedef name and its constants with values."""

    name: str
    constants: tuple[tuple[str, int], ...]
    typedef: bool = False  # no tag: `typedef enum { ... } name;` (`enum name` does not compile)


@dataclass(frozen=True)
class Macro:
    """An integer ``#define``; macros defined on adjacent lines share a ``group``."""

    name: str
    value: int
    group: int
    scope: tuple[str, ...] = ()  # the functions the comment above its group names (fuzzkit.header_macros)
    only: tuple[str, ...] = ()  # its own comment: "f() only"
    not_for: tuple[str, ...] = ()  # its own comment: "not for f()"


class Releaser(BaseModel):
    """A function that releases objects of ``releases``, and how that was worked out.

    ``heap``: an API function makes such objects (``T *t_new(void)``), so the releaser frees the
    struct itself and must never be given one on the caller's stack.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    function: str
    releases: str
    evidence: str
    heap: bool = False


class ReleaserFacts(BaseModel):
    """The release functions as they travel in the prompt (:data:`RELEASERS_KIND` facts block)."""

    model_config = ConfigDict(extra="forbid")

    releasers: list[Releaser] = Field(default_factory=list)


RELEASERS_KIND = "releasers"  # the kind of the ``## Types`` section's facts block


class RecordFacts(BaseModel):
    """A struct or union as the declarations block carries it (:class:`Record`).

    ``fields``: name -> type of its first :data:`MAX_FIELDS` named fields (``more_fields``
    counts the rest); ``ranges``: field -> ``[lo, hi]`` its comment documents; an ``opaque``
    record has no fields (only pointers to it, made by the API). ``kind`` is left out for a struct.
    """

    model_config = ConfigDict(extra="forbid")

    kind: str = "struct"
    tag: str = ""
    names: list[str] = Field(default_factory=list)
    opaque: bool = False
    fields: dict[str, str] = Field(default_factory=dict)
    more_fields: int = 0
    ranges: dict[str, tuple[int, int]] = Field(default_factory=dict)


# ``[name, type]``, or ``[name, type, canonical]`` where the type behind the whole chain differs
TypedefEntry = Annotated[list[str], Field(min_length=2, max_length=3)]


class DeclarationFacts(BaseModel):
    """Typedefs and records as they travel in the prompt (:data:`DECLARATIONS_KIND` block)."""

    model_config = ConfigDict(extra="forbid")

    typedefs: list[TypedefEntry] = Field(default_factory=list)
    records: list[RecordFacts] = Field(default_factory=list)


DECLARATIONS_KIND = "types"  # the kind of the ``## Types`` section's block of typedefs and records
DECLARATIONS_LEGEND = ("Typedefs ([name, type, canonical type if it differs]) and structs or unions (fields "
                       "name: type; `opaque`: only through the API's pointers), as data:")


class EnumConstants(BaseModel):
    """An enum's constants; ``typedef``: it has no tag (spelled ``name``, never ``enum name``)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    typedef: bool = False
    constants: dict[str, int] = Field(default_factory=dict)


class MacroGroup(BaseModel):
    """Integer ``#define`` lines that sit together in a header (:class:`Macro`).

    ``scope``: the functions the comment above the group names (its flags); ``only`` and
    ``not_for``: per constant, the functions its own comment limits it to or rules out.
    """

    model_config = ConfigDict(extra="forbid")

    scope: list[str] = Field(default_factory=list)
    constants: dict[str, int] = Field(default_factory=dict)
    only: dict[str, list[str]] = Field(default_factory=dict)
    not_for: dict[str, list[str]] = Field(default_factory=dict)


class ConstantFacts(BaseModel):
    """The enums and macro groups as they travel in the prompt (:data:`CONSTANTS_KIND` block)."""

    model_config = ConfigDict(extra="forbid")

    enums: list[EnumConstants] = Field(default_factory=list)
    macros: list[MacroGroup] = Field(default_factory=list)


CONSTANTS_KIND = "constants"  # the kind of the ``## Types`` section's block of enums and macros
CONSTANTS_LEGEND = ("Enums (`typedef: true`: no tag) and #define groups (`scope`: the functions they serve), "
                    "as data:")


class WrapperCall(BaseModel):
    """``function(args)`` as a header's own wrapper ``caller(params)`` calls it (:class:`Wrapper`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    function: str
    args: list[str]
    caller: str
    params: list[str] = Field(default_factory=list)


class Instance(BaseModel):
    """A variable the library defines (``extern TYPE name;``) whose type the API takes a pointer to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    type: str


class DocumentedReturn(BaseModel):
    """The sentence documenting what ``function`` returns."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    function: str
    text: str


class FieldFlag(BaseModel):
    """A flag constant whose own comment names a field of an argument the call then reads."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    value: int
    fields: list[str]


class FunctionNotes(BaseModel):
    """What the documentation and the header's wrappers say of API functions (:data:`NOTES_KIND` block).

    Each list names functions; ``optional`` and ``utf8`` map a function to parameter names;
    ``returns`` gives a function's sentence documenting its return values; ``object_kinds`` the
    conditions on an argument's field its documentation asserts (``object->type == X_TYPE``).
    """

    model_config = ConfigDict(extra="forbid")

    instances: list[Instance] = Field(default_factory=list)
    retains: list[str] = Field(default_factory=list)
    consumes: list[str] = Field(default_factory=list)
    adopts: list[str] = Field(default_factory=list)
    inside_only: list[str] = Field(default_factory=list)
    internal: list[str] = Field(default_factory=list)
    borrows: list[str] = Field(default_factory=list)
    noreturn: list[str] = Field(default_factory=list)
    optional: dict[str, list[str]] = Field(default_factory=dict)
    utf8: dict[str, list[str]] = Field(default_factory=dict)
    terminated: dict[str, list[str]] = Field(default_factory=dict)
    terminated_flags: dict[str, int | None] = Field(default_factory=dict)
    wrappers: list[WrapperCall] = Field(default_factory=list)
    returns: list[DocumentedReturn] = Field(default_factory=list)
    object_kinds: dict[str, list[str]] = Field(default_factory=dict)
    field_flags: list[FieldFlag] = Field(default_factory=list)


NOTES_KIND = "notes"  # the kind of the ``## Types`` section's block of documented behaviour
# What each key of the notes block means, one short line each for a reader of the prompt.
NOTES_LEGEND = {
    "instances": "objects the library defines: pass one's address where the API takes a pointer to its type",
    "retains": "keep their pointer arguments by reference (those must outlive the object)",
    "consumes": "take ownership of their object argument, even when they fail",
    "adopts": "take over their allocated buffer argument when they succeed (not freed again)",
    "inside_only": "called by no harness: only from within the library's callback",
    "internal": "called by no harness: the library's own helpers",
    "borrows": "hand back memory the library owns: never free it",
    "noreturn": "declared never to return (an error reporter that ends or jumps away): called by no harness",
    "optional": "parameters the documentation lets be NULL (leaving one out is a case of its own)",
    "utf8": "text parameters documented as UTF-8 (other bytes there break the contract, not the library)",
    "terminated": "input parameters documented as NUL-terminated (pass a copy with a NUL after the data)",
    "terminated_flags": "option constants (and values) that say the input is NUL-terminated",
    "wrappers": "calls in the header's own wrappers (pass the same fixed arguments)",
    "returns": "documented return values",
    "object_kinds": "the kind of object each takes, as its documentation asserts (never give it another)",
    "field_flags": "flags that make the call read a field of an argument (set it, or leave the flag out)",
}


@dataclass
class HeaderFacts:
    """Everything :func:`collect_facts` found; plain data (it travels in the graph state)."""

    typedefs: list[Typedef] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    enums: list[Enum] = field(default_factory=list)
    macros: list[Macro] = field(default_factory=list)
    releasers: list[Releaser] = field(default_factory=list)
    returns: dict[str, str] = field(default_factory=dict)
    retains: list[str] = field(default_factory=list)
    consumes: list[str] = field(default_factory=list)
    adopts: list[str] = field(default_factory=list)  # take over a malloc'd buffer argument on success
    inside_only: list[str] = field(default_factory=list)  # valid only inside a library callback
    internal: list[str] = field(default_factory=list)  # documented as the library's own (Doxygen `internal`)
    borrows: list[str] = field(default_factory=list)  # what it hands back stays the library's
    noreturn: list[str] = field(default_factory=list)  # declared never to return (an error function)
    wrappers: list[Wrapper] = field(default_factory=list)
    # (name, type) of variables the library defines whose type the API takes a pointer to
    # (a built-in encoding table, a default configuration): the only way to get a valid one.
    instances: list[tuple[str, str]] = field(default_factory=list)
    # function -> its pointer parameters the documentation lets be NULL (fuzzkit.param_docs)
    optional: dict[str, list[str]] = field(default_factory=dict)
    # function -> its input text parameters documented as UTF-8 (fuzzkit.param_docs)
    utf8: dict[str, list[str]] = field(default_factory=dict)
    # function -> its input buffers documented as NUL-terminated; option constants documented so
    # (fuzzkit.param_docs), with their values (None: not a plain integer)
    terminated: dict[str, list[str]] = field(default_factory=dict)
    terminated_flags: dict[str, int | None] = field(default_factory=dict)
    # function -> the C conditions its documentation asserts on its parameters (fuzzkit.param_docs)
    conditions: dict[str, list[str]] = field(default_factory=dict)
    # flags whose own comment names a field of an argument (fuzzkit.header_macros.field_flags)
    field_flags: list[FieldFlag] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data = asdict(self)
        data["releasers"] = [r.model_dump() for r in self.releasers]
        data["field_flags"] = [f.model_dump() for f in self.field_flags]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> HeaderFacts:
        """Inverse of :meth:`to_dict` (``None`` or ``{}`` gives empty facts)."""
        data = data or {}
        return cls(
            typedefs=[Typedef(**t) for t in data.get("typedefs", [])],
            records=[Record(r["kind"], r["tag"], tuple(r["names"]),
                            tuple((f[0], f[1]) for f in r["fields"]), r["opaque"],
                            tuple((g[0], int(g[1]), int(g[2])) for g in r.get("ranges", ())))
                     for r in data.get("records", [])],
            enums=[Enum(e["name"], tuple((c[0], c[1]) for c in e["constants"]), bool(e.get("typedef")))
                   for e in data.get("enums", [])],
            macros=[Macro(m["name"], m["value"], m["group"], tuple(m.get("scope", ())),
                          tuple(m.get("only", ())), tuple(m.get("not_for", ())))
                    for m in data.get("macros", [])],
            releasers=[Releaser.model_validate(r) for r in data.get("releasers", [])],
            returns=dict(data.get("returns", {})),
            retains=list(data.get("retains", [])),
            consumes=list(data.get("consumes", [])),
            adopts=list(data.get("adopts", [])),
            inside_only=list(data.get("inside_only", [])),
            internal=list(data.get("internal", [])),
            borrows=list(data.get("borrows", [])),
            noreturn=list(data.get("noreturn", [])),
            wrappers=[Wrapper(w["function"], tuple(w["args"]), w["caller"], tuple(w["params"]))
                      for w in data.get("wrappers", [])],
            instances=[(i[0], i[1]) for i in data.get("instances", [])],
            optional={k: list(v) for k, v in data.get("optional", {}).items()},
            utf8={k: list(v) for k, v in data.get("utf8", {}).items()},
            terminated={k: list(v) for k, v in data.get("terminated", {}).items()},
            terminated_flags={k: (None if v is None else int(v))
                              for k, v in data.get("terminated_flags", {}).items()},
            conditions={k: list(v) for k, v in data.get("conditions", {}).items()},
            field_flags=[FieldFlag.model_validate(f) for f in data.get("field_flags", [])],
        )

    def render(self) -> str:
        """The ``## Types`` section body: short lines and the facts blocks they introduce."""
        out: list[str] = []
        declarations = self.declarations()
        if declarations.typedefs or declarations.records:
            out += [DECLARATIONS_LEGEND, render_facts(DECLARATIONS_KIND, declarations)]
        constants = self.constants()
        if constants.enums or constants.macros:
            out += [CONSTANTS_LEGEND, render_facts(CONSTANTS_KIND, constants)]
        return "\n".join(out + self._notes())

    def declarations(self) -> DeclarationFacts:
        """The typedefs and records, as the declarations block carries them (the first fields of each)."""
        records = []
        for r in self.records:
            shown = r.fields[:MAX_FIELDS]
            ranges = {name: (lo, hi) for name, lo, hi in r.ranges}
            records.append(RecordFacts(
                kind=r.kind, tag=r.tag, names=list(r.names), opaque=r.opaque,
                fields={name: ctype for name, ctype in shown if name},
                more_fields=max(0, len(r.fields) - MAX_FIELDS),
                ranges={name: ranges[name] for name, _t in shown if name in ranges}))
        typedefs = [[t.name, t.underlying] + ([t.canonical] if t.canonical != t.underlying else [])
                    for t in self.typedefs]
        return DeclarationFacts(typedefs=typedefs, records=records)

    def constants(self) -> ConstantFacts:
        """The enums and the groups of integer macros, as the constants block carries them."""
        groups: list[MacroGroup] = []
        last_group = None
        for m in self.macros:
            if not groups or m.group != last_group:
                groups.append(MacroGroup(scope=list(m.scope)))
            groups[-1].constants[m.name] = m.value
            if m.only:
                groups[-1].only[m.name] = list(m.only)
            elif m.not_for:
                groups[-1].not_for[m.name] = list(m.not_for)
            last_group = m.group
        return ConstantFacts(macros=groups, enums=[
            EnumConstants(name=e.name, typedef=e.typedef, constants=dict(e.constants)) for e in self.enums])

    def notes(self) -> FunctionNotes:
        """The documented behaviour of functions, as the notes block carries it."""
        return FunctionNotes(
            instances=[Instance(name=n, type=t) for n, t in self.instances],
            retains=self.retains, consumes=self.consumes, adopts=self.adopts,
            inside_only=self.inside_only, internal=self.internal, borrows=self.borrows,
            noreturn=self.noreturn, optional=self.optional, utf8=self.utf8,
            terminated=self.terminated, terminated_flags=self.terminated_flags,
            returns=[DocumentedReturn(function=fn, text=text) for fn, text in self.returns.items()],
            object_kinds={fn: kinds for fn, conds in self.conditions.items()
                          if (kinds := [c for c in conds if OBJECT_KIND.fullmatch(c)])},
            field_flags=self.field_flags,
            wrappers=[WrapperCall(function=w.function, args=list(w.args), caller=w.caller,
                                  params=list(w.params)) for w in self.wrappers],
        )

    def _notes(self) -> list[str]:
        """The notes after the declarations: releasers, then documented behaviour, each as data."""
        out: list[str] = []
        if self.releasers:
            names = ", ".join(dict.fromkeys(r.function for r in self.releasers))
            out.append(f"Release functions: {names} (what each releases and why, as data):")
            out.append(render_facts(RELEASERS_KIND, ReleaserFacts(releasers=self.releasers)))
        notes = self.notes()
        present = [key for key in NOTES_LEGEND if getattr(notes, key)]
        if present:
            out.append("Documented behaviour of functions, as data:")  # one short line per kind of note
            out += [f"- {key}: {NOTES_LEGEND[key]}" for key in present]
            out.append(render_facts(NOTES_KIND, notes))
        return out


def function_pointer(underlying: str, canonical: str) -> str | None:
    """``ret (*)(args)`` for a typedef of a function pointer or of a function type; else None.

    A function type (``int handler(void *)``) is used through pointers, so it is spelled as one.
    """
    if "(*)" in underlying or "(*)" in canonical:
        before, _, after = (underlying if "(*)" in underlying else canonical).partition("(*)")
        return f"{before.strip()} (*){after.strip()}"
    fn_type = _FUNCTION_TYPE.match(underlying) or _FUNCTION_TYPE.match(canonical)
    return f"{fn_type.group(1)} (*)({fn_type.group(2)})" if fn_type else None


MAX_FIELDS = 20
# A parameter taking option values: a group of constants named after its function holds them.
OPTION_PARAM = re.compile(r"(flags?|options?|opts|mode)$", re.I)


def _words(name: str) -> list[str]:
    # An acronym run ends before a capitalised word: `QXFree` is `qx`, `free`.
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name))
    return [w.lower() for w in re.split(r"[_\W]+", spaced) if w]


def _base(spelling: str) -> str:
    words = [w for w in spelling.replace("*", " ").split() if w not in c_words("qualifier", "tag")]
    return " ".join(words)


def stream_types(facts: HeaderFacts) -> set[str]:
    """Names (tags and typedefs) of structs the caller drives as a stream.

    Recognised by their fields, never by name: a byte pointer and an available-count field
    for input (``next_in``/``avail_in``-style: words ``in`` plus ``avail``/``left``/``len``/
    ``size``), so passing such a struct is passing data.
    """
    names: set[str] = set()
    canonical = {t.name: t.canonical for t in facts.typedefs}
    byteish = re.compile(r"\b(char|uint8_t|int8_t|void)\b")

    def is_bytes(ctype: str) -> bool:
        base = _base(ctype)
        return bool(byteish.search(base) or byteish.search(canonical.get(base, "")))

    for record in facts.records:
        words = [(_words(n), t) for n, t in record.fields]
        data = any("in" in w and "*" in t and is_bytes(t) for w, t in words)
        count = any("in" in w and set(w) & {"avail", "left", "len", "size", "remaining"}
                    and "*" not in t for w, t in words)
        if data and count:
            names |= {n for n in (record.tag, *record.names) if n}
    return names


def blob_types(facts: HeaderFacts) -> set[str]:
    """Names of structs that are just a byte buffer and its length (``{ const u8 *bytes; size_t size; }``).

    Passing one (by const pointer) is passing data, like a stream struct.
    """
    canonical = {t.name: t.canonical for t in facts.typedefs}
    byteish = re.compile(r"\b(char|uint8_t|int8_t|void)\b")
    integer = re.compile(r"\b(size_t|int|long|short|unsigned|u?int\d+_t)\b")
    names: set[str] = set()
    for record in facts.records:
        if record.opaque or len(record.fields) != 2:
            continue
        kinds = set()
        for _name, ctype in record.fields:
            base = _base(ctype)
            resolved = f"{base} {canonical.get(base, '')}"
            if "*" in ctype and byteish.search(resolved):
                kinds.add("data")
            elif "*" not in ctype and integer.search(resolved):
                kinds.add("length")
        if kinds == {"data", "length"}:
            names |= {n for n in (record.tag, *record.names) if n}
    return names
