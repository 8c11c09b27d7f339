"""Phase-2 coverage growth: add calls to uncovered API functions to a working harness.

:func:`improve_harness` finds the library objects the harness already holds where its USE slot
is, and adds one self-contained block per uncovered function: a call on those objects where the
function takes them, or a small pipeline of its own (a new stream run over the payload, a parser
stepped to the end, a one-shot call) where it does not. Blocks free what they allocate and keep
the slot markers, so the harness still builds and later passes still find their places.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline import ckinds
from agents.offline.analysis import with_target
from agents.offline.fixer_edit import add_include
from agents.offline.fixer_leak import release_held_fields
from agents.offline.improver_blocks import mark_consumed, one_block, written_by_target
from agents.offline.improver_steps import made_stepper
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_blocks import (
    OPT_CURSOR,
    Block,
    identifiers,
    render_blocks,
)
from agents.offline.synth_code import helper_code
from agents.offline.synth_io import sets_allocator
from agents.offline.synth_plan import Obj
from agents.offline.synth_release_args import complete_release_calls
from agents.offline.synth_roles import roles
from agents.offline.synth_types import UsageHints
from agents.offline.synth_vocab import has_checked_twin, risky
from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import c_words, has_verb, libc_released_by, words_of

_ENTRY = re.compile(r"int\s+LLVMFuzzerTestOneInput\s*\(\s*[^,()]*?\*\s*(\w+)\s*,\s*size_t\s+(\w+)\s*\)\s*\{")


@dataclass
class Improvement:
    """The improved harness, the directions tried (plain English) and the calls added."""

    code: str
    directions: list[str] = field(default_factory=list)
    added_calls: list[str] = field(default_factory=list)


def improve_harness(
    code: str,
    target: FunctionDecl,
    api: list[FunctionDecl],
    uncovered: list[str],
    avoid: list[str] | tuple[str, ...] = (),
    max_new_calls: int = 4,
    later: set[str] | frozenset[str] = frozenset(),
    usage: UsageHints | None = None,
) -> Improvement:
    """Add up to ``max_new_calls`` blocks calling functions from ``uncovered``.

    Functions in ``avoid`` (directions that already failed) are used only when nothing else
    can be added; those in ``later`` (another harness of the run calls them) after the others,
    unless they take an object the harness holds. ``usage``: what the library's own code shows
    (:func:`agents.offline.usage.usage_hints`): the constructor it makes each object with, the
    calls it makes after the target.
    Returns the code unchanged (and no directions) when nothing applies.
    """
    idx = ApiIndex(with_target(target, api))
    if usage is not None:
        idx.made_as_usage(usage.makers)
        idx.usage_after = list(usage.after)
    # Entries may be names or recorded directions ("call X on y"): keep the API names in them.
    avoid = sorted({w for entry in avoid for w in re.findall(r"\w+", entry) if w in idx.by_name})
    entry = _ENTRY.search(code)
    if entry is None:
        return Improvement(code)
    at = _insertion_point(code, entry.end(), target.name)
    scope = mark_consumed(_scope(code, entry.end(), at, idx), target, idx)
    guards = written_by_target(code[entry.end():at], target, scope, idx)
    called = set(re.findall(r"\b(\w+)\s*\(", code))
    pool = [n for n in dict.fromkeys(uncovered) if n in idx.by_name and n not in called]
    blocks = _blocks(idx, code, scope, [n for n in pool if n not in avoid], set(avoid), max_new_calls, guards,
                     later, called)
    if not blocks:
        blocks = _blocks(idx, code, scope, pool, set(), max_new_calls, guards, later, called)
    if not blocks:
        return Improvement(code)
    made = _insert(code, entry, at, blocks)
    zeroed = {o.var for o in scope if o.expr == f"&{o.var}" and f"memset(&{o.var}, 0," in code}
    done = release_held_fields(made.code, made.added_calls, zeroed, idx)
    return Improvement(complete_release_calls(done, idx.api), made.directions, made.added_calls)


def _insertion_point(code: str, body_start: int, target: str) -> int:
    use = re.search(r"^[ \t]*/\* @LF:USE \*/[ \t]*$", code[body_start:], re.M)
    if use:
        start = body_start + use.end()
        nxt = re.search(r"^[ \t]*/\* @LF:\w+ \*/", code[start:], re.M)
        return start + nxt.start() if nxt else start
    call = re.search(rf"\b{re.escape(target)}\s*\(", code[body_start:])
    if call:
        end = code.find(";", body_start + call.end())
        return code.find("\n", end) + 1 if end >= 0 else len(code)
    last = code.rfind("return 0;")
    return code.rfind("\n", 0, last) + 1 if last >= 0 else len(code)


def _scope(code: str, body_start: int, at: int, idx: ApiIndex) -> list[Obj]:
    """Library objects declared at the top level of the fuzz function before ``at``."""
    found: list[Obj] = []
    depth = 0
    text = code[body_start:at]
    pos = 0
    for line in text.split("\n"):
        if depth == 0:
            m = re.match(r"\s*(?:const\s+)?(?:struct\s+)?(\w+)\s*(\*?)\s*(\w+)\s*(?:=[^;]*)?;", line)
            obj = _declared(m, code, idx) if m and m.group(1) not in c_words("statement") else None
            if obj is not None:
                found.append(obj)
        stripped = re.sub(r"\"(?:\\.|[^\"\\])*\"|'.'|/\*.*?\*/|//.*", "", line)
        depth += stripped.count("{") - stripped.count("}")
        pos += len(line) + 1
    released = {
        o.var
        for o in found
        if any(has_verb(fn, "release") or fn in libc_released_by().values()
               for fn in re.findall(rf"\b(\w+)\s*\(\s*&?{re.escape(o.var)}\s*\)", text))
    }
    return [o for o in found if o.var not in released]


def _declared(m: re.Match[str], code: str, idx: ApiIndex) -> Obj | None:
    """The library object a top-level declaration makes, if it is one.

    ``node_t *n``, ``node_t n`` (by value) and a handle are spelled with their type; a pointer
    typedef (``doc_p d`` for ``typedef struct doc *doc_p``) is a pointer to the type behind it.
    """
    typ, star, var = m.groups()
    if not star and ckinds.is_pointer(typ) and (key := idx.type_key(typ)) and key != typ:
        return Obj(key, var, var, origin=_origin(code, var, True, idx))
    if idx.type_key(typ + " *") != typ:
        return None
    pointer = bool(star) or idx.is_handle(typ)
    return Obj(typ, var if pointer else f"&{var}", var, origin=_origin(code, var, pointer, idx))


def _origin(code: str, var: str, pointer: bool, idx: ApiIndex) -> str:
    """The API function that created or initialized ``var`` (``""`` if none is visible)."""
    if pointer:
        pattern = rf"\b{re.escape(var)}\s*=\s*(\w+)\s*\("
    else:
        pattern = rf"\b(\w+)\s*\(\s*&{re.escape(var)}\b"
    found = (m.group(1) for m in re.finditer(pattern, code) if m.group(1) in idx.by_name)
    return next(found, "")


VALUE = [  # (words, rank): how much new code a call of this kind usually reaches
    (words_of("write"), 0),
    (words_of("parse") | {"encode", "compress", "uncompress", "decompress"}, 1),
    (words_of("copy") | {"compare", "minify", "equal"}, 1),
    (words_of("step") | {"exec", "execute", "run", "eval", "evaluate"}, 1),  # drive what was built
    (words_of("edit") | {"prime", "params", "tune", "sync", "reset"}, 2),
    (words_of("make") | {"get", "find", "has", "lookup", "mark", "header", "dictionary"}, 3),
    ({"is", "size", "count", "length", "eof", "tell", "offset", "bound"}, 5),
]


def value(idx: ApiIndex, fn: FunctionDecl) -> int:
    """A rank for ``fn`` (lower first): printers and parsers before predicates."""
    ws = set(words(fn.name)) | set(idx.verbs(fn.name))
    ranks = [rank for group, rank in VALUE if ws & group]
    if _runs_family(idx, fn):
        ranks.append(1)  # a machine's main processor reaches as much as a parser
    if _describes(idx, fn):
        ranks.append(0)  # a printer by its shape: walks the whole object
    if made_stepper(idx, fn) is not None:
        ranks.append(1)  # makes an object a block steps to its end (a reader on a document)
    if not fn.params:
        return 7
    return min(ranks) if ranks else 4


def _describes(idx: ApiIndex, fn: FunctionDecl) -> bool:
    """``info(char *buf, size_t size, ..., const T *obj)``: writes a description of an object."""
    p = fn.params
    return (len(p) >= 3 and ckinds.pointer_depth(p[0].type) == 1 and "char" in p[0].type
            and not ckinds.is_const_target(p[0].type) and ckinds.is_integer(p[1].type)
            and any(ckinds.pointer_depth(q.type) == 1 and ckinds.is_const_target(q.type)
                    and bool(idx.type_key(q.type)) for q in p[2:]))


def _runs_family(idx: ApiIndex, fn: FunctionDecl) -> bool:
    """Whether ``fn`` is named as the family its object's initializer opens.

    ``lib_decode`` for an object made by ``lib_decodeInit``: the processor the machine exists for.
    """
    key = idx.first_object(fn)
    if not key:
        return False
    life = idx.lifecycle(key)
    return any(idx.stem(n) == fn.name != n for n in life.init + life.create)


# An allocator wrapper reaches no parsing code, and what it takes or returns is the allocator's:
# a block reallocating its own malloc'd buffer through it and freeing that was a double free.
_ALLOCATOR_WORDS = words_of("allocator")


def _skip(idx: ApiIndex, fn: FunctionDecl, scope: list[Obj]) -> bool:
    """Functions a block must not call on objects the harness still owns."""
    if risky(fn.name) or sets_allocator(idx, fn) or any(r.kind == "unsupported" for r in roles(fn, idx)):
        return True
    if has_checked_twin(fn.name, idx.by_name):
        return True  # `x_decompress` beside `x_decompress_safe`: it overruns on untrusted input
    if re.match(r"_[_A-Z]", fn.name):
        return True  # a reserved name (`__lib_internal`): the library's internals, not its API
    if set(words(fn.name)) & _ALLOCATOR_WORDS:
        return True  # the library's allocator (`lib_mem_realloc(obj, ptr, n)`): frees what it is given
    keys = {o.type_key for o in scope}
    first = idx.first_object(fn)
    if first in keys and idx.kind(fn) in ("init", "destroy"):
        return True  # would re-initialize or free what the harness frees later
    if first in keys and (fn in idx.feeders(first) or fn in idx.outputs(first)):
        return True  # a second input/output source is a usage error
    return False


def _blocks(
    idx: ApiIndex, code: str, scope: list[Obj], names: list[str], avoid: set[str], limit: int,
    guards: dict[str, str], later: set[str] | frozenset[str], called: set[str],
) -> list[tuple[Block, str]]:
    taken = identifiers(code)
    keys = {o.type_key for o in scope}
    # A second call of a kind the harness already makes on one object (another dump of the
    # same document) reaches little new: it waits behind the other kinds.
    seen = {_kind(idx, idx.by_name[n]) for n in called & set(idx.by_name)}
    seen.discard(None)

    def rank(f: FunctionDecl) -> tuple[bool, int, int]:
        # A call on an object this harness holds (a printer of its own result) is worth its
        # rank here whoever else calls the function; a one-shot call is the same everywhere.
        return (f.name in later and idx.first_object(f) not in keys, value(idx, f)
                + (idx.first_object(f) not in keys) + 2 * (_kind(idx, f) in seen), names.index(f.name))

    pending = [idx.by_name[n] for n in names]
    out: list[tuple[Block, str]] = []
    while pending and len(out) < limit:
        fn = min(pending, key=rank)
        pending.remove(fn)
        if _skip(idx, fn, scope):
            continue
        number = len(re.findall(r"\blf_skip_\d+\b", code)) + len(out) + 1
        while f"lf_skip_{number}" in taken:
            number += 1
        made = one_block(idx, fn, scope, avoid, taken, number, guards)
        if made is None:
            continue
        block, direction = made
        taken |= identifiers("\n".join(block.lines + block.hoist))
        out.append((block, direction))
        seen |= {_kind(idx, fn)} - {None}
    return out


def _kind(idx: ApiIndex, fn: FunctionDecl) -> tuple[int, str | None] | None:
    """The :data:`VALUE` group of ``fn``'s name and the object it works on (None: no group)."""
    ws = set(words(fn.name)) | set(idx.verbs(fn.name))
    return next(((i, idx.first_object(fn)) for i, (names, _) in enumerate(VALUE) if ws & names), None)


def _insert(code: str, entry: re.Match[str], at: int, made: list[tuple[Block, str]]) -> Improvement:
    blocks = [b for b, _ in made]
    line_start = code.rfind("\n", 0, at) + 1
    pad_match = re.match(r"[ \t]*", code[line_start:])
    pad = pad_match.group(0) if pad_match and code[line_start:at].strip() == "" else "  "
    pad = pad or "  "
    declare = not re.search(rf"\blf_input_t\s+{OPT_CURSOR}\b", code)
    text = render_blocks(blocks, pad, declare_cursor=declare)
    data, size = entry.group(1), entry.group(2)
    if (data, size) != ("data", "size"):
        text = f"{pad}{{\n{pad}const uint8_t *data = {data};\n{pad}size_t size = {size};\n{text}\n{pad}}}"
    new = code[:at].rstrip(" \t")
    new = (new if new.endswith("\n") else new + "\n") + text + "\n" + code[at:].lstrip("\n")
    helpers = [h for b in blocks for h in b.helpers]
    if any(b.needs_cursor for b in blocks):
        helpers.insert(0, "input")
    helper_text, heads = helper_code(list(dict.fromkeys(helpers)), new)
    extra = [g for b in blocks for g in b.globals]
    globals_text = "\n\n".join(x for x in [helper_text, *extra] if x)
    if globals_text:
        new = _add_globals(new, globals_text)
    for h in dict.fromkeys([*heads, *(i for b in blocks for i in b.includes), "<stdlib.h>", "<string.h>"]):
        new = add_include(new, h)
    calls = list(dict.fromkeys(c for b in blocks for c in b.calls))
    return Improvement(new, [d for _, d in made], calls)


def _add_globals(code: str, text: str) -> str:
    # At the end of the globals, so new helpers can use the ones already there.
    entry = re.search(r"^int\s+LLVMFuzzerTestOneInput", code, re.M)
    pos = entry.start() if entry else 0
    return code[:pos] + text + "\n\n" + code[pos:]
