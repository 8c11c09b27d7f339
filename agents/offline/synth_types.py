"""The offline engine's call-planning vocabulary: objects, lifecycles, planned calls, local C types.

Kept apart from :mod:`agents.offline.synth_plan` (the planner) so that the modules the
planner delegates to (arguments, objects, I/O) use these without importing the planner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline import cdecl
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.usage_models import RecordFields
from fuzzkit.vocabulary import alternation

MAX_OUT = 1 << 20
# Functions whose output can be larger than their input (a worst-case bound sizes it), and
# their inverses (codec_decompress_safe contains "compress" too).
EXPANDS = re.compile(r"(compress|encode)", re.I)
SHRINKS = re.compile(r"(decompress|uncompress|decode)", re.I)
WRITE_WORDS = re.compile(rf"({alternation('writes_out')}|_w$)", re.I)


class Unsupported(Exception):
    """The function has a parameter the offline model cannot build (e.g. a ``va_list``)."""


@dataclass(frozen=True)
class Role:
    """How to build one argument.

    kind is one of: text, bytes, len, outbuf, outlen, outlen_ptr, inlen_ptr, scratch, alloc,
    object, out_object, consumed, fresh, child, handle, out_scalar, out_ptr, int, bool, float,
    enum, zero_value, version, struct_size, fd, path, mode, file, format, callback, userdata, array,
    strarray, count, workspace, blob, unit, pixels, dim_w, dim_h, dim_stride, unsupported, null,
    object_array, end_ptr, pos_ptr, cursor (a pointer the callee advances), fixed_in, fixed_out
    (fixed-size arrays; ``choices`` holds the size), parallel (an array as long as the input).
    ``high_flags``: for an option word, the header's single-bit flags above its low byte, one of
    which (or none) is OR-ed into the value; ``clear_bits``: its low-byte flags that tell the
    library to skip checking the input;
    ``flag_mask``: the bits the header's comments give the function's option word (any subset).
    """

    kind: str
    index: int
    param: Param
    pair: int | None = None
    type_key: str | None = None
    choices: tuple[int, ...] = ()
    high_flags: tuple[int, ...] = ()
    clear_bits: int = 0
    flag_mask: int = 0


@dataclass
class Obj:
    """A library object the generated code holds: ``expr`` is what a call receives."""

    type_key: str
    expr: str
    var: str
    owned: bool = True
    origin: str = ""  # the function that created or initialized it
    filled: bool = False  # a result container a search has filled (:mod:`synth_fill`)
    consumed_by: str = ""  # the target that ran this object over the fuzz input (improvements)


@dataclass
class CallPlan:
    """A call ready to emit: its text, conditions that must hold, and post-call bookkeeping."""

    fn: FunctionDecl
    text: str
    guards: list[str] = field(default_factory=list)
    consumed: list[tuple[str, str]] = field(default_factory=list)  # (release stmt, when)
    after: list[str] = field(default_factory=list)
    out_buf: str | None = None
    out_len: str | None = None  # what holds the output's length after the call
    out_cap: str | None = None  # the output buffer's capacity
    out_by_value: bool = False  # the capacity went by value: the return value tells the length
    outs: dict[int, str] = field(default_factory=dict)  # parameter index -> the variable a `T *`/`T **` fills
    on_nothing: bool = False  # its path names an empty file (the input goes elsewhere): open it to write


WORKSPACE = 1000  # elements of a caller-provided work array (its count is passed along)


def decl_type(ctype: str) -> str:
    """A type usable for a local variable: top-level const dropped, pointer typedefs kept."""
    text = cdecl.normalize_type(ctype)
    if text.endswith("*const"):
        text = text[: -len("const")].rstrip()
    if "*" not in text and text.startswith("const "):
        text = text[len("const ") :]
    return text


def decl_cast(ctype: str) -> str:
    """The parameter type as a cast (array and function types decayed to pointers)."""
    return decl_type(ctype)


@dataclass
class Lifecycle:
    """How one struct or handle type is made and unmade."""

    type_name: str
    create: list[str] = field(default_factory=list)
    init: list[str] = field(default_factory=list)
    destroy: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        """A JSON-ready dict."""
        return {"create": self.create, "init": self.init, "destroy": self.destroy}


@dataclass
class UsageHints:
    """What the library's own usage tells the synthesizer (:func:`agents.offline.usage.usage_hints`)."""

    # object type -> its releaser; maker -> its objects' releaser (over their type's)
    releasers: dict[str, str] = field(default_factory=dict)
    made_releasers: dict[str, str] = field(default_factory=dict)
    makers: dict[str, str] = field(default_factory=dict)  # object type -> what the code makes one with
    after: list[str] = field(default_factory=list)  # the calls the target's usage makes after it
    # function -> parameter index -> the constants the code passes; the one the target's setup passes
    constants: dict[str, dict[int, list[str]]] = field(default_factory=dict)
    setup: dict[str, dict[int, str]] = field(default_factory=dict)
    before: list[str] = field(default_factory=list)  # calls made on the target's objects before it
    fields: list[RecordFields] = field(default_factory=list)  # set on a record before passing it
