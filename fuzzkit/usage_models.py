"""The data a library's own usage of its API becomes: the index, and the protocols from it.

:mod:`fuzzkit.usage_index` reads the library's tests, examples, tools and documentation
snippets into a :class:`UsageIndex` (every call of an API function, with its arguments, the
variable it defines and the check made on it). :mod:`fuzzkit.usage_protocols` turns the index
into :class:`UsageFacts` for one target: per object type, how the library's own code makes,
configures, feeds and releases it, and the calls around the target. The facts travel in the
prompt as a fenced YAML block (:mod:`fuzzkit.facts_block`) and are read back with these models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fuzzkit.vocabulary import c_words

INDEX_VERSION = 9

# What an argument is, as the library's code wrote it.
ArgKind = Literal["constant", "object", "data", "size", "string", "callback", "null", "variable", "other"]
Origin = Literal["test", "example", "tool", "doc", "bench", "other"]
# What a value assigned to a record's field is: a constant of the library's headers, a literal, other.
ValueKind = Literal["constant", "literal", "other"]


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Arg(_Data):
    """One argument of a call in the library's own code."""

    text: str
    kind: ArgKind = "other"
    var: str = ""  # the variable it names (``h`` for ``h`` and ``&h``)
    address: bool = False  # passed as ``&var``: the call may write it
    constants: list[str] = Field(default_factory=list)  # the named constants it combines
    public: bool = False  # every constant it names is the library's own (its headers define them)


class CallSite(_Data):
    """One call of an API function (or of ``free``) inside a usage function."""

    function: str
    args: list[Arg] = Field(default_factory=list)
    result: str = ""  # what the result is stored in (``h``, ``obj->err``)
    result_var: str = ""  # the variable behind it (``obj``)
    check: str = ""  # the condition the code tests the result with
    loop: bool = False  # the check is a loop's: the code calls it until the condition fails
    line: int = 0


class FieldAssignment(_Data):
    """``var.field = value;`` (or ``var->field = value;``) as a statement of a usage function."""

    var: str
    field: str  # ``width``; ``info.width`` for a record held inside it
    value: str  # as written
    kind: ValueKind = "other"
    line: int = 0


class UsageFunction(_Data):
    """A function of the library's own code (or a documentation snippet) that calls its API."""

    file: str  # relative to the source root
    name: str
    origin: Origin = "other"
    calls: list[CallSite] = Field(default_factory=list)
    variables: dict[str, str] = Field(default_factory=dict)  # name -> declared type
    params: list[str] = Field(default_factory=list)  # its parameters and globals: values set outside it
    inits: dict[str, str] = Field(default_factory=dict)  # name -> the initializer it is declared with
    types: dict[str, str] = Field(default_factory=dict)  # records and typedefs the file defines and uses here
    callbacks: dict[str, str] = Field(
        default_factory=dict
    )  # function of the file passed as a callback -> its source
    assigned: dict[str, list[str]] = Field(default_factory=dict)  # variable -> functions stored in it
    fields: list[FieldAssignment] = Field(default_factory=list)  # in the order written
    source: str = ""  # the function's text, cut at MAX_SOURCE lines
    lines: int = 0
    parsed_by: Literal["libclang", "lexical"] = "libclang"


class UsageIndex(_Data):
    """Every use of the API the library's own code makes (tests, examples, tools, docs)."""

    version: int = INDEX_VERSION
    files: list[str] = Field(default_factory=list)  # files read, relative to the root
    left_out: list[str] = Field(default_factory=list)  # fuzz harnesses and fuzzing folders, never read
    functions: list[UsageFunction] = Field(default_factory=list)

    def calling(self, name: str) -> list[UsageFunction]:
        """The usage functions that call ``name``."""
        return [f for f in self.functions if any(c.function == name for c in f.calls)]



# ----- what reaches the prompt -----


class Step(_Data):
    """A call as a protocol shows it: the function and its arguments as the library wrote them."""

    call: str
    args: list[Arg] = Field(default_factory=list)
    result: str = ""
    check: str = ""
    loop: bool = False


class ObjectProtocol(_Data):
    """How the library's own code makes, configures, feeds and releases objects of one type."""

    type: str  # as declared (``acme_handle``, ``struct acme_err``, ``acme_doc *``)
    declared: bool = False  # a value on the stack (``struct err e;``), made by declaring it
    make: list[Step] = Field(default_factory=list)  # best first
    configure: list[Step] = Field(default_factory=list)
    feed: list[Step] = Field(default_factory=list)
    release: str = ""  # the function the library's code last calls on it
    # maker -> what the library's code last calls on an object that maker made, where it is not
    # ``release`` (``create_read_struct`` -> ``destroy_read_struct`` beside ``destroy_write_struct``)
    release_after: dict[str, str] = Field(default_factory=dict)
    uses: int = 0  # usage functions that hold one


class Callback(_Data):
    """A function the library's own code passes or stores as a callback."""

    name: str
    passed_to: str  # the call or variable that receives it
    source: str = ""


class TargetProtocol(_Data):
    """The calls around the target in the shortest usage that makes its objects itself."""

    function: str
    seen_in: str  # ``file:function``
    origin: Origin = "other"
    complete: bool = True  # the sequence makes every object it passes (none comes from elsewhere)
    fed: bool = True  # data reaches it there (else only its setup is shown: the call takes literals)
    sequence: list[Step] = Field(default_factory=list)  # in order; the target is among them
    variables: dict[str, str] = Field(default_factory=dict)  # the sequence's variables -> declared type
    inits: dict[str, str] = Field(default_factory=dict)  # variables declared with an initializer
    types: list[str] = Field(default_factory=list)  # definitions the usage file makes for them
    callbacks: list[Callback] = Field(default_factory=list)


class FieldValue(_Data):
    """A field the library's own code sets on a record before passing it, and the value it sets.

    ``kind``: ``constant`` or ``literal``, written as ``value``; ``input``, an integer the harness
    draws from the input in ``low..high``; ``record_size``, the size of the record itself.
    """

    field: str
    kind: Literal["constant", "literal", "input", "record_size"] = "input"
    value: str = ""
    low: int = 0
    high: int = 0


class RecordFields(_Data):
    """The fields most usage functions set on a record of ``type`` before ``call`` takes it, in order."""

    type: str  # the record as the usage declares it (``acme_desc``, ``struct acme_desc``)
    call: str  # the target, or the call that takes the same record type in the usage
    fields: list[FieldValue] = Field(default_factory=list)
    uses: int = 0  # usage functions that pass such a record to ``call``


class UsageFacts(_Data):
    """What one target's prompt carries of the library's own usage."""

    objects: list[ObjectProtocol] = Field(default_factory=list)
    targets: list[TargetProtocol] = Field(default_factory=list)
    records: list[RecordFields] = Field(default_factory=list)

    def record(self, ctype: str) -> RecordFields | None:
        """The fields set on a record of ``ctype`` (a value or a pointer to one), if the usage sets any."""
        want = type_key(ctype).replace("*", "").strip()
        return next((r for r in self.records if type_key(r.type).replace("*", "").strip() == want), None)

    def object(self, ctype: str) -> ObjectProtocol | None:
        """The protocol of ``ctype`` (spelled as declared, ``const`` and spacing ignored)."""
        want = type_key(ctype)
        return next((o for o in self.objects if type_key(o.type) == want), None)

    def target(self, name: str) -> TargetProtocol | None:
        """The usage sequence around ``name``, if the library's code calls it."""
        return next((t for t in self.targets if t.function == name), None)

    def releaser(self, ctype: str) -> str:
        """The function the library's own code releases ``ctype`` objects with ('' if unseen)."""
        found = self.object(ctype)
        return found.release if found else ""


class UsageSnippet(_Data):
    """A usage function shown to a model as code."""

    seen_in: str
    origin: Origin = "other"
    code: str


class TargetUsage(_Data):
    """The prepared usage of one target: the facts and the snippets (what the state carries)."""

    facts: UsageFacts = Field(default_factory=UsageFacts)
    snippets: list[UsageSnippet] = Field(default_factory=list)


def type_key(ctype: str) -> str:
    """A type spelling without qualifiers and with one spacing (``const foo_t*`` -> ``foo_t *``)."""
    words = ctype.replace("*", " * ").split()
    kept = [w for w in words if w not in c_words("qualifier") and w != "__restrict"]
    out = " ".join(kept)
    return out.replace(" *", "*").replace("*", " *", 1) if "*" in out else out
