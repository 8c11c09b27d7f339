"""Known bugs from Debian's own fixes: does LogicFuzz find them, and does the library's own harness set?

For each entry of a bugs file (``bench/bugbench_load.py`` has the format; ``bench/bugs/dev.yaml``):

1. ``apt-get source NAME=VERSION`` (cached; Debian's patches applied), the entry's patch of
   ``debian/patches/`` reversed in a copy: the vulnerable tree (``OUT/ID/vulnerable/``);
2. ``logicfuzz init-benchmark --path VULNERABLE --ignore-fuzz-harnesses`` (init-benchmark's own
   choice of functions, blind to the library's fuzz harnesses; or the entry's ``functions``,
   marked ``*`` in the table), then ``logicfuzz run`` on it (``--fuzz-seconds``,
   ``--max-iterations``, ``--run-arg`` passed through; an empty experience bank of its own);
3. the library built twice with the recipe detected for the source as shipped: as shipped
   (fixed) and with the patch reversed (vulnerable) (``bugbench_oracle``);
4. LogicFuzz's final harness set and the library's own (the files defining
   ``LLVMFuzzerTestOneInput``) each fuzzed on the vulnerable build with ``--seconds`` CPU-seconds
   per side, split evenly over its harnesses, ``--repeats`` times (``harness_compare``); with
   ``--sides ...,function`` also the entry's own harness of the patched function, if it has one
   (how an entry is checked to be triggerable when the library's own set misses it);
5. every crash input replayed alone on the same harness built on both: it crashes the
   vulnerable build and not the fixed one, the known bug is found (the differential oracle).
   A harness stopped by another crash (a leak both builds have) fuzzes on from the inputs it
   kept for what is left of its share.

Printed: per bug, found by LogicFuzz (k of R) and by the own set, the median CPU-seconds to the
first find, and what LogicFuzz's run judged crashes at the same place; totals below. JSON goes
to ``OUT/bugbench.json`` after each bug; ``--merge`` joins earlier sittings. ``--sides upstream``
measures the own sets alone (a cheap check that an entry's bug can be triggered).
Exit codes: 0 every bug measured, 1 some failed (the others are in the table), 2 bad arguments
or a bad bugs file.

    python bench/bugbench.py bench/bugs/dev.yaml --markdown docs/results/bugbench.md
    python bench/bugbench.py bench/bugs/dev.yaml --only cjson-heap-overflow --sides upstream --seconds 60
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or loaded by path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout first: benchkit and the product
from generality import IGNORE_FUZZ_HARNESSES, StageError, _cli, logicfuzz_run, run_stats  # noqa: E402

from benchkit.bugbench_load import BugEntry, BugsFileError, load_bugs  # noqa: E402
from benchkit.bugbench_oracle import (  # noqa: E402
    KNOWN,
    apply_reviews,
    built_files_patched,
    library_bug_verdicts,
    library_pair,
    patch_file,
    replay_both,
    reversed_tree,
    run_verdicts,
    verdict_for,
)
from benchkit.bugbench_table import SIDES, markdown, side_summary, summarize  # noqa: E402
from benchkit.generality_args import (  # noqa: E402
    ArgumentParser,
    Library,
    UsageError,
    at_least_one,
    logicfuzz_run_options,
)
from benchkit.harness_compare import (  # noqa: E402
    DICT_MODES,
    BuiltSide,
    SideRun,
    build_side,
    fuzz_side,
    load_bench,
    logicfuzz_harnesses,
    side_dictionaries,
    split_budget,
)
from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402
from fuzzkit.detect import resolve_recipe  # noqa: E402
from fuzzkit.harness import HarnessBuild  # noqa: E402
from fuzzkit.init_benchmark import upstream_harnesses  # noqa: E402
from fuzzkit.library import LibraryBuild  # noqa: E402
from fuzzkit.runner import FuzzRun, run_fuzzer  # noqa: E402
from fuzzkit.source import SourceSpec, fetch_source  # noqa: E402
from fuzzkit.toolchain import Fuzzkit  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TITLE = "Known bugs from Debian's fixes: LogicFuzz and the libraries' own harness sets"
# Hand reviews of library-bug verdicts that are not the known bug: "ID SIGNATURE" -> review, why.
REVIEWS = Path(__file__).resolve().parent / "bugs" / "reviews.yaml"


def benchmark_for(entry: BugEntry, vulnerable: Path, work: Path) -> Path:
    """``OUT/ID/benchmark.yaml`` from init-benchmark on the vulnerable tree (kept across sittings)."""
    out = work / "benchmark.yaml"
    if out.is_file():
        return out
    funcs = ["--functions", ",".join(entry.functions)] if entry.functions else []
    build = ["--build", json.dumps(entry.build)] if entry.build else []
    rc, said = _cli(["init-benchmark", "--path", str(vulnerable), IGNORE_FUZZ_HARNESSES, *funcs, *build],
                    work / "init-benchmark.log", out)
    if rc != 0:
        out.unlink(missing_ok=True)
        raise StageError("init-benchmark", said)
    return out


def own_harnesses(tree: Path, bench: dict[str, Any] | None, globs: list[str]) -> list[Path]:
    """The library's own fuzz harnesses (those matching one of ``globs``, if any are given)."""
    listed = bench["upstream_harnesses"] if bench else upstream_harnesses(tree)
    return [tree / h for h in listed if not globs or any(fnmatch(h, g) for g in globs)]


@dataclass
class Repeat:
    """One side's repeat: its harnesses, their twins on the fixed build, and how they were fuzzed."""

    side: BuiltSide
    fixed: dict[str, HarnessBuild]
    seconds_each: int
    dicts: list[Path | None]
    writable_tmp: bool
    work: Path


# A harness stopped by another crash (a leak the fixed build has too) fuzzes on for what is left
# of its share, from the inputs it has kept, at most this many times.
RESTARTS = 10


def _judged(rep: Repeat, i: int, fuzz: FuzzRun, before: float) -> list[dict[str, Any]]:
    """The crash inputs of one run of harness ``i`` through the oracle, timed from the repeat's start."""
    name, build, source = rep.side.names[i], rep.side.builds[i], rep.side.sources[i]
    twin = rep.fixed.get(name)
    seconds = before + fuzz.seconds
    out = []
    for unit in fuzz.crash_files:
        fixed_binary = Path(str(twin.fuzz_binary)) if twin else None
        got = replay_both(Path(unit), Path(str(build.fuzz_binary)), fixed_binary, rep.work / "replay",
                          source.name)
        out.append({**got, "harness": name, "seconds": round(seconds, 1),
                    "cpu_seconds": round(seconds * len(rep.side.builds), 1)})
    return out


def _harness_crashes(rep: Repeat, i: int, first: FuzzRun) -> list[dict[str, Any]]:
    """Harness ``i``'s crashes over its whole share: fuzzed on after any crash that is not the known bug."""
    runs, crashes = [first], _judged(rep, i, first, 0.0)
    spent = first.seconds
    while (runs[-1].crashed and len(runs) <= RESTARTS and rep.seconds_each - spent >= 2
           and not any(c["class"] == KNOWN for c in crashes)):
        corpora = [Path(r.corpus_dir) for r in runs]
        again = run_fuzzer(Path(str(rep.side.builds[i].fuzz_binary)), rep.work / f"fuzz{i}-{len(runs)}",
                           seconds=int(rep.seconds_each - spent), dict_path=rep.dicts[i], seed_dirs=corpora,
                           writable_tmp=rep.writable_tmp)
        crashes += _judged(rep, i, again, spent)
        spent += again.seconds
        runs.append(again)
    return crashes


def judge_repeat(rep: Repeat, run: SideRun) -> dict[str, Any]:
    """Every crash input of one side's repeat through the oracle; the first find of the known bug."""
    crashes = [c for i, fuzz in enumerate(run.runs) for c in _harness_crashes(rep, i, fuzz)]
    finds = [c["cpu_seconds"] for c in crashes if c["class"] == KNOWN]
    return {"crashes": crashes, "first_find_cpu_seconds": min(finds) if finds else None,
            "lines": run.report.lines.percent, "budget": run.budget()}


def _in_tree(source: Path, vulnerable: LibraryBuild, fixed: LibraryBuild) -> Path:
    """The fixed tree's copy of a source of the vulnerable tree (its relative includes resolve there)."""
    try:
        rel = source.resolve().relative_to(Path(vulnerable.root).resolve())
    except ValueError:
        return source  # a harness of LogicFuzz's or of the bench, outside both trees
    twin = Path(fixed.root) / rel
    return twin if twin.is_file() else source


def _crash_harness(unit: Path) -> Path | None:
    """The harness source beside a run's crash input (``vN/seeds/artifacts/crash-*`` -> ``vN/harness.c``)."""
    for parent in unit.parents:
        if (parent / "harness.c").is_file():
            return parent / "harness.c"
    return None


def replay_verdicts(verdicts: list[dict[str, Any]], vulnerable: LibraryBuild, fixed: LibraryBuild,
                    work: Path) -> None:
    """Each library-bug verdict's reproducer replayed alone on its harness built on both builds.

    Sets ``replay``: ``vulnerable only`` (the fix removes it), ``both builds`` (a crash the fix
    leaves), ``no crash`` (it does not replay), or why it could not be tried.
    """
    said = {"known": "vulnerable only", "other": "both builds", "none": "no crash"}
    for i, v in enumerate(verdicts):
        unit = Path(v.get("reproducer") or "")
        harness = _crash_harness(unit) if v.get("reproducer") and unit.is_file() else None
        if harness is None:
            v["replay"] = "no reproducer kept"
            continue
        built = build_side("verdict", [harness], vulnerable, work / f"verdict{i}")
        twin = build_side("verdict", [harness], fixed, work / f"verdict{i}-fixed")
        if not built.builds:
            v["replay"] = "its harness does not build on the vulnerable build"
            continue
        fixed_bin = Path(str(twin.builds[0].fuzz_binary)) if twin.builds else None
        vulnerable_bin = Path(str(built.builds[0].fuzz_binary))
        got = replay_both(unit, vulnerable_bin, fixed_bin, work / f"verdict{i}-replay", harness.name)
        v["replay"] = said.get(got["class"], got["class"])


def known_by_replay(verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The verdicts whose reproducer crashes the vulnerable build alone, marked the known bug.

    The same differential oracle as the sides' crashes: LogicFuzz's run met the bug (on a sample
    file, say) though neither side's equal-CPU fuzzing did. Returns them as known crashes.
    """
    out = []
    for v in verdicts:
        if v.get("replay") == "vulnerable only" and not v.get("known_bug"):
            v["known_bug"] = True
            out.append({"signature": v["signature"], "class": KNOWN})
    return out


def hunt(harnesses: dict[str, list[Path]], vulnerable: LibraryBuild, fixed: LibraryBuild, work: Path,
         args: argparse.Namespace) -> dict[str, Any]:
    """Both sides built on both builds, fuzzed on the vulnerable one at equal CPU, crashes judged."""
    built = {s: build_side(s, srcs, vulnerable, work / f"{s}-build") for s, srcs in harnesses.items()}
    twins = {s: build_side(s, [_in_tree(p, vulnerable, fixed) for p in srcs], fixed,
                           work / f"{s}-build-fixed") for s, srcs in harnesses.items()}
    library_dict = Fuzzkit().fuzz_dictionary(vulnerable)
    sides: dict[str, dict[str, Any]] = {}
    repeats: dict[str, list[dict[str, Any]]] = {s: [] for s in built}
    for r in range(args.repeats):
        for side, b in built.items():  # alternate sides so machine load hits both alike
            if not b.builds:
                continue
            each = split_budget(args.seconds, len(b.builds))
            print(f"  {side} {r + 1}/{args.repeats}: {len(b.builds)} harnesses x {each} s", file=sys.stderr)
            # A patched-function harness, written for the bench as LogicFuzz's are, ships no
            # dictionary: it gets LogicFuzz's (the library's string literals), as they do.
            kind = "logicfuzz" if side == "function" else side
            dicts = side_dictionaries(b, kind, args.dict, library_dict)
            run = fuzz_side(b.builds, vulnerable, each, 1, args.parallel, work / f"{side}{r}", dicts,
                            writable_tmp=side == "upstream")
            fixed_builds = dict(zip(twins[side].names, twins[side].builds, strict=True))
            rep = Repeat(b, fixed_builds, each, dicts, side == "upstream", work / f"{side}{r}")
            repeats[side].append(judge_repeat(rep, run))
    for side, b in built.items():
        sides[side] = {"built": b.names, "failures": b.failures, "fixed_failures": twins[side].failures,
                       **side_summary(repeats[side]), "repeat_runs": repeats[side]}
    return sides


def measure(entry: BugEntry, args: argparse.Namespace) -> dict[str, Any]:
    """One bug's row; a failing step gives a row with ``error`` and ``stage``."""
    work = (args.out / entry.id).resolve()
    work.mkdir(parents=True, exist_ok=True)
    spec = SourceSpec.model_validate(entry.source)
    shown = f"{spec.apt}={spec.version}" if spec.apt else spec.path
    row: dict[str, Any] = {"id": entry.id, "source_text": shown,
                           "patch": " + ".join(entry.patch), "functions": entry.functions,
                           "listed_in": entry.listed_in, "verified": entry.verified, "note": entry.note}
    stage = "source"
    try:
        root = fetch_source(spec)
        patches = [patch_file(root, name) for name in entry.patch]
        vulnerable = reversed_tree(root, patches, work / "vulnerable" / root.name)
        stage = "init-benchmark"
        bench_path = benchmark_for(entry, vulnerable, work) if "logicfuzz" in args.sides else None
        bench = load_bench(bench_path) if bench_path else None
        stage = "build"
        lib, fixed = library_pair(root, resolve_recipe(root, entry.build), patches, work / "vulnerable-build")
        row["patched_built_files"] = built_files_patched(patches, lib)
        harnesses: dict[str, list[Path]] = {}
        if bench is not None and bench_path is not None:
            stage = "logicfuzz run"
            named = Library(key=entry.id, name=str(vulnerable), yaml=bench_path, functions=entry.functions)
            run_dir = logicfuzz_run(named, bench_path, work, args)
            row.update(run_dir=str(run_dir), **run_stats(run_dir, bench["project"], bench))
            harnesses["logicfuzz"] = logicfuzz_harnesses(run_dir, bench["project"])
        if "upstream" in args.sides:
            # From the tree the library is built from (the same files): a harness including
            # `../lib.h` must find it where the sandboxed compiler may read.
            harnesses["upstream"] = own_harnesses(Path(lib.root), bench, args.own_harness)
        if "function" in args.sides and entry.harness:
            harnesses["function"] = [Path(entry.harness)]
        stage = "fuzzing"
        row["sides"] = hunt(harnesses, lib, fixed, work, args)
        if bench is not None:
            known = [c for s in row["sides"].values() for r in s["repeat_runs"] for c in r["crashes"]
                     if c["class"] == KNOWN]
            row["library_bug_verdicts"] = library_bug_verdicts(Path(row["run_dir"]), known)
            stage = "verdict replay"
            replay_verdicts(row["library_bug_verdicts"], lib, fixed, work / "verdicts")
            known += known_by_replay(row["library_bug_verdicts"])
            row["logicfuzz_verdict"] = verdict_for(known, run_verdicts(Path(row["run_dir"])))
    except StageError as exc:
        row.update(error=str(exc), stage=exc.stage)
    except Exception as exc:  # noqa: BLE001 - one bug's failure must not stop the others
        row.update(error=f"{type(exc).__name__}: {exc}".strip().splitlines()[0], stage=stage)
    if row.get("error"):
        print(f"{entry.id}: failed in {row['stage']}: {row['error']}", file=sys.stderr)
    return row


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parsed and checked arguments; ``entries`` holds the bugs to measure.

    Raises:
        UsageError: A bad number, side, id or merge file.
        BugsFileError: A bad bugs file.
    """
    p = ArgumentParser(prog="bugbench.py", description=__doc__.splitlines()[0])
    p.add_argument("bugs", type=Path, nargs="?", help="bugs file (e.g. bench/bugs/dev.yaml)")
    p.add_argument("--seconds", type=int, default=300, help="fuzzing CPU-seconds per side per repeat "
                   "(default 300), split evenly over the side's harnesses")
    p.add_argument("--repeats", type=int, default=2, help="fuzzing repeats per side (default 2)")
    p.add_argument("--sides", default="logicfuzz,upstream",
                   help="logicfuzz,upstream (default), or a choice of logicfuzz, upstream and function "
                        "(the entry's harness of the patched function); `upstream` alone skips LogicFuzz")
    p.add_argument("--only", action="append", default=[], metavar="ID",
                   help="measure only this entry (repeat)")
    p.add_argument("--own-harness", action="append", default=[], metavar="GLOB",
                   help="fuzz only the library's own harnesses matching GLOB (repeat; a cheap check of one "
                        "harness: give it --seconds of its share of the whole set's budget)")
    p.add_argument("--include-untriggered", action="store_true",
                   help="also measure the entries listed under `untriggered:`")
    logicfuzz_run_options(p)
    p.add_argument("--dict", choices=DICT_MODES, default="own", help="dictionaries, as in generality.py")
    p.add_argument("--parallel", type=int, default=os.cpu_count() or 1,
                   help="harnesses of one side fuzzed at once (wall time only; default: cores)")
    p.add_argument("--out", type=Path, help="work directory (default results/bugbench-<time>)")
    p.add_argument("--merge", nargs="+", type=Path, default=[], metavar="JSON",
                   help="join the rows of earlier sittings' bugbench.json files into the table")
    add_markdown_option(p)
    args = p.parse_args(argv)
    at_least_one(args, ("seconds", "repeats", "fuzz_seconds", "max_iterations", "parallel"))
    args.sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    if not args.sides or set(args.sides) - set(SIDES):
        given = ",".join(args.sides) or "(empty)"
        raise UsageError(f"--sides takes a choice of {', '.join(SIDES)}, not {given}")
    if not args.bugs and not args.merge:
        raise UsageError("no bugs file given: pass BUGS.yaml (e.g. bench/bugs/dev.yaml) "
                         "or --merge JSON files")
    for merged in args.merge:
        try:
            json.loads(merged.read_text())["rows"]
        except (OSError, ValueError, KeyError, TypeError):
            raise UsageError(f"--merge {merged}: not a bugbench.json file") from None
    entries = load_bugs(args.bugs) if args.bugs else []
    unknown = sorted(set(args.only) - {e.id for e in entries})
    if unknown:
        raise UsageError(f"--only {', '.join(unknown)}: no such id in {args.bugs}")
    args.entries = [e for e in entries if (e.id in args.only if args.only else
                                           e.listed_in == "bugs" or args.include_untriggered)]
    args.out = (args.out or REPO / "results" / time.strftime("bugbench-%Y%m%d-%H%M%S")).resolve()
    args.json = args.out / "bugbench.json"
    return args


def write_json(path: Path, rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """The rows, the totals and the settings."""
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                if k not in ("entries", "merge", "markdown", "json")}
    data = {"settings": settings, "rows": rows, "summary": summarize(rows),
            "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except (UsageError, BugsFileError) as exc:
        print(f"bugbench.py: error: {exc}", file=sys.stderr)
        return 2
    rows: dict[str, dict[str, Any]] = {}
    for merged in args.merge:  # later sittings win for a bug measured twice
        rows.update({r["id"]: r for r in json.loads(merged.read_text())["rows"]})
    for entry in args.entries:
        print(f"{entry.id}: {entry.package} {' + '.join(entry.patch)}", file=sys.stderr)
        rows[entry.id] = measure(entry, args)
        write_json(args.json, list(rows.values()), args)  # kept even if a later bug hangs
    reviews = (yaml.safe_load(REVIEWS.read_text()) or {}).get("reviews") or {} if REVIEWS.is_file() else {}
    for row in rows.values():  # a sitting before verdicts were listed: read them from its run
        if "library_bug_verdicts" not in row and row.get("run_dir") and Path(row["run_dir"]).is_dir():
            known = [c for s in (row.get("sides") or {}).values() for r in s["repeat_runs"]
                     for c in r["crashes"] if c["class"] == KNOWN]
            row["library_bug_verdicts"] = library_bug_verdicts(Path(row["run_dir"]), known)
    apply_reviews(list(rows.values()), reviews)
    write_json(args.json, list(rows.values()), args)
    with markdown_copy(args.markdown, TITLE):
        print(markdown(list(rows.values())))
    print(f"\nJSON: {args.json}", file=sys.stderr)
    return 1 if any(r.get("error") for r in rows.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
