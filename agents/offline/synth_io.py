"""Files, descriptors, modes and callbacks: arguments through which a library does its own I/O.

The payload becomes a file of its own in ``$TMPDIR`` (the run directory), removed at the end of
the input: a path must name a real file, since a library may resolve it (``realpath``), and
``/proc/self/fd/N`` then resolves to a name that does not exist. Callbacks are generated from
the typedef's known signature or from a spelled function pointer type.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from agents.offline import cdecl, ckinds, type_table
from agents.offline.synth_knowledge import Callback, always_consumes
from agents.offline.synth_types import WRITE_WORDS, CallPlan, Role, decl_cast
from fuzzkit.api import FunctionDecl
from fuzzkit.select_io import words
from fuzzkit.vocabulary import alternation, words_of

if TYPE_CHECKING:
    from agents.offline.synth_api import ApiIndex
    from agents.offline.synth_plan import Planner


def input_file(pl: Planner, empty: bool = False) -> tuple[str, str]:
    """The descriptor and path of the payload as a file of its own, removed at cleanup.

    ``empty``: an empty file instead, for an object opened before the call that takes the
    payload itself (a store opened on nothing, then given the input by the target).
    """
    made = pl.empty_file_ctx if empty else pl.file_ctx
    if made:
        return made
    pl.f.need("tmpfile")
    pl.f.include("<stdio.h>", "<unistd.h>")
    fd = pl.var("int", "empty_fd" if empty else "fd", "-1")
    path = pl.f.name("empty_path" if empty else "path")
    pl.f.decls.append(f"char {path}[512] = {{0}};")
    pl.f.setup.append(f"{fd} = lf_tmpfile(data, {'0' if empty else 'size'}, {path}, sizeof {path});")
    pl.f.setup.append(f"if ({fd} < 0) {pl.f.fail()}")
    pl.f.cleanup.append(f"if ({fd} >= 0) {{ close({fd}); unlink({path}); }}")
    if empty:
        pl.empty_file_ctx = (fd, path)
    else:
        pl.file_ctx = (fd, path)
    return fd, path


def _writes(pl: Planner, fn: FunctionDecl) -> bool:
    return bool(WRITE_WORDS.search(pl.purpose or fn.name))


def io_arg(pl: Planner, fn: FunctionDecl, r: Role, plan: CallPlan, feed: bool = True) -> str:
    """The argument for an fd, path, mode, FILE *, callback, user-data or format parameter."""
    k = r.kind
    if k == "mode":  # a file opened on nothing is a new one (read, an empty file is no input)
        return '"wb"' if _writes(pl, fn) or plan.on_nothing else '"rb"'
    if k == "format":
        return '"lf"'
    if k == "path":
        plan.on_nothing = not feed and not pl.file_ctx
        return _payload_file(pl, fn, empty=plan.on_nothing)[1]
    if k == "fd":
        fd = _payload_file(pl, fn)[0]
        if pl.idx.returns_owned(fn):
            # The opened object owns the descriptor it is given: give it a duplicate, and close
            # the duplicate ourselves when the open fails.
            dup = pl.var("int", "fd_dup", "-1")
            pl.f.setup.append(f"lseek({fd}, 0, SEEK_SET);")
            pl.f.setup.append(f"{dup} = dup({fd});")
            pl.f.setup.append(f"if ({dup} < 0) {pl.f.fail()}")
            pl.f.cleanup.append(f"if ({dup} >= 0) close({dup});")
            plan.after.append(f"if ({{result}} != NULL) {dup} = -1;")
            pl.f.notes.append(f"{fn.name} takes ownership of its descriptor: it gets a dup()")
            return dup
        return fd
    if k == "file":
        return _file_arg(pl, fn, plan)
    if k == "callback":
        if any(_is_allocator(p.name, p.type) for p in fn.params if ckinds.is_function_pointer(p.type)):
            # Custom allocator hooks come in pairs (malloc, free): NULL keeps the library's own.
            return "NULL"
        return callback(pl, r.param.type, user_getter(pl, fn, r.param.type))
    if k == "userdata":
        if not callback_source(fn):
            # Beside a notifier (`set_error_fn(obj, void *error_ptr, fn)`): the harness's own
            # callbacks ignore it, and the input given there would reach nothing.
            return "NULL"
        pl.f.need("input")
        src = pl.f.name("source")
        # Static: the object the callback is registered on may keep the pointer past this block
        # (a context that reads through it again on its next call), never past the harness.
        pl.f.decls.append(f"static lf_input_t {src};")
        pl.f.setup += [f"{src}.data = data;", f"{src}.size = size;"]
        pl.fed = True  # the reader callback registered beside it serves the input from it
        return f"({decl_cast(r.param.type)})&{src}"
    return "NULL"


def _file_arg(pl: Planner, fn: FunctionDecl, plan: CallPlan) -> str:
    """A ``FILE *`` over the payload's file for ``fn``, closed at cleanup unless ``fn``'s object takes it."""
    fd = _payload_file(pl, fn)[0]
    fp = pl.var("FILE *", "fp", "NULL")
    dup = pl.var("int", "fp_fd", "-1")
    mode = '"wb"' if _writes(pl, fn) else '"rb"'
    pl.f.setup.append(f"lseek({fd}, 0, SEEK_SET);")
    pl.f.setup.append(f"{dup} = dup({fd});")
    pl.f.setup.append(f"if ({dup} < 0) {pl.f.fail()}")
    pl.f.setup.append(f"{fp} = fdopen({dup}, {mode});")
    pl.f.setup.append(f"if ({fp} == NULL) {{ close({dup}); {pl.f.fail()} }}")
    pl.f.cleanup.append(f"if ({fp} != NULL) fclose({fp});")
    pl.f.include("<stdio.h>", "<unistd.h>")
    if always_consumes(fn.name):
        # Documented: the stream becomes the object's at the call (closed when it is finished).
        plan.after.append(f"{fp} = NULL;")
        pl.f.notes.append(f"the stream given to {fn.name} is its object's from the call on")
    elif _closes_its_stream(pl, fn):
        # Opened on the stream and closed by a `close`: the object closes the stream with it.
        plan.after.append(f"if ({{result}} != NULL) {fp} = NULL;")
        pl.f.notes.append(f"{fn.name}'s object closes the stream it is given")
    return fp


def _payload_file(pl: Planner, fn: FunctionDecl, empty: bool = False) -> tuple[str, str]:
    """:func:`input_file` for ``fn``: a call given the payload's file to read receives the input.

    By the call's own name: a harness whose purpose is writing still reads its object from the
    input first (``chain_read(chain, path)`` before ``chain_write(chain)``).
    """
    if not empty and not WRITE_WORDS.search(fn.name):
        pl.fed = True
    return input_file(pl, empty)


def _closes_its_stream(pl: Planner, fn: FunctionDecl) -> bool:
    """``open(FILE *)`` whose object is released by a ``close``: closing it closes the stream too."""
    key = pl.idx.type_key(fn.return_type)
    dtor = pl.idx.destructor(key, fn.name) if key and pl.idx.returns_owned(fn) else None
    return bool(dtor and "close" in pl.idx.verbs(dtor))


_ALLOC_NAME = re.compile(alternation("alloc_hook"), re.I)


def sets_allocator(idx: ApiIndex, fn: FunctionDecl) -> bool:
    """Whether ``fn`` installs allocation hooks (``set_hooks(void *(*malloc_fn)(size_t), ...)``).

    Not a constructor given them (NULL there keeps the library's own for that object): a setter
    changes how every later call allocates and releases, in this input and the next.
    """
    if idx.type_key(fn.return_type) and idx.returns_owned(fn):
        return False
    return any(ckinds.is_function_pointer(p.type) and _is_allocator(p.name, p.type) for p in fn.params)


def _is_allocator(name: str, ctype: str) -> bool:
    """A memory-allocation hook (``void *(*)(size_t, void *)``, or named ``*malloc``/``*free``)."""
    sig = _signature(ctype)
    if _ALLOC_NAME.search(name) or _ALLOC_NAME.search(ckinds.base_name(ctype)):
        return True
    if sig is None or not sig.params:
        return False
    if not (ckinds.is_pointer(sig.return_type) and ckinds.is_void(ckinds.pointee(sig.return_type))):
        return False
    first = sig.params[0]  # its type, or its type and name (`size_t n`)
    return "size" in first and (ckinds.is_integer(first) or ckinds.is_integer(first.rsplit(" ", 1)[0]))


def _signature(ctype: str) -> Callback | None:
    base = ckinds.strip_const(ctype).replace("*", "").strip()
    table = type_table.active()
    ctype = table.canonical.get(base, ctype) if "(*)" in table.canonical.get(base, "") else ctype
    m = re.match(r"^(?P<ret>.*?)\s*\(\*\)\s*\((?P<args>.*)\)$", ctype.strip())
    if not m:
        return None
    params = tuple(cdecl.normalize_type(a) for a in m["args"].split(",") if a.strip() != "void")
    ret = cdecl.normalize_type(m["ret"])
    shape = "sink"
    if (len(params) == 4 and ckinds.is_bytes(params[1]) and not ckinds.is_const_target(params[1])
            and ckinds.is_integer(params[2]) and ckinds.is_pointer(params[3])
            and ckinds.is_integer(ckinds.pointee(params[3]))):
        shape = "reader"  # (ctx, buffer to fill, its size, where the count goes)
    elif (len(params) >= 4 and ckinds.is_bytes(params[1]) and not ckinds.is_const_target(params[1])
          and ckinds.is_pointer(params[2]) and ckinds.is_integer(ckinds.pointee(params[2]))
          and _untyped(params[-1])):
        shape = "reader_inout"  # (obj, buffer to fill, its size in and the count out, user pointer)
    elif len(params) == 3 and ckinds.is_bytes(params[1]):
        shape = "writer" if ckinds.is_const_target(params[1]) else "reader_count"
    elif len(params) == 2 and ckinds.pointer_depth(params[1]) == 2:
        shape = "pull"
    elif (len(params) >= 2 and ckinds.is_bytes(params[0]) and ckinds.is_const_target(params[0])
          and ckinds.is_integer(params[1])):
        shape = "output"  # `int write(const uint8_t *data, size_t n, void *ctx)`: data first
    ok = "0"
    note = table.returns.get(base, "").lower()
    if re.search(r"\breturn (@c )?1\b|\b1\b[^.]*succe|returns? (true|non-?zero)[^.]*succe", note):
        ok = "1"  # the callback's documentation says success is 1
    elif shape == "output" and not note and not ckinds.is_void(ret):
        # Undocumented: the count written, which reads as success to a byte-count check
        # and to a true/false check alike.
        ok = "a1"
    return Callback(ret, params, shape, ok)


_OUTPUT_FIELD = re.compile(alternation("output_hook"), re.I)  # `writer`, `write_fn`, ...


def fill_output_hooks(pl: Planner, key: str, var: str, into: list[str]) -> None:
    """Point a zeroed record's output hooks at a callback that accepts everything.

    An output hook is a ``writer`` field of a function type taking the bytes written; the
    library calls it unconditionally, and a NULL there is a crash in the harness, not a finding.
    """
    rec = type_table.active().record(key)
    if rec is None or rec.opaque:
        return
    for name, ftype in rec.fields:
        sig = _signature(ftype) if _OUTPUT_FIELD.search(name) else None
        if sig is not None and sig.shape in ("writer", "output"):
            into.append(f"{var}.{name} = {callback(pl, ftype)};")


def _untyped(ctype: str) -> bool:
    """``void *`` however spelled (``rd_voidp``)."""
    return ckinds.strip_const(ckinds.resolve(ctype)) == "void *"


def callback_source(fn: FunctionDecl) -> bool:
    """``set_read_fn(obj, void *user, read_fn)`` or ``open(void *user, read_fn)``: input through a reader."""
    user = any(not ckinds.is_function_pointer(p.type) and _untyped(p.type) for p in fn.params)
    return user and any(
        (sig := _signature(p.type)) is not None and sig.shape in _READERS
        for p in fn.params if ckinds.is_function_pointer(p.type))


def user_getter(pl: Planner, fn: FunctionDecl, ctype: str) -> str | None:
    """The API getter a reader callback finds its user pointer with, if the library has one.

    ``set_read_fn(r, void *io_ptr, read_fn)`` whose ``read_fn(r, buf, n)`` is handed the
    library's own opaque object: the pointer given as ``io_ptr`` comes back from the function
    taking that object alone, returning ``void *`` and named with the parameter's words
    (``get_io_ptr(r)``), not from another getter of the same object (``get_error_ptr``).
    """
    sig = _signature(ctype)
    if sig is None or not sig.params or sig.shape not in ("reader", "reader_count", "pull"):
        return None  # (a reader_inout callback is handed the user pointer itself)
    key = pl.idx.type_key(sig.params[0])
    user = next((p.name for p in fn.params
                 if not ckinds.is_function_pointer(p.type) and _untyped(p.type)), "")
    if not key or not user:
        return None
    want = set(words(user))
    return next((g.name for g in pl.idx.api if len(g.params) == 1 and pl.idx.type_key(g.params[0].type) == key
                 and _untyped(g.return_type)
                 and want <= set(words(g.name))), None)


def callback(pl: Planner, ctype: str, getter: str | None = None) -> str:
    """A static function in GLOBALS implementing the callback type ``ctype``.

    ``getter``: the API function a reader callback gets its user pointer back with
    (:func:`user_getter`), when the library hands the callback its own object.
    """
    sig = _signature(ctype)
    if sig is None:
        pl.f.notes.append(f"unknown callback type {ctype}: NULL passed")
        return "NULL"
    name = pl.f.name(f"lf_{sig.shape}_cb")
    pl.f.taken.add(name)
    names = [f"a{i}" for i in range(len(sig.params))]
    head = ", ".join(
        f"{t}{'' if t.endswith('*') else ' '}{n}" for t, n in zip(sig.params, names, strict=True)
    )
    body = _BODIES.get(sig.shape, _sink_body)(sig, names)
    if sig.shape == "reader_inout":
        body = _served_inout(sig, names)
    elif (field := _user_field(sig)) is not None:  # `read(obj, buf, n)`: the user pointer is obj's
        body = [b.replace(f"(lf_input_t *){names[0]};", f"(lf_input_t *){names[0]}->{field};") for b in body]
    elif getter is not None:  # `read(obj, buf, n)`: the user pointer comes back from `get_io_ptr(obj)`
        body = [b.replace(f"(lf_input_t *){names[0]};", f"(lf_input_t *){getter}({names[0]});") for b in body]
    elif sig.shape in _BODIES and pl.idx.type_key(sig.params[0]):
        # The library's own object, with no way back to the user pointer: it is no cursor.
        body = _sink_body(sig, names)
    pl.f.need("input")
    pl.f.include("<string.h>")
    comment = _COMMENTS.get(sig.shape, "/* A callback that does nothing and reports success. */")
    ret = sig.return_type
    pl.f.globals.append(
        f"{comment}\nstatic {ret}{'' if ret.endswith('*') else ' '}{name}({head}) {{\n"
        + "\n".join("  " + b for b in body)
        + "\n}"
    )
    return name


# Best first: the pointer given to the opener is the user's; the library's private state is not it.
_USER_FIELDS = ("user", "client", "opaque", "cookie", "context|ctx", "data")


def _user_field(sig: Callback) -> str | None:
    """The ``void *`` field of the library object a reader callback gets first, holding the user pointer.

    ``int read(file *f, uint8_t *buf, int n)`` registered by ``file *open(void *user, read, ...)``:
    the library keeps ``user`` in its object (``f->user_data``) and hands the callback the object.
    """
    if sig.shape not in ("reader", "reader_count", "pull") or ckinds.is_bytes(sig.params[0]):
        return None
    rec = type_table.active().record(ckinds.base_name(sig.params[0]))
    if rec is None or rec.opaque or ckinds.pointer_depth(sig.params[0]) != 1:
        return None
    untyped = [name for name, ftype in rec.fields if ckinds.strip_const(ftype) == "void *"
               and not re.search("priv|internal", name, re.I)]
    return next((name for word in _USER_FIELDS for name in untyped if re.search(word, name, re.I)), None)


def _served(names: list[str]) -> list[str]:
    """Copy up to the asked count of payload bytes into the library's buffer and advance."""
    return [
        f"lf_input_t *in = (lf_input_t *){names[0]};",
        f"size_t n = in->size < (size_t){names[2]} ? in->size : (size_t){names[2]};",
        f"if (n) memcpy({names[1]}, in->data, n);",
        "in->data += n;",
        "in->size -= n;",
    ]


def _served_inout(sig: Callback, names: list[str]) -> list[str]:
    """``status read(obj, buf, size_t *bytes, void *user)``: serve up to ``*bytes``, say how many.

    Of a status enum, the constant saying "more follows" while bytes are served and the one saying
    the stream ended once none are (a reader that keeps answering "continue" with nothing would be
    asked again forever); a plain integer status is 0 both ways.
    """
    more, end = _status_constants(sig.return_type)
    return [*_served([names[-1], names[1], f"*{names[2]}"]), f"*{names[2]} = n;",
            f"return n ? ({sig.return_type}){more} : ({sig.return_type}){end};"]


def _status_constants(ctype: str) -> tuple[str, str]:
    """The members of status enum ``ctype`` meaning "more follows" and "the stream ended" ("0" if none)."""
    name = ckinds.strip_const(ctype).removeprefix("enum ").strip()
    members = type_table.active().enum_members.get(name, [])

    def first(kind: str) -> str:
        return next((m for m in members if set(words(m)) & words_of(kind)), "0")
    return first("status_more"), first("status_end")


def _sink_body(sig: Callback, names: list[str]) -> list[str]:
    body = [f"(void){n};" for n in names]
    if not ckinds.is_void(sig.return_type):
        value = sig.ok_value if sig.shape in ("writer", "output") else "0"
        body.append(f"return ({sig.return_type}){value};")
    return body


_BODIES: dict[str, Callable[[Callback, list[str]], list[str]]] = {  # by callback shape; else a sink
    "reader": lambda sig, names: [
        *_served(names),
        f"*{names[3]} = n;",
        f"return {sig.ok_value if sig.ok_value != '0' else '1'};",
    ],
    "reader_count": lambda sig, names: [*_served(names), f"return ({sig.return_type})n;"],
    "pull": lambda sig, names: [
        f"lf_input_t *in = (lf_input_t *){names[0]};",
        "size_t n = in->size;",
        f"*{names[1]} = (unsigned char *)in->data;",
        "in->data += n;",
        "in->size = 0;",
        f"return ({sig.return_type})n;",
    ],
}
_READERS = ("reader", "reader_count", "pull", "reader_inout")
_COMMENTS = {
    "reader_inout": "/* Serves the payload in the pieces the library asks for; says when it has ended. */",
    "reader": "/* Serves the payload to the library in the pieces it asks for. */",
    "reader_count": "/* Serves the payload to the library; returns the byte count. */",
    "pull": "/* Hands the whole remaining payload to the library at once. */",
    "writer": "/* Accepts (and drops) whatever the library writes. */",
    "output": "/* Accepts (and drops) whatever the library writes. */",
}
