"""The crash roles: triage of a sanitizer report, then library bug or harness misuse."""

from __future__ import annotations

import re
from typing import Any

from agents.offline.cdecl import BYTE_TYPES, parse_prototypes
from agents.offline.ckinds import base_name, canonical_base, pointer_depth, strip_const
from agents.offline.fixer_edit import matching_paren, split_args
from agents.offline.fixer_terminated import unterminated_calls
from agents.offline.followups import crashed_followup, followup_arguments_allowed
from agents.offline.leak_owner import library_leak, uncast
from agents.offline.object_kinds import unmet_kinds, wrong_kind_reason
from agents.offline.prompt_reader import PromptFacts, target_function
from agents.offline.synth_finders import words
from agents.offline.usage import usage_releasers
from agents.usage_section import HEADING as USAGE_HEADING
from agents.usage_section import read_usage
from fuzzkit.crash_facts import CrashFacts, read_crash
from fuzzkit.triage import OVERFLOWS, Triage, released_inside_a_call
from fuzzkit.vocabulary import alternation, has_verb

Reply = tuple[dict[str, Any], str | None]


def _report(facts: PromptFacts) -> CrashFacts:
    """The crash facts block of the report or triage section (read as data, never as lines)."""
    return read_crash(facts.sections.get("Crash report") or facts.sections.get("Crash triage") or "")


def triage_crash(facts: PromptFacts) -> Reply:
    """Crash analyzer: kind and location from the parsed sanitizer report."""
    report = _report(facts)
    in_harness = report.in_harness
    top = (facts.text("Stack").splitlines() or ["(no frames)"])[0]
    kind = report.kind
    location = "harness" if in_harness else "library"
    return {"crash_type": kind, "location": location,
            "root_cause": f"{kind} at {top}; the first frame in project code is in the {location}.",
            "summary": report.summary}, None


def judge_feasibility(facts: PromptFacts) -> Reply:
    """Feasibility: harness frames, its own leaks and resource blow-ups are misuse; else a bug."""
    report = _report(facts)
    kind = report.kind
    harness_fault = report.in_harness or report.location == "harness"
    if kind == "leak" and not harness_fault:
        why = library_leak(facts.code("Current harness"), facts.text("Stack"),
                           parse_prototypes(facts.code("Library functions in the stack")),
                           parse_prototypes(facts.code("Library functions the harness calls")),
                           usage_releasers(read_usage(facts.sections.get(USAGE_HEADING, ""))))
        if why:
            return {"feasible": True, "verdict": "library_bug",
                    "reasoning": f"The leak is the library's: {why}.", "fix_hint": ""}, None
    freed = _freed_by_the_library(report, parse_prototypes(facts.code("Library functions in the stack")))
    if kind == "double-free" and freed and not harness_fault:  # before the triage's hint, which says both
        return {"feasible": True, "verdict": "library_bug", "reasoning": freed, "fix_hint": ""}, None
    if kind == "leak" and "LLVMFuzzerTestOneInput" in facts.text("Stack"):
        harness_fault = True
    if report.misuse_hint.strip() or report.category == "harness":
        harness_fault = True  # the triage traced the bad access to what the harness passed
    followup = crashed_followup(facts.code("Current harness"), facts.text("Stack"),
                                target_function(facts).name) if facts.text("Target function") else None
    utf8, entry = report.utf8, report.entry_function
    if report.input_text.startswith("not valid") and utf8 and entry in {"", *utf8}:
        return {"feasible": False, "verdict": "harness_misuse",
                "reasoning": f"The crash input is {report.input_text}, passed where the documentation "
                             "asks for UTF-8 text: the harness broke the contract, not the library.",
                "fix_hint": f"check that the text passed to {', '.join(utf8)} is well-formed UTF-8"}, None
    raised = _unhandled_raise(facts) if kind == "deadly-signal" else ""
    if raised:
        return {"feasible": False, "verdict": "harness_misuse", "reasoning": raised,
                "fix_hint": "set up the library's error handler (a protected call, a try, a panic or "
                            "error-handler setter) around the calls, or call the protected variant"}, None
    called = parse_prototypes(facts.code("Library functions the harness calls"))
    entry_decl = next((d for d in called if d.name == report.entry_function), None)
    unmet = unmet_kinds(facts.code("Current harness"), report, entry_decl)
    if unmet and entry_decl is not None:
        return {"feasible": False, "verdict": "harness_misuse",
                "reasoning": wrong_kind_reason(entry_decl, unmet),
                "fix_hint": f"call {entry_decl.name} only when `{unmet[0]}` holds for its argument"}, None
    broken = _broken_precondition(facts, report) if kind == "deadly-signal" else ""
    if broken:
        return {"feasible": False, "verdict": "harness_misuse", "reasoning": broken,
                "fix_hint": f"call {report.entry_function} only with arguments for which "
                            f"`{report.assertion}` holds"}, None
    unterminated = _unterminated(facts, report) if kind in OVERFLOWS else ""
    if unterminated:
        return {"feasible": False, "verdict": "harness_misuse", "reasoning": unterminated,
                "fix_hint": "copy the input into a NUL-terminated buffer (size + 1 bytes, the last one 0) "
                            "and pass that instead of libFuzzer's data"}, None
    miscounted = _count_not_its_length(facts, report) if kind in OVERFLOWS else ""
    if miscounted:
        return {"feasible": False, "verdict": "harness_misuse", "reasoning": miscounted,
                "fix_hint": "pass the buffer's length as its count, or a buffer as long as the count"}, None
    past = _read_past_length(facts, report) if kind in OVERFLOWS else ""
    if past:
        return {"feasible": True, "verdict": "library_bug", "reasoning": past, "fix_hint": ""}, None
    if followup and not harness_fault:
        return _followup_verdict(facts, kind, followup)
    return _by_location(kind, harness_fault, report), None


def _by_location(kind: str, harness_fault: bool, report: CrashFacts) -> dict[str, Any]:
    """The verdict by where the fault is, when no rule above decided it."""
    if harness_fault:
        return {"feasible": False, "verdict": "harness_misuse",
                "reasoning": f"The {kind} originates in harness code, not in the library.",
                "fix_hint": "free what the harness allocates and respect the API's preconditions"}
    if report.category == "unknown":  # no frame of the project at all (ASan's "nested bug", say)
        return {"feasible": False, "verdict": "harness_misuse",
                "reasoning": f"The {kind} report shows no frame of the library or the harness: nothing "
                             "places the fault in library code, so it is no library bug (the harness's "
                             "version is repaired or dropped).",
                "fix_hint": "give each call buffers as large as it documents"}
    return {"feasible": True, "verdict": "library_bug",
            "reasoning": f"The {kind} happens inside library code reached through its public API "
                         "with input the harness passes as documented.", "fix_hint": ""}


def _followup_verdict(facts: PromptFacts, kind: str, followup: str) -> Reply:
    """A crash in a follow-up after the target: the library's when every argument is one it allows.

    An object the library handed back, a stream, the input, constants: the harness made nothing
    up, so the crash is in the library's own work, unless the follow-up is a release or the
    memory was freed by a release the harness made (its own ownership error). A number picked from
    the option bytes may break the call's preconditions: misuse, and the follow-up is left out.
    """
    called = {d.name for d in parse_prototypes(facts.code("Library functions the harness calls"))}
    allowed = followup_arguments_allowed(facts.code("Current harness"), facts.text("Stack"), followup, called)
    first = _report(facts).freed_first_in
    if has_verb(followup, "release") or (kind in ("heap-use-after-free", "double-free")
                                         and (not first or has_verb(first, "release"))):
        allowed = ""  # a release the harness made, or memory its own release freed: its ownership error
    if allowed:
        return {"feasible": True, "verdict": "library_bug",
                "reasoning": f"The {kind} is inside {followup}: {allowed}.", "fix_hint": ""}, None
    return {"feasible": False, "verdict": "harness_misuse",
            "reasoning": f"The {kind} is in {followup}, a follow-up the harness calls after the "
                         "target with arguments it picked, not in the target's own work.",
            "fix_hint": f"leave out the follow-up call to {followup}"}, None


_STACK_FRAME = re.compile(r"^#\d+ (\S+)", re.M)
_RAISE_WORDS = {"throw", "raise", "panic", "fatal", "error", "die"}


def _unhandled_raise(facts: PromptFacts) -> str:
    """Why an ``abort()`` is the library's way of raising an error nobody handled, or ``""``.

    ``abort()`` called from a public function named for raising errors (``x_throw``,
    ``x_panic``), right away or through its default handler: the library reports errors by
    jumping to a handler its caller sets up, and aborts when there is none. An assertion
    (``__assert_fail`` calls ``abort``) stays the library's.
    """
    frames = _STACK_FRAME.findall(facts.text("Stack"))
    public = {d.name for d in parse_prototypes(facts.code("Library functions in the stack"))}
    if "abort" not in frames[:-1]:
        return ""
    # The raiser may reach abort through its default handler (`x_error` -> `x_default_error`
    # -> `x_longjmp` -> abort): the nearest frames up to an assertion's own are looked at.
    above = frames[frames.index("abort") + 1:][:4]
    above = above[: next((i for i, f in enumerate(above) if f.startswith("__")), len(above))]
    raiser = next((f for f in above if f in public and set(words(f)) & _RAISE_WORDS), "")
    if not raiser:
        return ""
    return (f"{raiser}, the library's public way of raising an error, called abort(): the error was "
            "raised where the harness had set up no handler, which the API requires, not a fault "
            "of the library")


_FRAME = re.compile(r"^#\d+ (\S+) (\S*?)(?::\d+)?$", re.M)


def _broken_precondition(facts: PromptFacts, report: CrashFacts) -> str:
    """Why a failed assertion is the harness's broken precondition, or ``""``.

    The assertion is in the body of the public function the harness called itself (the frame
    right above ``__assert_fail``, right below the harness's), and its condition is on that
    function's parameters: the function states what it accepts, and the harness passed
    something else. An assertion deeper in the library, or on its own state, stays the library's.
    """
    cond, entry = report.assertion, report.entry_function
    frames = _FRAME.findall(facts.text("Stack"))
    names = [f for f, _file in frames]
    stack_api = parse_prototypes(facts.code("Library functions in the stack"))
    decl = next((d for d in stack_api if d.name == entry), None)
    if not cond or decl is None or entry not in names[1:-1]:
        return ""
    at = names.index(entry)
    harness = {file for f, file in frames if f == "LLVMFuzzerTestOneInput"}
    if not names[at - 1].startswith("__assert") or frames[at + 1][1] not in harness:
        return ""
    named = [p.name for p in decl.params if p.name and re.search(rf"(?<![.>\w]){p.name}\b", cond)]
    if not named:
        return ""
    return (f"The assertion `{cond}` failed in {entry}'s own body, called straight from the harness, "
            f"and it is on {entry}'s parameter{'s' * (len(named) > 1)} {', '.join(named)}: it states "
            f"what {entry} accepts, and the harness passed something else (its precondition, not a "
            "library fault).")


def _freed_by_the_library(report: CrashFacts, stack_api: list[Any]) -> str:
    """Why a block released twice is the library's doing, or ``""``.

    The harness released its object once; a library call that releases nothing by its name had
    freed part of that object's state first, state that another call returning no object
    (a status, nothing through a ``T **``) had allocated: the harness never held that block.
    """
    first, made = report.freed_first_in, report.allocated_in
    shape = Triage(report.category, entry_function=report.entry_function,
                   freed_first_in=first, allocated_in=made)
    maker = next((d for d in stack_api if d.name == made), None)
    if maker is None or shape.category == "harness" or not released_inside_a_call(shape):
        return ""
    hands_out = pointer_depth(maker.return_type) > 0 or any(
        pointer_depth(p.type) >= 2 and strip_const(canonical_base(base_name(p.type))) not in BYTE_TYPES
        for p in maker.params)
    if hands_out:
        return ""
    entry = report.entry_function or "the harness's release"
    return (f"{first} freed memory that {made} had allocated inside an object the harness owns "
            f"(not a block either call handed the harness), and {entry} freed it again when the "
            "harness released that object once: the library frees state it keeps using.")


def _unterminated(facts: PromptFacts, report: CrashFacts) -> str:
    """Why a read just past libFuzzer's input is the harness's: the call was to read up to a NUL, or ``""``.

    The harness handed ``data`` as it is (no NUL after it) where the documentation says the
    input is NUL-terminated (the parameter, the function, or an option constant the call passes),
    or to a function that takes a C string with no length beside it.
    """
    region = report.region
    if (report.buffer_origin != "fuzzer-input" or not report.access.startswith("READ")
            or (region and not region.startswith("0 bytes to the right"))):
        return ""
    api = [*parse_prototypes(facts.code("Library functions the harness calls")),
           *parse_prototypes(facts.code("Library functions in the stack"))]
    if facts.text("Target function"):
        api.append(target_function(facts))
    triage = facts.text("Crash report") or facts.text("Crash triage")
    entry = report.entry_function
    calls = unterminated_calls(facts.code("Current harness"), triage, api, entry)
    call = next((c for c in calls if c.function == entry), calls[0] if calls else None)
    if call is None:
        return ""
    return (f"{call.function} was handed libFuzzer's input as it is, with no NUL after it, and {call.why}: "
            f"reading up to the terminator, the library read just past the input's end. The harness broke "
            "the documented contract; not a library bug.")


# A share of libFuzzer's input with its exact length: the input itself, or the skeletons'
# chunk loop's piece, defined as they define it (never past the input's end).
_INPUT_SHARES = (
    ("data", "size", re.compile("")),
    ("lf_chunk", "lf_chunk_size", re.compile(
        r"\*\s*lf_chunk\s*=\s*data\s*\+\s*lf_off\s*;[\s\S]*\blf_chunk_size\s*=\s*"
        r"size\s*-\s*lf_off\s*<\s*lf_chunk_max\s*\?\s*size\s*-\s*lf_off\s*:\s*lf_chunk_max\s*;")),
)


# `text = lf_strndup(data, size);`, `buf = (T *)malloc(n);`: a buffer the harness allocates, and its length
# The harness's own buffers: copies of the input (`lf_take_str(&in, 16)`: a string of up to 16
# bytes from it, its length drawn too) and what it allocates.
_HARNESS_ALLOC = re.compile(r"\b([A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?"
                            r"(lf_strndup|lf_wstrndup|lf_memdup|lf_take_str|lf_take_part"
                            rf"|{alternation('allocator')})\s*\(([^;]*)\)\s*;")


def _count_not_its_length(facts: PromptFacts, report: CrashFacts) -> str:
    """Why a read past a buffer the harness allocated is the harness's, or ``""``.

    The call the crash came through was handed that buffer and, right after it, a count that
    is not the buffer's length (an option drawn from the input): the library read as many
    elements as it was told, which the API documents the buffer holds. Not a library bug.
    """
    if report.buffer_origin != "harness" or not report.access.startswith("READ"):
        return ""
    harness = facts.code("Current harness")
    lengths = {m.group(1): split_args(m.group(3)) for m in _HARNESS_ALLOC.finditer(harness)}
    call = re.search(rf"\b{re.escape(report.entry_function)}\s*\(", harness)
    close = matching_paren(harness, call.end() - 1) if call else None
    if call is None or close is None:
        return ""
    args = [uncast(a.strip()) for a in split_args(harness[call.end():close])]
    for i, arg in enumerate(args[:-1]):
        made = lengths.get(arg)
        count = args[i + 1]
        if made is None or not re.fullmatch(r"[A-Za-z_]\w*", count):
            continue
        length = made[-1].strip() if made else ""
        if count in re.findall(r"[A-Za-z_]\w*", length) or count == arg:
            continue  # the count is the buffer's length (or made from it)
        return (f"{report.entry_function} was handed {arg}, a buffer the harness allocated with "
                f"{length or 'its own size'}, and the count {count}, which is not that length: it read "
                f"{report.access.lower()} past the buffer's end because the harness said there was more. "
                "The harness broke the API's contract; not a library bug.")
    return ""


def _read_past_length(facts: PromptFacts, report: CrashFacts) -> str:
    """Why a read past libFuzzer's input is the library's, or ``""``.

    The harness handed the target the input itself (``data``), or a piece of it from the
    skeletons' chunk loop, as a byte buffer together with its exact size as that buffer's
    length, and the target read past the end: it read more than it was told there is (a decoder
    of multi-byte sequences that trusts a lead byte, a parser resuming a sequence split between
    two pieces).
    """
    size = report.input_size
    if report.buffer_origin != "fuzzer-input" or not report.access.startswith("READ"):
        return ""
    if not size or not facts.text("Target function"):
        return ""
    # The call that read past the input: the target's, or a setup call handing it the input.
    known = [target_function(facts), *parse_prototypes(facts.code("Library functions in the stack"))]
    target = next((d for d in known if d.name == report.entry_function), None)
    if target is None:
        return ""
    harness = facts.code("Current harness")
    call = re.search(rf"\b{re.escape(target.name)}\s*\(", harness)
    close = matching_paren(harness, call.end() - 1) if call else None
    if call is None or close is None:
        return ""
    args = [uncast(a) for a in split_args(harness[call.end():close])]
    pair = next((p for p in _INPUT_SHARES if p[0] in args and p[1] in args and p[2].search(harness)), None)
    if pair is None or len(args) != len(target.params):
        return ""
    param = target.params[args.index(pair[0])]
    if strip_const(canonical_base(base_name(param.type))) not in BYTE_TYPES or pointer_depth(param.type) != 1:
        return ""
    given = (f"libFuzzer's input with its exact size ({size} bytes)" if pair[0] == "data"
             else f"a piece of libFuzzer's {size}-byte input with that piece's exact size")
    return (f"{target.name} was given {given} as "
            f"the length of {param.name or 'the buffer'}, and read past its end: it reads more than it "
            "is told the buffer holds.")
