"""The arms of ``bench/memory_ab.py``: which experience bank each target of each arm reads.

Every arm starts from an empty bank it checks (its own directory under ``--out``; a directory
that already holds a run is refused unless ``--restart`` empties it). Targets run one at a
time, in the sequence's order:

- ``baseline`` neither reads nor writes its bank;
- ``retrieve-extract`` reads and writes its bank, and keeps a copy of it as it was before each
  target (``snapshots/NNN``);
- ``retrieve-only`` runs target N over retrieve-extract's copy from before target N: it reads
  only what retrieve-extract had learned from the targets before it, never a lesson of a later
  target, and checks that the copy is byte-identical afterwards;
- ``learning-curve`` runs the sequence twice from its own empty bank: pass 1 reads and writes,
  pass 2 reads only what pass 1 learned (and checks that it never writes).

The runner (``logicfuzz.runner.run_benchmark``) is a parameter: tests give a fake one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_graph.benchmark import load_benchmark
from agent_graph.context import Context
from fuzzkit.inputs import InputError
from logicfuzz.runner import RunOptions, run_benchmark

MODES = ("baseline", "retrieve-extract", "retrieve-only", "learning-curve")
Plan = list[tuple[Path, list[str]]]
Runner = Callable[[RunOptions], object]
Hook = Callable[[int], None]


class ArmError(Exception):
    """An arm that cannot start as asked; the message says what was wrong and what to do."""


def plan_of(benchmarks: Sequence[Path], functions: Sequence[str] | None, per_benchmark: int) -> Plan:
    """Each benchmark with its functions in the sequence: ``functions``, else its first ``per_benchmark``."""
    return [(bench, list(functions) if functions else
             [f.name for f in load_benchmark(bench).functions][:per_benchmark]) for bench in benchmarks]


def listing(plan: Plan) -> list[str]:
    """The sequence as ``<benchmark stem>/<function>`` lines, in order."""
    return [f"{bench.stem}/{name}" for bench, names in plan for name in names]


def bank_digest(bank: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of every experience-bank file under ``bank``."""
    files = sorted(bank.rglob("*")) if bank.is_dir() else []
    return {str(f.relative_to(bank)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in files if f.is_file() and not f.name.endswith(".lock")}


def require_empty(bank: Path, arm: str) -> None:
    """Refuse to start ``arm`` over a bank that holds anything.

    Raises:
        ArmError: ``bank`` has files (the arm would read lessons it did not learn).
    """
    found = sorted(bank_digest(bank))
    if found:
        raise ArmError(f"the {arm} arm must start from an empty experience bank, but {bank} holds "
                       f"{len(found)} file(s) ({', '.join(found[:3])}); remove it or give a new --out")


def fresh_arm_dir(out: Path, arm: str, restart: bool) -> None:
    """Make the arm's directory, empty: a directory holding an earlier run is emptied or refused.

    Raises:
        ArmError: ``out`` is not empty and ``restart`` is off.
    """
    if out.is_dir() and any(out.iterdir()):
        if not restart:
            raise ArmError(f"{out} already holds a run of the {arm} arm (its runs and its experience "
                           f"bank), and an arm starts from an empty bank: give a new --out, add "
                           f"--restart to empty it first, or leave {arm} out of --modes to re-measure it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def _context(args: argparse.Namespace, mode: str, config: Path) -> Context:
    return Context(model=args.model, fuzz_seconds=args.fuzz_seconds, fuzz_seed=args.fuzz_seed,
                   fuzz_runs=args.fuzz_runs, memory_config=str(config.resolve()),
                   max_iterations=args.max_iterations, memory_mode=mode)


def _config(path: Path, bank: Path) -> Path:
    """A memory config file naming ``bank`` (library builds stay in the shared cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"bank:\n  directory: {json.dumps(str(bank.resolve()))}\n", encoding="utf-8")
    return path


def run_sequence(plan: Plan, mode: str, out: Path, bank_for: Callable[[int], Path], args: argparse.Namespace,
                 runner: Runner, before: Hook | None = None, after: Hook | None = None) -> None:
    """Run the sequence's targets one at a time in ``mode``; target N reads ``bank_for(N)``.

    ``before(N)`` and ``after(N)`` run around target N. A benchmark of several targets ends with
    one call over all of them: every target has its result (nothing runs again), and the
    benchmark's ``summary.json`` and union coverage cover them all.
    """
    index = 0
    for bench, names in plan:
        runs = out / "runs" / bench.stem
        config = out / "memory.yaml"
        for name in names:
            if before:
                before(index)
            config = _config(out / "configs" / f"{index:03d}.yaml", bank_for(index))
            try:
                runner(RunOptions(bench, [name], runs, _context(args, mode, config), jobs=1))
            except InputError as exc:  # e.g. the library does not define it: the summary records why
                print(f"memory_ab: {mode}: {bench.stem}/{name} did not run: {exc}", file=sys.stderr)
            if after:
                after(index)
            index += 1
        if len(names) > 1:
            runner(RunOptions(bench, names, runs, _context(args, mode, config), jobs=1))


@dataclass
class BankCheck:
    """Whether any target changed the bank it read, kept in ``out/bank_check.json`` after each target."""

    banks: Callable[[int], Path]
    out: Path
    files: int = 0
    changed: list[str] = field(default_factory=list)
    seen: dict[int, dict[str, str]] = field(default_factory=dict)

    def before(self, index: int) -> None:
        """Note the digest of the bank target ``index`` reads."""
        self.seen[index] = bank_digest(self.banks(index))

    def after(self, index: int) -> None:
        """Compare it with the bank after the target, and write the check so far."""
        bank, was = self.banks(index), self.seen[index]
        now = bank_digest(bank)
        self.files = max(self.files, len(was))
        self.changed += [f"{bank.name}/{k}" for k in sorted(was.keys() | now.keys())
                         if was.get(k) != now.get(k)]
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "bank_check.json").write_text(json.dumps(
            {"files": self.files, "identical": not self.changed, "changed": self.changed}), encoding="utf-8")


def _retrieve_only(plan: Plan, root: Path, args: argparse.Namespace, runner: Runner) -> None:
    """Target N over the bank retrieve-extract had before target N, never written."""
    learned = root / "retrieve-extract"
    recorded = learned / "sequence.json"
    if not recorded.is_file() or json.loads(recorded.read_text(encoding="utf-8")) != listing(plan):
        raise ArmError(f"the retrieve-only arm reads, before each target, the bank retrieve-extract had "
                       f"before the same target, and {learned} holds no retrieve-extract run of this "
                       f"sequence: run both arms in this --out with the same benchmarks and functions "
                       f"(--modes retrieve-extract retrieve-only)")
    out = root / "retrieve-only"
    fresh_arm_dir(out, "retrieve-only", args.restart)

    def snapshot(index: int) -> Path:
        return learned / "snapshots" / f"{index:03d}"

    require_empty(snapshot(0), "retrieve-only")  # its first target reads nothing either
    check = BankCheck(snapshot, out)
    run_sequence(plan, "retrieve-only", out, snapshot, args, runner, check.before, check.after)


def run_arm(mode: str, plan: Plan, root: Path, args: argparse.Namespace,
            runner: Runner = run_benchmark) -> None:
    """Run one arm of the A/B over the sequence ``plan``, in ``root/<mode>``.

    Raises:
        ArmError: its directory holds an earlier run (without ``--restart``), its bank is not
            empty, or (retrieve-only) retrieve-extract has not run this sequence in ``root``.
    """
    if mode == "retrieve-only":
        _retrieve_only(plan, root, args, runner)
        return
    out = root / mode
    fresh_arm_dir(out, mode, args.restart)
    bank = out / "bank"
    require_empty(bank, mode)
    if mode == "learning-curve":
        run_sequence(plan, "retrieve-extract", out / "pass-1", lambda _: bank, args, runner)
        check = BankCheck(lambda _: bank, out / "pass-2")
        run_sequence(plan, "retrieve-only", out / "pass-2", lambda _: bank, args, runner,
                     check.before, check.after)
        return
    if mode != "retrieve-extract":
        run_sequence(plan, mode, out, lambda _: bank, args, runner)
        return
    (out / "sequence.json").write_text(json.dumps(listing(plan)), encoding="utf-8")
    bank.mkdir(parents=True, exist_ok=True)

    def snapshot(index: int) -> None:  # what target N may read: retrieve-only's target N reads it
        shutil.copytree(bank, out / "snapshots" / f"{index:03d}", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.lock"))

    run_sequence(plan, mode, out, lambda _: bank, args, runner, snapshot)


def rows_of(root: Path) -> dict[str, tuple[Path, Path]]:
    """Each table row: the directory its runs are in and the bank its items were learned in."""
    learned = root / "retrieve-extract" / "bank"
    curve = root / "learning-curve"
    return {"baseline": (root / "baseline", learned),
            "retrieve-extract": (root / "retrieve-extract", learned),
            "retrieve-only": (root / "retrieve-only", learned),
            "learning-curve pass 1": (curve / "pass-1", curve / "bank"),
            "learning-curve pass 2": (curve / "pass-2", curve / "bank")}
