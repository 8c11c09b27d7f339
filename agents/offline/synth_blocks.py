"""Self-contained follow-up blocks: one API call (with everything it needs) in its own C scope.

Both the synthesizer's USE slot and the coverage improver add calls this way: a block declares
its own locals, takes option bytes from the ``lf_opt`` cursor, jumps to its own label on failure
and frees what it allocated, so blocks can be added or dropped independently.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agents.offline.fixer_leak import field_releases
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_code import Frag, indent
from agents.offline.synth_plan import Obj, Planner, Unsupported
from fuzzkit.api import FunctionDecl

OPT_CURSOR = "lf_opt"


@dataclass
class Block:
    """Generated code for one block, plus what it needs at file level."""

    function: str
    lines: list[str]
    hoist: list[str] = field(default_factory=list)
    helpers: list[str] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)
    globals: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    uses: list[str] = field(default_factory=list)
    needs_cursor: bool = False
    notes: list[str] = field(default_factory=list)


def identifiers(code: str) -> set[str]:
    """Every identifier in ``code`` (so generated names never shadow existing ones)."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", code, flags=re.S)
    return set(re.findall(r"\b[A-Za-z_]\w*\b", code))


def call_block(
    idx: ApiIndex,
    fn: FunctionDecl,
    scope: list[Obj],
    avoid: set[str],
    taken: set[str],
    number: int,
    comment: str = "",
    file_ctx: tuple[str, str] | None = None,
    bind: dict[int, str] | None = None,
    guard: str | None = None,
    then: Callable[[Planner], None] | None = None,
) -> Block | None:
    """A block calling ``fn`` on objects from ``scope`` where it can; None if it cannot.

    ``bind`` fixes arguments by index; ``guard`` is an extra condition for entering the block;
    ``then`` adds to the planner's fragment after the call (a loop stepping what it made).
    """
    pl = block_planner(idx, fn, scope, avoid, taken, number, file_ctx)
    try:
        plan = pl.plan(fn, bind=bind)
        pl.emit(plan, pl.f.call)
    except (Unsupported, KeyError, IndexError):
        return None
    if then is not None:
        then(pl)
    release_filled_fields(pl.f, fn, idx)
    return finish_block(fn, pl.f, scope, comment, guard)


def release_filled_fields(frag: Frag, fn: FunctionDecl, idx: ApiIndex) -> None:
    """Release, at the block's end, the buffers ``fn`` leaves in the fields of the block's records.

    A decoder given ``&config`` can hand back an output buffer in ``config.output`` that only the
    buffer type's releaser frees; without it every input leaks. Only records the block zeroes
    where it declares them count, so the release is safe on every path, the failure jumps included.
    """
    zeroed = "\n".join(frag.decls)
    for expr, releaser in field_releases("\n".join(frag.call + frag.use), fn, idx):
        var = expr[1:].split(".")[0]
        if re.search(rf"memset\(&{re.escape(var)}, 0,", zeroed):
            frag.cleanup.append(f"{releaser}({expr});")
            frag.notes.append(f"release {expr[1:]} (filled by {fn.name}) with {releaser}")


def block_planner(
    idx: ApiIndex,
    fn: FunctionDecl,
    scope: list[Obj],
    avoid: set[str],
    taken: set[str],
    number: int,
    file_ctx: tuple[str, str] | None = None,
) -> Planner:
    """A planner writing into a fresh block fragment (own label, ``lf_opt`` cursor)."""
    frag = Frag(cursor=OPT_CURSOR, label=f"lf_skip_{number}")
    frag.taken |= taken
    pl = Planner(idx, frag, avoid, purpose=fn.name, file_ctx=file_ctx)
    pl.scope = list(scope)
    pl.strict_release = True
    return pl


def finish_block(
    fn: FunctionDecl, frag: Frag, scope: list[Obj], comment: str = "", guard: str | None = None
) -> Block:
    """Wrap a filled block fragment in its scope, guarded on the outer objects it uses."""
    body = "\n".join(frag.decls + frag.opts + frag.setup + frag.call + frag.hoist)
    uses = [o.expr for o in scope if re.search(rf"(?<![\w.]){re.escape(o.expr)}\b", body)]
    guards = [f"{e} != NULL" for e in uses if not e.startswith("&")] + ([guard] if guard else [])
    lines = [f"/* {comment or 'call ' + fn.name} */"]
    lines.append(f"if ({' && '.join(guards)}) {{" if guards else "{")
    lines.extend(frag.body("  "))
    lines.append("}")
    return Block(
        function=fn.name,
        lines=lines,
        hoist=list(frag.hoist),
        helpers=list(frag.helpers),
        includes=list(frag.includes),
        globals=list(frag.globals),
        calls=list(dict.fromkeys(frag.calls)),
        uses=uses,
        needs_cursor=bool(frag.opts) or OPT_CURSOR in body,
        notes=list(frag.notes),
    )


def render_blocks(blocks: list[Block], pad: str, declare_cursor: bool) -> str:
    """The blocks as C text at indentation ``pad``, with the option cursor declared first."""
    lines: list[str] = []
    if declare_cursor and any(b.needs_cursor for b in blocks):
        lines.append(f"lf_input_t {OPT_CURSOR} = {{data, size}};")
    for b in blocks:
        lines.extend(b.hoist)
        lines.extend(b.lines)
    return indent(lines, pad)
