"""``logicfuzz init-benchmark``: a complete benchmark YAML from a library's source alone.

Steps: fetch the source (:mod:`fuzzkit.source`), detect the build (:mod:`fuzzkit.detect`),
build the library once (so the YAML is known to work, and the build is cached for
``logicfuzz run``), read the public headers, keep the functions the library really defines
(``llvm-nm`` on the built archive: a header may declare functions of parts not built), and
choose the targets (:mod:`fuzzkit.select_functions`), leaving out functions the header
marks deprecated (often for being unsafe on untrusted input, like ``acme_decode_fast``)
and variants whose name says they skip validation (``acme_string_nocheck``).
Fuzz harnesses shipped with the source (files defining ``LLVMFuzzerTestOneInput``) become
``upstream_harnesses``, the coverage yardstick, and the first one ``target_path`` and
``target_name`` as in oss-fuzz-gen. What they call ranks higher, unless
``ignore_fuzz_harnesses`` (a benchmark comparison, where LogicFuzz must not read the
yardstick): then the choice reads no file that mentions ``LLVMFuzzerTestOneInput`` or lies in
a fuzzing folder; the harnesses are only listed.

Header parser: libclang (the PyPI ``libclang`` wheel, via :mod:`fuzzkit.headers`). It runs
the real C preprocessor and parser, so export macros (``ACME_PUBLIC(acme_t *)``,
``ZEXTERN ... OF((...))``), typedefs and ``#if`` branches come out as the compiler sees
them, with the library's own ``-I``/``-D`` flags. pycparser needs preprocessed input and
fake headers for every non-standard construct, and tree-sitter-c parses text without a
preprocessor, missing macro-wrapped declarations (7 of the 81 in one widely used header, measured).
libclang's one trap, ``size_t`` silently becoming ``int`` without the compiler's builtin
headers, is handled by :func:`fuzzkit.tools.resource_include_dir`.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fuzzkit.api import FunctionDecl
from fuzzkit.detect import BuildSpec, detect_build, resolve_recipe
from fuzzkit.detect_recipe import HINT, umbrellas
from fuzzkit.detect_run import Detection
from fuzzkit.detect_tree import fuzz_harnesses, in_fuzz_folder, mentions_fuzz_entry, project_dir, read_text
from fuzzkit.errors import ToolchainError
from fuzzkit.exports import defined_functions
from fuzzkit.header_facts import blob_types, stream_types
from fuzzkit.header_facts_collect import collect_facts
from fuzzkit.headers import canonical_types, deprecated_functions, parse_header
from fuzzkit.library import LibraryBuild, build_library
from fuzzkit.reach import call_graph
from fuzzkit.select_functions import choose_functions, pick_named, usage_bonus
from fuzzkit.source import SourceSpec, fetch_source
from fuzzkit.usage_index import base_names, usage_index
from fuzzkit.usage_models import CallSite, UsageFunction

_NO_CHECK = re.compile(r"^(no_?check|unchecked|no_?verify|no_?validate|unsafe)$", re.I)


def skips_validation(name: str) -> bool:
    """Whether a function's name says it trusts its input (``acme_string_nocheck``).

    Such variants leave validation to the caller, so raw fuzz input is a misuse of them and
    the findings are false positives; the checked sibling is the target to fuzz.
    """
    return any(_NO_CHECK.match(w) for w in re.split(r"_+", name))


def project_name(spec: SourceSpec, root: Path) -> str:
    """A short project name: the apt package, or the directory/repository name."""
    apt = spec.apt.partition("/")[0] if spec.apt else None  # `NAME/RELEASE` names NAME
    raw = apt or (Path(spec.git.rstrip("/")).stem if spec.git else root.name)
    name = re.sub(r"[-_.]?\d[\w.+~-]*$", "", raw) if not spec.apt else raw  # drop "-1.2.3"
    return re.sub(r"[^a-z0-9_+-]+", "-", (name or raw).lower()).strip("-")


def _source(data: dict[str, Any]) -> SourceSpec:
    """The source spec, or a one-line error saying what is wrong with it."""
    try:
        return SourceSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ToolchainError(
            str(first.get("ctx", {}).get("error") or first["msg"]).removeprefix("Value error, "),
            "give --apt NAME (or NAME=VERSION, NAME/RELEASE), --path DIR, --git URL or --tarball URL",
        ) from exc


def _function_entry(decl: FunctionDecl) -> dict[str, Any]:
    return {
        "name": decl.name,
        "signature": decl.prototype().rstrip(";"),
        "return_type": decl.return_type,
        "params": [{"name": p.name, "type": p.type} for p in decl.params],
    }


def _build_section(system: str, recipe: dict[str, Any], headers: list[str],
                   added: list[str]) -> dict[str, Any]:
    if system != "sources":
        # Configured in a private copy of the tree and detected again at run time; the
        # headers are named only when the built archive narrowed the detected list, the
        # options when configure needed one for a missing component (fuzzkit.detect_options).
        section: dict[str, Any] = {"system": system} | ({"configure_args": added} if added else {})
        return section | ({"headers": headers} if headers != recipe.get("headers") else {})
    section = {k: recipe[k] for k in ("sources", "include_dirs", "defines") if recipe.get(k)}
    return section | {"headers": headers}


def library_api(lib: LibraryBuild, root: Path) -> tuple[list[FunctionDecl], list[str], list[str]]:
    """The API: functions the headers declare and the archive defines; the headers; the unbuilt.

    The unbuilt are the functions the headers declare that the build did not define (a source
    generated by a tool that is missing).

    A header that cannot be parsed, or declares only functions of parts not built, is left
    out; the headers come back relative to ``root`` (the tree the recipe's paths are in).

    Raises:
        ToolchainError: No header declares a function the library defines.
    """
    defined = defined_functions(lib)
    seen: set[str] = set()
    api: list[FunctionDecl] = []
    kept: list[str] = []
    errors: list[str] = []
    unbuilt: list[str] = []
    # What a header declares itself first; then what umbrella headers' parts declare.
    for i, header, parts in [(i, h, p) for p in (False, True) for i, h in enumerate(lib.headers)]:
        try:
            decls = parse_header(Path(header), lib.include_dirs, lib.defines, parts, before=lib.headers[:i])
        except ToolchainError as exc:
            errors.append(exc.message)
            continue
        mine = [d for d in decls if d.name in defined and d.name not in seen]
        unbuilt += [d.name for d in decls if not parts and d.name not in defined and d.name not in unbuilt]
        if mine:
            rel = (Path(header).resolve().relative_to(root.resolve()).as_posix()
                   if Path(header).resolve().is_relative_to(root.resolve()) else str(header))
            kept += [rel] if rel not in kept else []
            seen.update(d.name for d in mine)
            api += mine
    if not api:
        why = f" ({errors[0]})" if errors else ""
        raise ToolchainError(
            f"the public headers {[Path(h).name for h in lib.headers]} declare no function "
            f"the library defines{why}",
            "name the right headers in the YAML's `build: {headers: [...]}`",
        )
    return api, _with_umbrellas(kept, root), unbuilt


def _with_umbrellas(kept: list[str], root: Path) -> list[str]:
    """``kept``, after the umbrellas beside them (:func:`fuzzkit.detect_recipe.umbrellas`).

    An umbrella declares no function itself, so the API pass would drop it; the parts may need it.
    """
    front = [u.relative_to(root.resolve()).as_posix() if u.is_relative_to(root.resolve()) else str(u)
             for u in umbrellas([(root / k).resolve() for k in kept])]
    return [*front, *kept]


def _detection(root: Path, build: dict[str, Any] | None, cache: Path | None) -> Detection:
    """The build detection finds, or the caller's ``build:`` section resolved against the tree."""
    if build is None:
        return detect_build(root, cache=cache)
    try:
        given = BuildSpec.model_validate(build)
    except ValidationError as exc:
        raise ToolchainError(f"bad build section: {exc.errors()[0]['msg']}", HINT) from exc
    return Detection(given.system or "given", resolve_recipe(root, given, cache))


def upstream_harnesses(root: Path) -> list[str]:
    """The fuzz harnesses the library ships (paths from the source root)."""
    project = project_dir(root)
    prefix = project.relative_to(root).as_posix()
    return [h if prefix == "." else f"{prefix}/{h}" for h in fuzz_harnesses(project)]


def fuzzed_functions(root: Path, harnesses: list[str], ignore_fuzz_harnesses: bool = False) -> set[str]:
    """What the library's own fuzz harnesses call: its authors found it worth fuzzing (a rank bonus).

    With ``ignore_fuzz_harnesses`` nothing, and no harness is read: a comparison against those
    harnesses must not let the choice learn from them.
    """
    if ignore_fuzz_harnesses:
        return set()
    return {n for h in harnesses for n in re.findall(r"\b(\w+)\s*\(", read_text(root / h))}


def without_fuzz_files(lib: LibraryBuild, *trees: Path) -> LibraryBuild:
    """``lib`` without the headers a fuzzing folder holds or that mention ``LLVMFuzzerTestOneInput``.

    Folders are judged by the path inside the tree the header is in (``trees``: the configured
    copy, the source root), never by the machine's directories above it.
    """
    bases = [t.resolve() for t in trees]

    def yardstick(header: Path) -> bool:
        base = next((b for b in bases if header.is_relative_to(b)), None)
        return (base is not None and in_fuzz_folder(header.relative_to(base))) or mentions_fuzz_entry(header)

    return dataclasses.replace(lib, headers=[h for h in lib.headers if not yardstick(Path(h).resolve())])


def make_benchmark(
    source_spec: SourceSpec | dict[str, Any],
    functions: list[str] | None = None,
    max_functions: int = 8,
    cache: Path | None = None,
    build: dict[str, Any] | None = None,
    ignore_fuzz_harnesses: bool = False,
) -> dict[str, Any]:
    """The benchmark YAML (as a dict) for a library, with a default or named function set.

    Args:
        source_spec: Where the source comes from (``{"apt": "NAME"}``, ``{"path": ...}``...).
        functions: Function names to use instead of the default choice.
        max_functions: How many functions the default choice may take.
        cache: Cache root (defaults to :func:`fuzzkit.paths.cache_dir`).
        build: A ``build:`` section to use instead of detection's (any form of
            :class:`fuzzkit.detect.BuildSpec`); it goes into the YAML as given.
        ignore_fuzz_harnesses: Choose without reading the library's fuzz harnesses (no rank
            bonus for what they call) or any header in a fuzzing folder; they are still listed.

    Raises:
        ToolchainError: The source cannot be fetched or built, or a named function is
            not in the library's API.
    """
    spec = source_spec if isinstance(source_spec, SourceSpec) else _source(source_spec)
    root = fetch_source(spec, cache)
    detection = _detection(root, build, cache)
    lib = build_library(root, detection.recipe, cache=cache)
    harnesses = upstream_harnesses(root)
    tree = Path(detection.recipe.root or root)
    lib = without_fuzz_files(lib, tree, root) if ignore_fuzz_harnesses else lib
    api, api_headers, unbuilt = library_api(lib, tree)
    not_built = [n for n in functions or () if n in unbuilt]
    if not_built:
        raise ToolchainError(_unbuilt_note(not_built, detection), HINT)
    deprecated = {
        n for h in lib.headers for n in deprecated_functions(Path(h), lib.include_dirs, lib.defines)
    }
    canonical = canonical_types(lib.headers, lib.include_dirs, lib.defines)
    preferred_api = [d for d in api if d.name not in deprecated and not skips_validation(d.name)]
    fuzzed = set() if functions else fuzzed_functions(root, harnesses, ignore_fuzz_harnesses)
    chosen = pick_named(api, functions) if functions else _default_choice(
        lib, api, preferred_api, canonical, fuzzed, max_functions)
    if not chosen:
        raise ToolchainError(_nothing_chosen(api, api_headers)
                             + (f"; {_unbuilt_note(unbuilt, detection)}" if unbuilt else ""))
    preferred = sorted(harnesses, key=lambda h: (not h.endswith(".c"), h))
    bench: dict[str, Any] = {"project": project_name(spec, root), "language": "c"}
    if preferred:
        bench["target_path"] = preferred[0]
        bench["target_name"] = Path(preferred[0]).stem
    bench["source"] = spec.model_dump(exclude_none=True)
    if build is not None:
        bench["build"] = build  # the caller's section wins, as written
    else:
        bench["build"] = _build_section(detection.system, detection.recipe.model_dump(), api_headers,
                                        detection.added_args)
    bench["upstream_harnesses"] = harnesses
    bench["functions"] = [_function_entry(d) for d in chosen]
    return bench


def _default_choice(lib: LibraryBuild, api: list[FunctionDecl], preferred_api: list[FunctionDecl],
                    canonical: dict[str, str], fuzzed: set[str], max_functions: int) -> list[FunctionDecl]:
    """The default targets (:func:`fuzzkit.select_functions.choose_functions`) with the headers' facts."""
    facts = collect_facts(lib.headers, lib.include_dirs, lib.defines, api)
    # A harness calling the header's inline wrapper (or macro) fuzzes the function it wraps.
    fuzzed = fuzzed | {w.function for w in facts.wrappers if w.caller in fuzzed}
    constants = [c for e in facts.enums for c, _v in e.constants] + [m.name for m in facts.macros]
    index = usage_index(lib, api, constants)  # the library's own tests and tools, never its fuzz harnesses
    streams = stream_types(facts) | blob_types(facts)
    # Data reaches a call as a buffer, its size or a callback, or inside a stream struct it is given.
    def fed(f: UsageFunction, c: CallSite) -> bool:
        return any(a.kind in ("data", "size", "callback")
                   or bool(base_names(f.variables.get(a.var, "")) & streams) for a in c.args)

    used = usage_bonus((c.function, fed(f, c)) for f in index.functions for c in f.calls)
    # A function declared never to return (an error reporter) is no target: it never comes back.
    candidates = [d for d in preferred_api if d.name not in set(facts.noreturn)]
    return choose_functions(candidates, max_functions, canonical, fuzzed, streams, used,
                            call_graph(lib.cov_archive))


def _nothing_chosen(api: list[FunctionDecl], headers: list[str]) -> str:
    """Why the default choice is empty, and what to do."""
    names = ", ".join(d.name for d in api[:6]) + (", ..." if len(api) > 6 else "")
    where = ", ".join(Path(h).name for h in headers) or "its public headers"
    if not api:
        return f"no function declared in {where}: point init-benchmark at the library's public headers"
    return (f"none of the {len(api)} functions of {where} ({names}) takes input data (bytes, a string "
            "or a file name), so none was chosen (an API whose work is done through function "
            "pointers in a record is one such); name the ones to fuzz with --functions F,G")


def _unbuilt_note(names: list[str], detection: Detection) -> str:
    """Functions the headers declare that the build compiled no definition of."""
    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    return (f"{shown} {'is' if len(names) == 1 else 'are'} declared but not built (the {detection.system} "
            "build compiled no source defining them: one generated by a tool that is missing, such as a "
            "parser generator, or left out by a build option)")
