"""The rules that give a parameter its role, one per parameter shape, tried in order.

:func:`agents.offline.synth_roles.roles` asks each rule of :data:`RULES` in turn; the first that
recognizes the parameter sets its :class:`Role` (and its pair's, a buffer's length), answering True.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agents.offline import ckinds, synth_choices, synth_lengths
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_lengths import counts_array, is_len_like, out_direction, unnamed, unsized_output
from agents.offline.synth_role_objects import object_role, replaced_by_result
from agents.offline.synth_types import Role
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.vocabulary import undone_by

# The verbs of opening a file (`lib_open(path, mode)`): what a `close` undoes.
_OPENS_FILE = {v for v, undo in undone_by().items() if undo == "close"}


@dataclass
class Scan:
    """The parameters of one function and the roles given so far (None: not yet)."""

    fn: FunctionDecl
    idx: ApiIndex
    out: list[Role | None]
    fn_words: set[str]
    kind: str
    first_key: str | None

    def put(self, kind: str, i: int, pair: int | None = None, type_key: str | None = None,
            choices: tuple[int, ...] = ()) -> None:
        """Give parameter ``i`` the role ``kind``."""
        self.out[i] = Role(kind, i, self.fn.params[i], pair=pair, type_key=type_key, choices=choices)

    def pair(self, kind: str, i: int, kind2: str) -> None:
        """Parameter ``i`` gets ``kind`` and the next one ``kind2``, each pointing at the other."""
        self.put(kind, i, pair=i + 1)
        self.put(kind2, i + 1, pair=i)


def grouped(s: Scan, i: int, j: int | None) -> None:
    """A buffer whose length comes later (:func:`grouped_lengths`), or none at all (j is None)."""
    p, params = s.fn.params[i], s.fn.params
    if j is None:  # an output buffer whose size the function takes on trust
        s.put("outbuf", i)
        return
    by_ptr = ckinds.is_pointer(params[j].type)
    if ckinds.is_const_target(p.type) or not out_direction(s.fn, p):
        s.put("bytes", i, pair=j)
        s.put("inlen_ptr" if by_ptr else "len", j, pair=i)
    else:
        s.put("outbuf", i, pair=j)
        s.put("outlen_ptr" if by_ptr else "outlen", j, pair=i)


Rule = Callable[[Scan, int, "Param | None", "Param | None"], bool]


def _callback(s: Scan, i: int, nxt: Param | None, nxt2: Param | None) -> bool:
    if not ckinds.is_function_pointer(s.fn.params[i].type):
        return False
    s.put("callback", i)
    user = [j for j in (i + 1, i - 1) if 0 <= j < len(s.fn.params)
            and ckinds.strip_const(ckinds.resolve(s.fn.params[j].type)) == "void *"
            and (j > i or (given := s.out[j]) is None or given.pair is None)]
    if user:  # `set_reader(obj, fn, void *user)`, or `open(void *user, reader_fn fn, int *err)`
        s.put("userdata", user[0])
    return True


def _file(s: Scan, i: int, nxt: Param | None, nxt2: Param | None) -> bool:
    if not ckinds.is_file(s.fn.params[i].type):
        return False
    s.put("file", i)
    return True


def _pointer_handle(s: Scan, i: int, nxt: Param | None, nxt2: Param | None) -> bool:
    """A typedef of a character or number pointer that the library makes and releases.

    ``lib_name`` standing for ``const char *``, made by ``lib_name_make`` and released by
    ``lib_name_free``: a string from the input is not one (the library reads what its
    constructor laid out after it), so the handle comes from the constructor.
    """
    t = s.fn.params[i].type
    if "*" in t or not ckinds.is_pointer(t):
        return False
    key = s.idx.type_key(t)
    if not key or not s.idx.is_handle(key):
        return False
    _handle(s, i, key)
    return True


def _handle(s: Scan, i: int, key: str) -> None:
    """A handle the call works on, or gives up for its result (see :func:`replaced_by_result`)."""
    s.put("consumed" if i == 0 and replaced_by_result(s.fn, s.idx, key) else "handle", i, type_key=key)


def _named_string(s: Scan, i: int, nxt: Param | None, nxt2: Param | None) -> bool:
    """A string named (or placed) as a version, a path, a format or a mode."""
    p = s.fn.params[i]
    if not ckinds.is_string(p.type):
        return False
    lname = p.name.lower()
    if lname == "version" and s.idx.version_function():
        s.put("version", i)
    elif re.search(r"(path|filename|file_name|fname|^file$)", lname) or _unnamed_open(s, i) == "path":
        s.put("path", i)
    elif re.search(r"^(format|fmt)$", lname):
        s.put("format", i)
    elif lname == "mode" or _unnamed_open(s, i) == "mode":
        s.put("mode", i)
    else:
        return False
    return True


# A count named for what it counts, before its array: `int nParam, const char **azParam`.
_COUNT_FIRST = re.compile(r"^(n|n[A-Z_]\w*|num\w*|number_?of\w*|count|\w+_count|n_?[a-z]+s)$")


def _strarray(s: Scan, i: int, nxt: Param | None, nxt2: Param | None) -> bool:
    """Strings with their count, after them (`char **argv, int argc`) or, named as a count, before.

    Not an array of the library's own string handles (`str_t *argv`): its constructor makes those.
    """
    p, t = s.fn.params[i], s.fn.params[i].type
    counted = nxt is not None and (is_len_like(nxt) or bool(re.fullmatch(r"argc|nargs|count", nxt.name)))
    if counted and ckinds.pointer_depth(t) == 2 and re.match(r"(const\s+)?char\b", t.strip()):
        s.pair("strarray", i, "count")
        return True
    if (nxt is not None and ckinds.is_integer(t) and not ckinds.is_bool(t)
            and (ckinds.is_length(p) or _COUNT_FIRST.match(p.name))
            and ckinds.pointer_depth(nxt.type) == 2 and ckinds.base_name(nxt.type) == "char"
            and ckinds.is_const_target(ckinds.pointee(nxt.type))):
        s.put("count", i, pair=i + 1)
        s.put("strarray", i + 1, pair=i)
        return True
    return False


def _buffer(s: Scan, i: int, nxt: Param | None, nxt2: Param | None) -> bool:
    """A byte or character buffer: input, output, scratch room, or memory to release."""
    p = s.fn.params[i]
    t = p.type
    if not (ckinds.is_pointer(t) and (ckinds.is_bytes(t) or ckinds.is_string(t))):
        return False
    const = ckinds.is_const_target(t)
    if synth_lengths.position_then_length(nxt, nxt2):  # (in, &in_pos, in_size): the position starts at 0
        s.put("bytes" if const else "outbuf", i, pair=i + 2)
        s.put("out_scalar", i + 1)
        s.put("len" if const else "outlen", i + 2, pair=i)
    elif synth_lengths.length_pointer_after(p, nxt):
        # buffer + pointer to its length: an output buffer, or an input whose used
        # length comes back (lib_decode(dst, &dst_len, src, &src_len)'s src_len).
        s.pair("bytes" if const else "outbuf", i, "inlen_ptr" if const else "outlen_ptr")
    elif nxt and is_len_like(nxt) and not ckinds.is_enum_like(nxt.type):
        if const or not out_direction(s.fn, p):
            s.pair("bytes", i, "len")
        else:
            s.pair("outbuf", i, "outlen")
        if nxt2 and ckinds.is_integer(nxt2.type) and re.search(r"(nitems|nmemb|count)", nxt2.name):
            s.put("unit", i + 2, pair=i)
    elif next(iter(synth_lengths.bare_data(s.fn)), None) is p:
        s.put("bytes", i)  # the input of a header that never writes `const`
    elif not const and unsized_output(s.fn, p):
        # `unescape(const char *str, int len, char *target)`: the library writes up to
        # about the input's length into it; a short string there overflows.
        s.put("outbuf", i)
    elif ckinds.is_string(t) or const:
        s.put("text", i)
    elif s.kind == "destroy" or re.search("free", s.fn.name, re.I):
        s.put("alloc", i)
    else:
        s.put("scratch", i)
    return True


# A count of slots, or their capacity (`max_items`, `cap`): the library fills up to that many.
_SLOT_COUNT = re.compile(r"^(n|num\w*|number_?of\w*|count|\w+_count|n_?[a-z]+s"
                         r"|max_?[a-z]\w*|\w+_max|cap|capacity)$", re.I)


def _out_ptr(s: Scan, i: int, nxt: Param | None, nxt2: Param | None) -> bool:
    t = s.fn.params[i].type
    if ckinds.pointer_depth(t) < 2:
        return False
    key = s.idx.type_key(ckinds.pointee(t))
    # An unnamed integer after an array of the library's objects counts it (`f(T **, int32_t)`).
    counted = nxt is not None and ckinds.is_integer(nxt.type) and not ckinds.is_bool(nxt.type) and (
        _SLOT_COUNT.match(nxt.name) or (key is not None and unnamed(nxt.name)))
    if counted and key and ckinds.pointer_depth(t) == 2 and ckinds.is_const_target(ckinds.pointee(t)):
        # `encode(const T **objs, int n, ...)`: objects read, not returned.
        s.put("object_array", i, pair=i + 1, type_key=key)
        s.put("int", i + 1, choices=(1, 1))
        return True
    s.put("out_ptr", i)
    if counted:
        # `f(T **codes, int number_of_codes)`: the harness passes one slot, so the count is 1
        # (a count from the input makes the library write or read past it).
        s.put("int", i + 1, choices=(1, 1))
    return True


def _library_type(s: Scan, i: int, nxt: Param | None, nxt2: Param | None) -> bool:
    """A parameter of one of the library's own types: a wrapped input, an object, a handle."""
    p = s.fn.params[i]
    t = p.type
    key = s.idx.type_key(t)
    if not key:
        return False
    if ckinds.pointer_depth(t) == 1 and ckinds.is_const_target(t) and ckinds.blob_fields(key):
        s.put("blob", i, type_key=key)  # `const buf_t *in`: the input, wrapped
    elif ckinds.is_pointer(t):
        s.put(object_role(s.fn, s.fn_words, s.idx, s.first_key, i, p, key), i, type_key=key)
    else:
        _handle(s, i, key)
    return True


def _plain_pointer(s: Scan, i: int, nxt: Param | None, nxt2: Param | None) -> bool:
    """A pointer to a plain C type: an array in, room to work in, a value out, or nothing."""
    t = s.fn.params[i].type
    if not ckinds.is_pointer(t):
        return False
    inner = ckinds.pointee(t)
    if ckinds.is_const_target(t) and nxt and is_len_like(nxt):
        s.pair("array", i, "count")
    elif counts_array(nxt) and (ckinds.is_integer(inner) or ckinds.is_float(inner)):
        # `int *workspace, size_t wscount`: room the library works in, as large as it says.
        s.pair("workspace", i, "count")
    elif synth_lengths.unnamed_array(s.fn, s.fn.params[i]):
        s.put("outbuf" if out_direction(s.fn, s.fn.params[i]) else "bytes", i)
    elif ckinds.is_integer(inner) or ckinds.is_float(inner) or ckinds.is_enum_like(inner):
        s.put("out_scalar", i)
    else:
        s.put("null", i)
    return True


def _value(s: Scan, i: int, nxt: Param | None, nxt2: Param | None) -> bool:
    """A value: a descriptor, a struct size, an ABI version, or an option read from the input."""
    p = s.fn.params[i]
    t, lname = p.type, p.name.lower()
    if re.search(r"(^fd$|fildes|descriptor)", lname) and ckinds.is_integer(t):
        s.put("fd", i)
    elif (
        s.kind == "init" and s.first_key and i == len(s.fn.params) - 1 and lname.endswith("size")
    ) or lname in ("stream_size", "struct_size", "structsize"):
        s.put("struct_size", i, type_key=s.first_key)
    elif (
        re.search(r"^(version|version_?number|api_?version|abi_?version)$", lname)
        and ckinds.is_integer(t)
        and s.idx.version_function(s.fn.name, integer=True)
    ):
        # An ABI version the library checks: its own version function gives the right one.
        s.put("version", i)
    elif ckinds.is_bool(t):
        s.put("bool", i, choices=(0, 1))
    elif ckinds.is_float(t):
        name = synth_choices.option_name(s.fn.name, i, p.name)
        s.put("float", i, choices=synth_choices.float_choices(name) or ())
    elif ckinds.is_integer(t):
        choices = synth_choices.int_choices(p.name, s.fn.name)
        s.put("int", i, choices=choices)
        word = synth_choices.option_name(s.fn.name, i, p.name)
        if mask := synth_choices.scoped_flags(s.fn.name, word, t):  # the bits documented for it
            s.out[i] = Role("int", i, p, flag_mask=mask)
        elif choices == synth_choices.DEFAULT_INT and (flags := synth_choices.high_flags(word, t)):
            s.out[i] = Role("int", i, p, choices=choices, high_flags=flags,
                            clear_bits=synth_choices.trusting_bits(s.fn.name))
    elif ckinds.base_name(t) == "va_list":
        s.put("unsupported", i)
    elif ckinds.is_enum_like(t):
        s.put("enum", i, choices=synth_choices.enum_values(t) or synth_choices.DEFAULT_ENUM)
    else:  # a struct by value or an unknown typedef: all-zero is valid for any of them
        s.put("zero_value", i)
    return True


RULES: tuple[Rule, ...] = (
    _callback, _file, _pointer_handle, _named_string, _strarray, _buffer, _out_ptr, _library_type,
    _plain_pointer, _value,
)


def _unnamed_open(s: Scan, i: int) -> str | None:
    """``lib_open(const char *, const char *)``: an opener's unnamed text params are path, mode."""
    fn = s.fn
    name = fn.params[i].name
    if not (set(s.idx.verbs(fn.name)) & _OPENS_FILE) or (name and not name.startswith("arg")):
        return None
    texts = [j for j, p in enumerate(fn.params) if ckinds.is_string(p.type)]
    if len(texts) == 2 and ckinds.is_const_target(fn.params[texts[1]].type):  # a writable one is no mode
        return "path" if i == texts[0] else "mode"
    return "path" if i == texts[0] and ckinds.is_const_target(fn.params[i].type) else None
