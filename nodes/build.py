"""Build node: compile the current harness against the prebuilt library (fuzz + coverage)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.memory.code_memory import update_code_memory
from agent_graph.memory.session_memory import add_fix_results
from agent_graph.state import FuzzState
from fuzzkit.diagnostics import SERIOUS_WARNINGS
from fuzzkit.library import LibraryBuild
from fuzzkit.toolchain import toolchain_named
from nodes.common import ctx_of, log_event, visit, work_dir
from nodes.lesson_checks import merged_extras, observe_build
from nodes.lesson_failures import lessons_broken
from nodes.prompt_text import for_prompt

MAX_ERRORS_SHOWN = 20
MAX_WARNINGS_SHOWN = 10


def errors_text(diagnostics: list[Any], log: str, harness: str = "") -> str:
    """The compiler's errors as the enhancer sees them: errors first, capped.

    Each comes with clang's fix-its (``fix-it: insert "struct " at 12:3``) and file names
    only. The harness's own warnings that break it at run time (a ``T *`` passed for a
    ``T **``, an implicit declaration) follow, so the same round fixes them too. The text is
    redacted and capped (:func:`nodes.prompt_text.for_prompt`): the harness decides what
    the compiler quotes.
    """
    errors = [d for d in diagnostics if d.severity in ("error", "fatal error")]
    if not errors:
        return for_prompt(log.strip()[-4000:])
    name = PurePath(harness).name
    warnings = [
        d for d in diagnostics
        if d.severity == "warning" and SERIOUS_WARNINGS.search(d.message)
        and (not name or PurePath(d.file).name == name)
    ]
    shown = errors[:MAX_ERRORS_SHOWN] + warnings[:MAX_WARNINGS_SHOWN]
    return for_prompt("\n".join(d.render_for_prompt() for d in shown))


def build_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write ``harness_v<N>.c`` and build it; a compile error is a result, not an exception."""
    version = int(state.get("harness_version") or 0)
    out = work_dir(state) / f"v{version}"
    out.mkdir(parents=True, exist_ok=True)
    source = out / "harness.c"
    code = state.get("harness_code", "")
    source.write_text(code, encoding="utf-8")
    lib = LibraryBuild.from_dict(state["library"])
    result = toolchain_named(ctx_of(runtime).toolchain).build_harness(source, lib, out)
    (out / "build.log").write_text(result.log, encoding="utf-8")
    record = {
        "version": version,
        "ok": result.ok,
        "errors": "" if result.ok else errors_text(result.diagnostics, result.log, source.name),
        "fuzz_binary": str(result.fuzz_binary) if result.ok else "",
        "cov_binary": str(result.cov_binary) if result.ok else "",
        "log_path": str(out / "build.log"),
        "seconds": round(result.seconds, 3),
    }
    log_event(state, "build.done", version=version, ok=result.ok, seconds=record["seconds"])
    update: dict[str, Any] = {**visit("build"), "build": record, "counters": {"builds": 1}}
    update["code_memory"] = update_code_memory(state.get("code_memory"), "harness.c", code,
                                               {d["name"] for d in state.get("api") or []})
    if not result.ok:
        update.update(lessons_broken(state, code, result.diagnostics, source.name, version))
    merged_extras(update, observe_build(state, code, result.ok, result.diagnostics, source.name, version))
    if state.get("pending_fixes"):
        # A fix is only known to work once the build says so; failed ones are kept as lessons.
        memory = add_fix_results(state.get("session_memory"), state["pending_fixes"], result.ok,
                                 state.get("pending_rules") or [])
        update.update(session_memory=memory, pending_fixes=[], pending_rules=[])
    return update
