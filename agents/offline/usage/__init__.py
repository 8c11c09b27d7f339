"""The library's own usage, as the offline model follows it.

The prompt's ``## Usage in the library's own code`` section carries a fenced YAML block rendered
from :class:`fuzzkit.usage_models.UsageFacts`; it is read back with the same model
(:func:`agents.usage_section.read_usage`), never from the sentences around it.

- :func:`usage_draft`: a first draft that makes, configures, feeds, calls and releases as the
  library's own code does (None when the usage is incomplete or absent).
- :func:`usage_releasers`: per object type, the function the library's own code releases it with.
- :func:`release_as_usage`, :func:`made_as_usage`: repairs of leaks and crashes that follow it.
"""

from __future__ import annotations

import re

from agents.offline.libc import LIBC
from agents.offline.synth import SLOTS, default_skeleton, fill_slot, marker
from agents.offline.synth_release_args import complete_release_calls
from agents.offline.synth_types import UsageHints
from agents.offline.usage.draft import MAX_INPUT, UsageDraft
from agents.offline.usage.repair import made_as_usage, release_as_usage
from agents.usage_section import read_usage
from fuzzkit.api import FunctionDecl
from fuzzkit.usage_models import Arg, Step, UsageFacts, type_key
from fuzzkit.vocabulary import alternation, has_verb, name_words, verb_before, words_of

# Marks a harness replayed from the library's own code: a compile error in it is answered by the
# synthesizer's draft instead of edits to code the engine did not write.
REPLAY_MARK = "/* LF replay of"

__all__ = ["REPLAY_MARK", "made_as_usage", "read_usage", "release_as_usage", "usage_constants", "usage_draft",
           "usage_followups", "usage_hints", "usage_made_releasers", "usage_makers", "usage_releasers",
           "usage_setup_constants", "with_jump_guard"]


def usage_releasers(facts: UsageFacts) -> dict[str, str]:
    """``type -> releaser`` for every object type the library's own code releases."""
    return {type_key(o.type): o.release for o in facts.objects if o.release}


def usage_hints(facts: UsageFacts, target: FunctionDecl, api: list[FunctionDecl]) -> UsageHints:
    """Everything the synthesizer takes from the library's own usage of ``target``'s API."""
    return UsageHints(releasers=usage_releasers(facts), made_releasers=usage_made_releasers(facts),
                      makers=usage_makers(facts), after=usage_followups(facts, target),
                      constants=usage_constants(facts, api), setup=usage_setup_constants(facts, target),
                      before=usage_before(facts, target), fields=list(facts.records))


def usage_before(facts: UsageFacts, target: FunctionDecl) -> list[str]:
    """The calls the target's usage makes before it with nothing but objects (and constants).

    ``read_info(rd, info)`` before ``start_read_image(rd)``: what the object must have been
    through; makers, releasers, feeders (they take data or callbacks) and checks' calls excluded.
    """
    protocol = facts.target(target.name)
    if protocol is None:
        return []
    at = next((i for i, s in enumerate(protocol.sequence) if s.call == target.name), 0)
    before = protocol.sequence[:at]
    made = {s.call for o in facts.objects for s in o.make}
    return list(dict.fromkeys(
        s.call for s in before
        if s.call not in made and s.call != "setjmp" and not has_verb(s.call, "release") and not s.check
        and s.args and all(a.kind in ("object", "null", "constant") for a in s.args)
        and any(a.kind == "object" for a in s.args)))


def usage_makers(facts: UsageFacts) -> dict[str, str]:
    """``type -> maker``: the call the library's own code makes each object type with (its best)."""
    return {type_key(o.type): o.make[0].call for o in facts.objects if o.make and not o.declared}


def usage_made_releasers(facts: UsageFacts) -> dict[str, str]:
    """``maker -> releaser`` where the library's code releases a maker's objects otherwise than its type's."""
    return {maker: r for o in facts.objects for maker, r in o.release_after.items()}


def usage_constants(facts: UsageFacts, api: list[FunctionDecl]) -> dict[str, dict[int, list[str]]]:
    """``function -> parameter index -> constants`` the library's own code passes there.

    Only constants its headers define (``public``): a test's own macro would not compile in a
    harness. Every step the prompt shows counts (the target's sequence, each object's making,
    configuring and feeding), each distinct spelling once, in the order first seen; then
    :func:`spread_constants` over ``api``.
    """
    steps = [s for t in facts.targets for s in t.sequence]
    steps += [s for o in facts.objects for s in (*o.make, *o.configure, *o.feed)]
    found: dict[str, dict[int, list[str]]] = {}
    for step in steps:
        for i, arg in enumerate(step.args):
            if _usable_constant(arg):
                seen = found.setdefault(step.call, {}).setdefault(i, [])
                if arg.text not in seen:
                    seen.append(arg.text)
    return spread_constants(found, api)


# A flag naming a release (SQLITE_DESERIALIZE_FREEONCLOSE) hands the harness's buffer to the
# library, which the library's own code may do with its own allocator's memory; a harness may not.
_HANDS_OVER = re.compile(alternation("release_fused"), re.I)


def _usable_constant(arg: Arg) -> bool:
    """A constant of the library's headers that gives the library nothing of the harness's to free."""
    return arg.kind == "constant" and arg.public and not _HANDS_OVER.search(arg.text)


def usage_setup_constants(facts: UsageFacts, target: FunctionDecl) -> dict[str, dict[int, str]]:
    """``function -> parameter index -> constant`` the calls setting up ``target`` pass there.

    The library's own code makes the target's objects so (``obj_new(TYPE_COMMENT)`` before a
    comment function): the harness makes them the same way, with no other value (the first seen
    when the setup passes several). Public header constants only.
    """
    protocol = facts.target(target.name)
    if protocol is None:
        return {}
    at = next((i for i, s in enumerate(protocol.sequence) if s.call == target.name), 0)
    found: dict[str, dict[int, str]] = {}
    for step in protocol.sequence[:at]:
        for i, arg in enumerate(step.args):
            if _usable_constant(arg):
                found.setdefault(step.call, {}).setdefault(i, arg.text)
    return found


def spread_constants(
    constants: dict[str, dict[int, list[str]]], api: list[FunctionDecl]
) -> dict[str, dict[int, list[str]]]:
    """``constants`` given also to every parameter of the same name and type in another function.

    A library names a parameter the same where it means the same (the version string each of its
    constructors checks), so a constant its own code passes to one stands for the others.
    """
    by_decl = {d.name: d for d in api}
    named: dict[tuple[str, str], list[str]] = {}
    for fn, slots in constants.items():
        decl = by_decl.get(fn)
        for i, values in slots.items():
            if decl is not None and i < len(decl.params) and decl.params[i].name:
                named.setdefault((decl.params[i].name, type_key(decl.params[i].type)), values)
    out = {fn: dict(slots) for fn, slots in constants.items()}
    for decl in api:
        for i, p in enumerate(decl.params):
            shared = named.get((p.name, type_key(p.type)))
            if shared and i not in out.get(decl.name, {}):
                out.setdefault(decl.name, {})[i] = shared
    return out


def jump_guards(facts: UsageFacts) -> list[tuple[str, str, str]]:
    """``(object type, setjmp argument, its object variable or "")`` for each setjmp the usage makes.

    A library that reports errors by ``longjmp`` to a buffer its caller set (and aborts when none
    was set) is called, in its own code, after ``if (setjmp(buffer_of(obj)))``.
    """
    found = []
    for t in facts.targets:
        for s in t.sequence:
            if s.call == "setjmp" and s.args and s.args[0].var in t.variables:
                found.append((t.variables[s.args[0].var], s.args[0].text, s.args[0].var))
    for o in facts.objects:
        for s in (*o.make, *o.configure, *o.feed):
            if s.call == "setjmp" and s.args:
                found.append((o.type, s.args[0].text, s.args[0].var))
    return list(dict.fromkeys(found))


# Names in a setjmp argument that are not the object it names.
_JUMP_WORDS = frozenset({"longjmp", "siglongjmp", "jmp_buf", "sigjmp_buf", "sizeof"})


def _guard_for(text: str, var: str, held: str) -> str | None:
    """``text`` naming ``held`` where it names the usage's object (None when that is unclear)."""
    if var and re.search(rf"\b{re.escape(var)}\b", text):
        return re.sub(rf"\b{re.escape(var)}\b", held, text)
    names = {m.group(1) for m in re.finditer(r"(?<![\w*])([a-z_]\w*)\b(?!\s*\()", text)} - _JUMP_WORDS
    if len(names) != 1 or re.search(rf"\*\s*\(?\s*{re.escape(next(iter(names)))}\b", text):
        return None  # several names, or the object reached through a pointer to it
    return re.sub(rf"\b{re.escape(next(iter(names)))}\b", held, text)


def _before_call(harness: str, lines: list[str], held: str) -> str:
    """``harness`` with ``lines`` at its CALL slot, or before the loop that holds the slot.

    A piecewise feed calls the target in a loop: the guard goes before the loop, set once. A
    call SETUP makes on ``held`` after making it (a header read before the target) may jump
    too: then the guard goes before the first such call.
    """
    rows = harness.split("\n")
    at = next(i for i, row in enumerate(rows) if "/* @LF:CALL */" in row)
    where = at + 1
    if len(rows[at]) - len(rows[at].lstrip()) > 2:
        loop = next((i for i in range(at - 1, -1, -1) if re.match(r"  (for|while|do)\b", rows[i])), None)
        where = loop if loop is not None else where
    making = re.compile(rf"\s*{re.escape(held)} = \w+\(")
    made = next((i for i, row in enumerate(rows[:at]) if making.match(row)), None)
    uses = re.compile(rf"^  (?!if \().*\b\w+\(.*\b{re.escape(held)}\b")
    first = next((i for i in range(made + 1, at) if uses.match(rows[i])), None) if made is not None else None
    where = first if first is not None and first < where else where
    return "\n".join([*rows[:where], *(f"  {line}" for line in lines), *rows[where:]])


def with_jump_guard(harness: str, facts: UsageFacts) -> tuple[str, list[str]]:
    """``harness`` with the usage's setjmp guard before its target call, and a note (if added).

    The guard goes after SETUP, so every variable it set holds its value when the library
    longjmps back, and the jump lands on the cleanup.
    """
    if re.search(r"\bsetjmp\s*\(", harness) or "/* @LF:CALL */" not in harness:
        return harness, []
    for ctype, text, var in jump_guards(facts):
        spelled = r"\s*".join(re.escape(w) for w in type_key(ctype).replace("*", " * ").split())
        decl = re.search(rf"^\s*(?:const\s+)?{spelled}\s*(\w+)\s*=", harness, re.M)
        guard = _guard_for(text, var, decl.group(1)) if decl else None
        if decl is None or guard is None:
            continue
        # A release in the cleanup that errors jumps back here again: then stop, never clean twice.
        jump = f"if (setjmp({guard})) {{ if (lf_jumps++) return 0; goto lf_cleanup; }}"
        code = _before_call(harness, ["volatile int lf_jumps = 0;", jump], decl.group(1))
        if "lf_cleanup:" not in code:
            code = code.replace("/* @LF:CLEANUP */", "/* @LF:CLEANUP */\n  lf_cleanup: ;", 1)
        if "<setjmp.h>" not in code:
            code = code.replace("/* @LF:INCLUDES */", "/* @LF:INCLUDES */\n#include <setjmp.h>", 1)
        return code, [f"{decl.group(1)}: errors longjmp to a setjmp before the call, as the library's does"]
    return harness, []


def usage_followups(facts: UsageFacts, target: FunctionDecl) -> list[str]:
    """The calls the library's own code makes after the target on what it holds (not its releases)."""
    protocol = facts.target(target.name)
    if protocol is None:
        return []
    at = next((i for i, s in enumerate(protocol.sequence) if s.call == target.name), len(protocol.sequence))
    releases = {"free"} | {o.release for o in facts.objects}
    releases |= {r for o in facts.objects for r in o.release_after.values()}
    return [s.call for s in protocol.sequence[at + 1:]
            if s.call != target.name and s.call not in releases and not _releases(s.call)]


def _releases(name: str) -> bool:
    """Named as a release: a release verb with no verb of work before it (``process_until_end`` is none)."""
    words = name_words(name)
    at = next((i for i, w in enumerate(words) if w in words_of("release")), None)
    return at is not None and not verb_before(words, at)


def usage_draft(
    facts: UsageFacts, target: FunctionDecl, api: list[FunctionDecl], headers: list[str], skeleton: str = ""
) -> tuple[str, list[str], list[str]] | None:
    """``(code, notes, calls)`` of a harness replaying the target's usage, or None.

    None when the library's own code never calls the target, or when replaying it would
    write a name the harness cannot have (a test's own helper, a file the test opens).
    """
    protocol = facts.target(target.name)
    if protocol is None or not protocol.complete or not protocol.fed:
        return None
    before = next((i for i, s in enumerate(protocol.sequence) if s.call == target.name), 0)
    if before == 0 and not _fed_after(protocol.sequence):
        return None  # nothing to set up: the synthesizer feeds a plain call at least as well
    decls = {d.name: d for d in [*api, target]}
    if not _written_whole(protocol.sequence, decls):
        return None  # a call read through a macro whose arguments were lost: no replay
    path = "lf_path" if re.search(r"\blf_path\b", skeleton) else ""  # the file skeleton's input file
    draft = UsageDraft(target, protocol, facts, decls, path=path)
    draft.write()
    if not draft.call or draft.unusable:
        return None
    globals_ = [*protocol.types, *(cb.source for cb in protocol.callbacks if cb.source)]
    callbacks = {cb.name for cb in protocol.callbacks if cb.source}
    types = {m for t in protocol.types for m in re.findall(r"\b(?:struct|union|enum)\s+(\w+)", t)}
    types |= {m for t in protocol.types for m in re.findall(r"(\w+)\s*;\s*$", t)}
    body = "\n".join([*draft.decls, *draft.setup, *draft.call, *draft.use, *draft.cleanup])
    unknown = draft.unknown_names(body, callbacks, types)
    if unknown or any(cb.passed_to and not cb.source for cb in protocol.callbacks):
        return None
    libc = {LIBC[n] for n in re.findall(r"\b\w+\b", body + "\n".join(globals_)) if n in LIBC}
    mark = f"{REPLAY_MARK} {protocol.seen_in} */"
    code = complete_release_calls(_render(draft, [mark, *globals_], [*sorted(libc), *headers], skeleton), api)
    notes = [
        f"follows {protocol.seen_in} ({protocol.origin}): " + " -> ".join(s.call for s in protocol.sequence),
        *draft.notes,
    ]
    calls = list(dict.fromkeys(s.call for s in protocol.sequence))
    return code, notes, calls


def _fed_after(steps: list[Step]) -> bool:
    """Whether the target (first) makes an object the usage then feeds (``p = create(); parse(p, buf)``)."""
    made = steps[0].result if steps and re.fullmatch(r"[A-Za-z_]\w*", steps[0].result) else ""
    return bool(made) and any(any(a.kind == "data" for a in s.args) and any(a.var == made for a in s.args)
                              for s in steps[1:])


def _written_whole(steps: list[Step], decls: dict[str, FunctionDecl]) -> bool:
    """Every step has each of its arguments written (at least as many as its prototype takes, none empty).

    (More is a variadic call: the prototypes keep no ``...``.)
    """
    for step in steps:
        decl = decls.get(step.call)
        if any(not a.text.strip() for a in step.args) or (decl and len(step.args) < len(decl.params)):
            return False
    return True


def _render(draft: UsageDraft, globals_: list[str], headers: list[str], skeleton: str) -> str:
    usable = skeleton and "LLVMFuzzerTestOneInput" in skeleton and all(marker(s) in skeleton for s in SLOTS)
    code = skeleton if usable else default_skeleton("stateless_parser")
    includes = [
        "#include <stdlib.h>",
        "#include <string.h>",
        *(f"#include {h}" if h.startswith("<") else f'#include "{h.rsplit("/", 1)[-1]}"' for h in headers),
    ]
    includes = list(dict.fromkeys(includes))
    parts = {
        "INCLUDES": includes,
        "GLOBALS": ["\n\n".join(globals_)] if globals_ else [],
        "GUARD": [f"if (size > {MAX_INPUT}u) return 0;"],
        "SETUP": [*draft.decls, *draft.setup],
        "CALL": draft.call,
        "USE": draft.use,
        "CLEANUP": ["lf_cleanup: ;", *draft.cleanup],
    }
    for slot in SLOTS:
        code = fill_slot(code, slot, parts[slot])
    return code
