"""Harness synthesis: fill an archetype skeleton's slots with code built from the prototypes.

:func:`write_harness` is the offline model's prototyper. It builds every argument from the fuzz
input by type (payload text or bytes, option values from the input's end, library objects from
their constructors or initializers, output buffers, callbacks), releases everything on every
path, applies guidance from constraints and known fixes, and keeps the slot markers so later
passes (the fixer, the improver) can find their places.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from agents.offline import ckinds, type_tags
from agents.offline.analysis import ARCHETYPES, analyze_function, with_target
from agents.offline.fixer_leak import release_results
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_arche import FILLERS
from agents.offline.synth_blocks import identifiers, render_blocks
from agents.offline.synth_code import Frag, helper_code, indent
from agents.offline.synth_ctx import Ctx
from agents.offline.synth_guide import Guidance, read_guidance
from agents.offline.synth_library_init import initialize_once
from agents.offline.synth_plan import Planner, Unsupported
from agents.offline.synth_release_args import complete_release_calls
from agents.offline.synth_room import feed_the_input
from agents.offline.synth_types import UsageHints
from fuzzkit.api import FunctionDecl
from fuzzkit.guidance_facts import Rule

SLOTS = ("INCLUDES", "GLOBALS", "GUARD", "SETUP", "CALL", "USE", "CLEANUP")
MAX_INPUT = 1 << 20
# Identifiers an archetype's code relies on the skeleton to provide.
NEEDS = {
    "stream_processor": ("lf_chunk", "lf_chunk_size", "lf_is_last", "lf_chunk_max"),
    "incremental_digest": ("lf_chunk", "lf_chunk_size", "lf_chunk_max"),
    "state_machine": ("lf_step",),
    "file_based": ("lf_fd", "lf_path"),
}


@dataclass
class HarnessDraft:
    """A generated harness with what the model wants the caller to know."""

    code: str
    notes: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)


def marker(slot: str) -> str:
    """The marker comment of a slot (``/* @LF:SETUP */``)."""
    return f"/* @LF:{slot} */"


@cache
def default_skeleton(archetype: str) -> str:
    """The shipped skeleton for ``archetype`` (long_term_memory/knowledge/skeletons)."""
    name = f"{archetype}.c"
    try:
        path = resources.files("long_term_memory").joinpath("knowledge", "skeletons", name)
        return path.read_text()
    except (ModuleNotFoundError, FileNotFoundError, TypeError):
        root = Path(__file__).resolve().parents[2]
        return (root / "long_term_memory" / "knowledge" / "skeletons" / name).read_text()


def _usable_skeleton(skeleton: str, archetype: str) -> bool:
    if not skeleton or "LLVMFuzzerTestOneInput" not in skeleton:
        return False
    if any(marker(s) not in skeleton for s in SLOTS):
        return False
    return all(re.search(rf"\b{v}\b", skeleton) for v in NEEDS.get(archetype, ()))


def write_harness(
    target: FunctionDecl,
    api: list[FunctionDecl],
    headers: list[str],
    archetype: str,
    skeleton: str,
    rules: Sequence[Rule] = (),
    avoid: list[str] | tuple[str, ...] = (),
    related: list[str] | None = None,
    usage: UsageHints | None = None,
) -> HarnessDraft:
    """Write a libFuzzer harness for ``target`` by filling ``skeleton``.

    Args:
        target: The function to fuzz.
        api: The library's public functions (the target may or may not be among them).
        headers: Header names to include (``acme.h``; paths are reduced to their names).
        archetype: One of :data:`agents.offline.analysis.ARCHETYPES` (unknown: analyzed).
        skeleton: The archetype's skeleton text; the shipped one is used when it lacks a slot.
        rules: Usage rules as data (the analyzer's, and the fixes session memory kept) that
            change the code where they apply.
        avoid: API functions the harness must not call.
        related: Functions worth calling on the result (default: from the analysis).
        usage: What the library's own code shows: releasers, constants, the calls before the target.
    """
    api = with_target(target, api)
    notes: list[str] = []
    archetype = _known_archetype(archetype, target, api, notes)
    skeleton = _skeleton_for(skeleton, archetype, notes)
    guide = read_guidance(rules, api, target)
    if related is None:
        related = analyze_function(target, api).related
    banned = set(avoid) | guide.avoid
    banned.discard(target.name)
    try:
        ctx = _fill(target, api, archetype, skeleton, guide, banned, related, given := usage or UsageHints())
    except Unsupported as exc:
        notes.append(f"{archetype} pattern not possible ({exc}); plain call used")
        ctx = _fill(target, api, "stateless_parser", skeleton, guide, banned, related, given)
    code = _render(ctx, skeleton, headers, guide)
    for old, new in guide.renames.items():
        code = re.sub(rf"\b{re.escape(old)}\b", new, code)
    code = type_tags.with_tags(code)
    # A buffer the target leaves in a field of a record passed by pointer (a decoder config's
    # output) is released at the end, with the releaser the header names for the field's type.
    code, released = release_results(code, target, api, fields_only=True)
    notes.extend(ctx.f.notes)
    notes.extend(released)
    notes.extend(f"applied guidance: {line}" for line in guide.applied)
    calls = list(dict.fromkeys(ctx.f.calls + [c for b in ctx.blocks for c in b.calls]))
    return HarnessDraft(code=code, notes=list(dict.fromkeys(notes)), calls=calls)


def _known_archetype(archetype: str, target: FunctionDecl, api: list[FunctionDecl], notes: list[str]) -> str:
    """``archetype``, or the analyzed one when it is no known archetype (said in ``notes``)."""
    if archetype in ARCHETYPES:
        return archetype
    analysis = analyze_function(target, api)
    notes.append(f"unknown archetype {archetype!r}: using {analysis.archetype} instead")
    return analysis.archetype


def _skeleton_for(skeleton: str, archetype: str, notes: list[str]) -> str:
    """``skeleton``, or the shipped one of ``archetype`` when it lacks a slot (said in ``notes``)."""
    if _usable_skeleton(skeleton, archetype):
        return skeleton
    if skeleton:
        notes.append("the given skeleton lacks slots this archetype needs: "
                     f"shipped {archetype} skeleton used")
    return default_skeleton(archetype)


def _fill(
    target: FunctionDecl,
    api: list[FunctionDecl],
    archetype: str,
    skeleton: str,
    guide: Guidance,
    banned: set[str],
    related: list[str],
    usage: UsageHints,
) -> Ctx:
    idx = ApiIndex(api)
    idx.usage_constants = usage.constants
    idx.usage_setup = usage.setup
    for record in usage.fields:
        idx.usage_fields.setdefault(idx.type_key(record.type) or record.type, record)
    idx.made_destroy = {m: r for m, r in usage.made_releasers.items() if r in idx.by_name}
    idx.usage_after = list(usage.after)
    idx.made_as_usage(usage.makers)
    for name in guide.release:
        idx.prefer(name)
    for ctype, name in usage.releasers.items():  # the library's own code releases these so
        key = idx.type_key(ctype)
        if key and name in idx.by_name:
            idx.preferred_destroy[key] = name
    for first, _then in guide.before:
        idx.prefer(first)
    frag = Frag()
    frag.taken |= identifiers(skeleton)
    # A local named like an API type or function would hide it (`node_t *node_t`).
    frag.taken |= {f.name for f in api} | {
        ckinds.base_name(t) for f in api for t in (f.return_type, *(p.type for p in f.params))
    }
    file_ctx = ("lf_fd", "lf_path") if re.search(r"\blf_fd\b", skeleton) else None
    pl = Planner(idx, frag, banned, purpose=target.name, file_ctx=file_ctx)
    pl.c_strings = set(guide.c_strings)
    key = idx.first_object(target)
    if key and (set(words(target.name)) & {"input", "output", "source", "sink"}
                or any(f.name == target.name for f in idx.feeders(key))):
        pl.configuring.add(key)  # the target itself gives the object its input: no other feeder
    ctx = Ctx(target, idx, pl, [r for r in related if r not in banned])
    FILLERS[archetype](ctx)
    initialize_once(pl)
    _calls_before(ctx, guide)
    if not pl.fed and not _input_flows(ctx):
        feed_the_input(ctx)
    _usage_before(ctx, usage.before)
    return ctx


def _usage_before(ctx: Ctx, calls: list[str]) -> None:
    """The calls the library's own code makes on the target's objects before it (a header read first).

    Only those taking nothing but objects, the first one the harness holds (``read_info(p, info)``),
    after the input reached it; one the harness makes already, or that fails to plan, is left out.
    """
    held = {o.type_key for o in ctx.pl.scope}
    for name in calls:
        fn = ctx.idx.by_name.get(name)
        if fn is None or name in ctx.f.calls or not fn.params:
            continue
        keys = [ctx.idx.type_key(p.type) for p in fn.params]
        if all(keys) and keys[0] in held:  # (another object it takes is made for it)
            _setup_call(ctx, fn, f"{name} is called before {ctx.target.name}, as the library's own code does")


def _setup_call(ctx: Ctx, fn: FunctionDecl, note: str) -> None:
    """A call of ``fn`` (not fed the input) appended to SETUP with ``note``, unless it cannot be planned."""
    lines: list[str] = []
    try:
        ctx.pl.emit(ctx.pl.plan(fn, payload=False), lines)
    except Unsupported:
        return
    ctx.f.setup.extend(lines)
    ctx.f.notes.append(note)


_INPUT_NAMES = re.compile(r"\b(data|lf_chunk|lf_fd|lf_path|lf_step|lf_memfd|lf_tmpfile)\b")


def _input_flows(ctx: Ctx) -> bool:
    """Whether the code so far hands the input to a call (directly, by chunks, file or callback).

    Only up to the target: a follow-up (`get_error(obj, data, size)`) that gets the input
    does not make the target see it.
    """
    text = "\n".join([*ctx.f.setup, *ctx.f.call, *ctx.f.decls, *ctx.f.hoist])
    return bool(_INPUT_NAMES.search(text))


def _calls_before(ctx: Ctx, guide: Guidance) -> None:
    """Honour "call X before Y" for plain functions (initializers were preferred already)."""
    for first, then in guide.before:
        fn = ctx.idx.by_name.get(first)
        if fn is None or first in ctx.f.calls or then not in (ctx.target.name, *ctx.f.calls):
            continue
        if ctx.idx.kind(fn) != "init":
            _setup_call(ctx, fn, f"{first} is called before {then} as the guidance asks")


def _render(ctx: Ctx, skeleton: str, headers: list[str], guide: Guidance) -> str:
    f = ctx.f
    helpers = list(f.helpers)
    for b in ctx.blocks:
        helpers += [h for h in b.helpers if h not in helpers]
    if f.opts or any(b.needs_cursor for b in ctx.blocks):  # (options may all be constants)
        helpers.append("input")
    helper_text, helper_heads = helper_code(helpers, skeleton)
    includes = ["<stdlib.h>", "<string.h>", *helper_heads, *f.includes, *guide.includes]
    for b in ctx.blocks:
        includes += b.includes
    includes += [_header(h) for h in headers]
    present = set(re.findall(r"#\s*include\s*([<\"][^>\"]+[>\"])", skeleton))
    include_lines = [f"#include {h}" for h in dict.fromkeys(includes) if h not in present]
    globals_ = [helper_text] if helper_text else []
    globals_ += f.globals + [g for b in ctx.blocks for g in b.globals]
    guard = [f"if (size > {MAX_INPUT}u) return 0;"]
    if guide.min_size:
        guard.append(f"if (size < {guide.min_size}u) return 0;")
    setup = list(f.decls) + list(f.hoist)
    if f.opts:
        setup.append("lf_input_t lf_in = {data, size};")
        setup += f.opts
        setup.append("size = lf_in.size; /* the payload is what the options left */")
    setup += f.setup
    use = list(ctx.use)
    cleanup = ([f"{f.label}: ;"] if f.label_used else []) + list(reversed(f.cleanup))
    parts = {
        "INCLUDES": include_lines,
        "GLOBALS": ["\n\n".join(globals_)] if globals_ else [],
        "GUARD": guard,
        "SETUP": setup,
        "CALL": list(f.call),
        "USE": use,
        "CLEANUP": cleanup,
    }
    code = skeleton
    for slot in SLOTS:
        code = fill_slot(code, slot, parts[slot])
    if ctx.blocks:
        pad = _slot_indent(code, "USE")
        text = render_blocks(ctx.blocks, pad, declare_cursor=True)
        code = _after_slot_content(code, "USE", text)
    return complete_release_calls(code, ctx.idx.api)


def _header(h: str) -> str:
    if h.startswith(("<", '"')):
        return h
    return f'"{Path(h).name}"'


def _slot_indent(code: str, slot: str) -> str:
    m = re.search(rf"^([ \t]*){re.escape(marker(slot))}", code, re.M)
    return m.group(1) if m else ""


def fill_slot(code: str, slot: str, lines: list[str]) -> str:
    """``code`` with ``lines`` placed after the marker of ``slot`` (indented like it)."""
    m = re.search(rf"^([ \t]*){re.escape(marker(slot))}[ \t]*$", code, re.M)
    if m is None or not lines:
        return code
    body = indent(lines, m.group(1))
    return code[: m.end()] + "\n" + body + code[m.end() :]


def _after_slot_content(code: str, slot: str, text: str) -> str:
    """Insert ``text`` after what a slot already holds (before the next marker)."""
    m = re.search(rf"^[ \t]*{re.escape(marker(slot))}[ \t]*$", code, re.M)
    if m is None:
        return code
    nxt = re.search(r"^[ \t]*/\* @LF:\w+ \*/", code[m.end() :], re.M)
    pos = m.end() + nxt.start() if nxt else len(code)
    return code[:pos].rstrip("\n") + "\n" + text + "\n" + code[pos:]
