"""What each parameter of a function is for, as far as a harness is concerned.

A role says how an argument is built: the fuzz payload as text or bytes, a length paired with a
buffer, an output buffer, an object of a library type, an option value taken from the input, a
callback, and so on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline import cdecl
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_knowledge import DEFAULT_ENUM, int_choices
from agents.offline.synth_lengths import grouped_lengths, is_len_like
from agents.offline.synth_vocab import CONSUME, transfers_ownership
from fuzzkit.api import FunctionDecl, Param

IN_VERBS = {
    "write",
    "put",
    "puts",
    "send",
    "feed",
    "parse",
    "update",
    "hash",
    "process",
    "set",
    "load",
    "scan",
    "minify",
    "crc",
    "checksum",
    "digest",
    "compress",
    "encode",
    "fwrite",
    "add",
}
PAYLOAD_NAMES = re.compile(
    r"(value|input|data|buf|str|json|text|source|src|string|content|in$|"
    r"yaml|xml|doc|message|msg|bytes|raw|payload)",
    re.I,
)
OPTIONAL_NAMES = re.compile(r"(_start$|_end$|directive|hint|opt|reserved|user|extra)", re.I)


@dataclass(frozen=True)
class Role:
    """How to build one argument.

    kind is one of: text, bytes, len, outbuf, outlen, outlen_ptr, inlen_ptr, scratch, alloc,
    object, out_object, consumed, fresh, child, handle, out_scalar, out_ptr, int, bool, float,
    enum, zero_value, version, struct_size, fd, path, mode, file, format, callback, userdata, array,
    strarray, count, workspace, blob, unit, unsupported, null.
    """

    kind: str
    index: int
    param: Param
    pair: int | None = None
    type_key: str | None = None
    choices: tuple[int, ...] = ()


def _out_direction(fn: FunctionDecl, p: Param) -> bool:
    """Whether the non-const buffer ``p`` of ``fn`` is written by the library (vs. read)."""
    if re.search(r"(out|dest|dst|result)", p.name, re.I):
        return True
    if re.search(r"^(in|input|src|source)$", p.name, re.I):
        return False
    lowered = fn.name.lower()
    if any(v in lowered for v in ("gets", "fread", "output")) or "get" in words(fn.name):
        return True  # lib_getName(obj, char *buf): a getter's buffer is filled for the caller
    return not (set(words(fn.name)) | {lowered}) & IN_VERBS


def _unsized_output(fn: FunctionDecl, p: Param) -> bool:
    """A non-const buffer with no length, named as a destination, beside an input buffer."""
    named = re.fullmatch(r"(target|dest|dst|out|output|outbuf|result|res)\w{0,4}", p.name, re.I)
    inputs = [q for q in fn.params if q is not p and cdecl.is_pointer(q.type)
              and cdecl.is_const_target(q.type) and (cdecl.is_string(q.type) or cdecl.is_bytes(q.type))]
    return bool(named and inputs)


def roles(fn: FunctionDecl, idx: ApiIndex) -> list[Role]:
    """One :class:`Role` per parameter of ``fn`` (cached per API index)."""
    cached = idx.role_cache.get(fn.name)
    if cached is not None and cached[0] == fn:
        return list(cached[1])
    found = _roles(fn, idx)
    idx.role_cache[fn.name] = (fn, found)
    return list(found)


def _roles(fn: FunctionDecl, idx: ApiIndex) -> list[Role]:
    params = list(fn.params)
    out: list[Role | None] = [None] * len(params)
    fn_words = set(idx.verbs(fn.name)) | set(words(fn.name))
    kind = idx.kind(fn)
    first_key = idx.type_key(params[0].type) if params else None
    grouped = grouped_lengths(params)
    for i, p in enumerate(params):
        if out[i] is not None:
            continue
        t, nxt = p.type, params[i + 1] if i + 1 < len(params) else None
        if i in grouped:
            j = grouped[i]
            if j is None:  # an output buffer whose size the function takes on trust
                out[i] = Role("outbuf", i, p)
                continue
            role = _grouped_role(fn, p, i, j)
            out[i] = role
            by_ptr = cdecl.is_pointer(params[j].type)
            if role.kind == "bytes":
                out[j] = Role("inlen_ptr" if by_ptr else "len", j, params[j], pair=i)
            else:
                out[j] = Role("outlen_ptr" if by_ptr else "outlen", j, params[j], pair=i)
            continue
        if nxt is not None and out[i + 1] is not None:
            nxt = None  # already some buffer's length
        nxt2 = params[i + 2] if i + 2 < len(params) else None
        lname = p.name.lower()
        if cdecl.is_function_pointer(t):
            out[i] = Role("callback", i, p)
            if nxt and cdecl.strip_const(nxt.type) in ("void *", "const void *"):
                out[i + 1] = Role("userdata", i + 1, nxt)
            continue
        if cdecl.is_file(t):
            out[i] = Role("file", i, p)
            continue
        if cdecl.is_string(t) and lname == "version" and idx.version_function():
            out[i] = Role("version", i, p)
            continue
        if cdecl.is_string(t) and (
            re.search(r"(path|filename|file_name|fname|^file$)", lname) or _unnamed_open(fn, idx, i) == "path"
        ):
            out[i] = Role("path", i, p)
            continue
        if cdecl.is_string(t) and re.search(r"^(format|fmt)$", lname):
            out[i] = Role("format", i, p)
            continue
        if cdecl.is_string(t) and (lname == "mode" or _unnamed_open(fn, idx, i) == "mode"):
            out[i] = Role("mode", i, p)
            continue
        if cdecl.pointer_depth(t) == 2 and cdecl.base_name(t) == "char" and nxt and is_len_like(nxt):
            out[i] = Role("strarray", i, p, pair=i + 1)
            out[i + 1] = Role("count", i + 1, nxt, pair=i)
            continue
        if cdecl.is_pointer(t) and (cdecl.is_bytes(t) or cdecl.is_string(t)):
            const = cdecl.is_const_target(t)
            if (
                nxt
                and cdecl.is_pointer(nxt.type)
                and not cdecl.is_bytes(nxt.type)
                and cdecl.is_integer(cdecl.pointee(nxt.type))
                and not (const and cdecl.is_string(t) and re.match(r"z[A-Z]", p.name))
            ):
                # A `zName` is NUL-terminated by its name (the pointer after it is a result).
                # buffer + pointer to its length: an output buffer, or an input whose used
                # length comes back (lib_decode(dst, &dst_len, src, &src_len)'s src_len).
                k = "bytes" if const else "outbuf"
                out[i] = Role(k, i, p, pair=i + 1)
                out[i + 1] = Role("inlen_ptr" if const else "outlen_ptr", i + 1, nxt, pair=i)
                continue
            if nxt and is_len_like(nxt) and not cdecl.is_enum_like(nxt.type):
                if const or not _out_direction(fn, p):
                    out[i] = Role("bytes", i, p, pair=i + 1)
                    out[i + 1] = Role("len", i + 1, nxt, pair=i)
                else:
                    out[i] = Role("outbuf", i, p, pair=i + 1)
                    out[i + 1] = Role("outlen", i + 1, nxt, pair=i)
                if nxt2 and cdecl.is_integer(nxt2.type) and re.search(r"(nitems|nmemb|count)", nxt2.name):
                    out[i + 2] = Role("unit", i + 2, nxt2, pair=i)
                continue
            if not const and _unsized_output(fn, p):
                # `unescape(const char *str, int len, char *target)`: the library writes up to
                # about the input's length into it; a short string there overflows.
                out[i] = Role("outbuf", i, p)
            elif cdecl.is_string(t) or const:
                out[i] = Role("text", i, p)
            elif kind == "destroy" or re.search("free", fn.name, re.I):
                out[i] = Role("alloc", i, p)
            else:
                out[i] = Role("scratch", i, p)
            continue
        if cdecl.pointer_depth(t) >= 2:
            out[i] = Role("out_ptr", i, p)
            continue
        key = idx.type_key(t)
        if key and cdecl.pointer_depth(t) == 1 and cdecl.is_const_target(t) and cdecl.blob_fields(key):
            out[i] = Role("blob", i, p, type_key=key)  # `const buf_t *in`: the input, wrapped
            continue
        if key and cdecl.is_pointer(t):
            out[i] = Role(_object_role(fn, idx, i, p, key, first_key, fn_words), i, p, type_key=key)
            continue
        if key:
            out[i] = Role("handle", i, p, type_key=key)
            continue
        if cdecl.is_pointer(t):
            inner = cdecl.pointee(t)
            if cdecl.is_const_target(t) and nxt and is_len_like(nxt):
                out[i] = Role("array", i, p, pair=i + 1)
                out[i + 1] = Role("count", i + 1, nxt, pair=i)
            elif _counted(nxt) and (cdecl.is_integer(inner) or cdecl.is_float(inner)):
                # `int *workspace, size_t wscount`: room the library works in, as large as it says.
                out[i] = Role("workspace", i, p, pair=i + 1)
                out[i + 1] = Role("count", i + 1, nxt, pair=i)
            elif cdecl.is_integer(inner) or cdecl.is_float(inner) or cdecl.is_enum_like(inner):
                out[i] = Role("out_scalar", i, p)
            else:
                out[i] = Role("null", i, p)
            continue
        if re.search(r"(^fd$|fildes|descriptor)", lname) and cdecl.is_integer(t):
            out[i] = Role("fd", i, p)
        elif (kind == "init" and first_key and i == len(params) - 1 and lname.endswith("size")) or lname in (
            "stream_size",
            "struct_size",
            "structsize",
        ):
            out[i] = Role("struct_size", i, p, type_key=first_key)
        elif (
            re.search(r"^(version|version_?number|api_?version|abi_?version)$", lname)
            and cdecl.is_integer(t)
            and idx.version_function(fn.name, integer=True)
        ):
            # An ABI version the library checks: its own version function gives the right one.
            out[i] = Role("version", i, p)
        elif cdecl.is_bool(t):
            out[i] = Role("bool", i, p, choices=(0, 1))
        elif cdecl.is_float(t):
            out[i] = Role("float", i, p)
        elif cdecl.is_integer(t):
            out[i] = Role("int", i, p, choices=int_choices(p.name, fn.name))
        elif cdecl.base_name(t) == "va_list":
            out[i] = Role("unsupported", i, p)
        elif cdecl.is_enum_like(t):
            out[i] = Role("enum", i, p, choices=DEFAULT_ENUM)
        else:  # a struct by value or an unknown typedef: all-zero is valid for any of them
            out[i] = Role("zero_value", i, p)
    _pair_bit_lengths(out)
    return [r if r is not None else Role("null", i, params[i]) for i, r in enumerate(out)]


_BITS = re.compile(r"bits$", re.I)


def _pair_bit_lengths(out: list[Role | None]) -> None:
    """``f(ctx, const uint8_t *key, unsigned keybits)``: a buffer measured in bits.

    The callee reads ``keybits / 8`` bytes; an unrelated option value there makes it read past
    a short input. The bit count becomes the buffer's length times eight.
    """
    bufs = [r for r in out if r is not None and r.kind in ("bytes", "text") and r.pair is None]
    bits = [r for r in out if r is not None and r.kind == "int" and _BITS.search(r.param.name)]
    if len(bufs) == 1 and len(bits) == 1:
        buf, nbits = bufs[0], bits[0]
        out[buf.index] = Role("bytes", buf.index, buf.param, pair=nbits.index)
        out[nbits.index] = Role("len_bits", nbits.index, nbits.param, pair=buf.index)


def _grouped_role(fn: FunctionDecl, p: Param, i: int, j: int) -> Role:
    """The role of a buffer whose length comes later (:func:`grouped_lengths`)."""
    if cdecl.is_const_target(p.type) or not _out_direction(fn, p):
        return Role("bytes", i, p, pair=j)
    return Role("outbuf", i, p, pair=j)


def _object_role(
    fn: FunctionDecl,
    idx: ApiIndex,
    i: int,
    p: Param,
    key: str,
    first_key: str | None,
    fn_words: set[str],
) -> str:
    lname = p.name.lower()
    verbs = idx.verbs(fn.name)
    if lname in ("dest", "dst", "target", "copy", "clone") and set(verbs) & {"copy", "clone", "dup"}:
        return "out_object"
    if i == 0:
        return "object"
    if lname in ("item", "child", "node") and fn_words & {"detach", "replace", "via", "delete", "remove"}:
        return "child"
    if "reference" in fn_words:
        # The object keeps a reference, not ownership: a separate item that outlives it.
        return "fresh"
    if (set(verbs) & CONSUME or transfers_ownership(fn.name)) and not cdecl.is_const_target(p.type):
        return "consumed"
    if (
        first_key is not None  # a producer steps an object; a plain out struct is a report
        and key != first_key
        and not cdecl.is_const_target(p.type)
        and not cdecl.is_opaque(key)  # the caller cannot hold one to be filled
        and set(verbs)
        & {"parse", "scan", "load", "next", "fetch", "pull", "take", "lex", "step", "read", "get"}
    ):
        return "out_object"
    if OPTIONAL_NAMES.search(lname) and not idx.lifecycle(key).create:
        return "null"
    return "object"


def _counted(nxt: Param | None) -> bool:
    """Whether ``nxt`` counts the array before it: named so, or an unnamed ``size_t``."""
    if nxt is None:
        return False
    return cdecl.is_length(nxt) or (is_len_like(nxt) and cdecl.base_name(nxt.type) == "size_t")


def payload_slot(rs: list[Role]) -> int | None:
    """The parameter that should receive the whole fuzz payload (bytes beat named text)."""
    bytes_roles = [r for r in rs if r.kind in ("bytes", "blob")]
    if bytes_roles:
        return bytes_roles[0].index
    texts = [r for r in rs if r.kind == "text"]
    named = [r for r in texts if PAYLOAD_NAMES.search(r.param.name)]
    if named:
        return named[-1].index
    return texts[0].index if texts else None


def _unnamed_open(fn: FunctionDecl, idx: ApiIndex, i: int) -> str | None:
    """``lib_open(const char *, const char *)``: an opener's unnamed text params are path, mode."""
    name = fn.params[i].name
    if not (set(idx.verbs(fn.name)) & {"open", "fopen"}) or (name and not name.startswith("arg")):
        return None
    texts = [j for j, p in enumerate(fn.params) if cdecl.is_string(p.type)]
    if len(texts) == 2:
        return "path" if i == texts[0] else "mode"
    return "path" if texts == [i] else None
