"""First drafts: the offline engine's first harness of every target, written out or compared.

An engine change that should only touch some libraries is checked by comparing the first
drafts of every function of a set of benchmarks before and after it: the graph runs each
target up to the prototyper (the same prompt path as a real run, no build, no fuzzing, no
experience memory) and the harness it wrote goes to ``OUT/<project>/<function>.c``.

    python bench/first_drafts.py benchmarks/*.yaml LIB.yaml --out drafts-before
    (change the engine)
    python bench/first_drafts.py benchmarks/*.yaml LIB.yaml --out drafts-after --compare drafts-before

``--compare DIR`` prints each draft that differs from DIR's (a unified diff with ``--diff``),
then one line: how many were compared, identical, changed, new. Exit 0 when every target got a
draft, 1 when some target failed (named on stderr), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from agent_graph.benchmark import load_benchmark  # noqa: E402
from agent_graph.builder import build_graph  # noqa: E402
from agent_graph.context import Context  # noqa: E402
from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402
from logicfuzz.target_run import prepared_input  # noqa: E402


def first_draft(bench_path: str, function: str, work: Path) -> str:
    """The harness the prototyper writes first for ``function`` (offline model, no memory)."""
    bench = load_benchmark(bench_path)
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"{bench.project}/{function}"}}
    payload = {**prepared_input(bench, function, work), "run_dir": str(work)}
    ctx = Context(model="offline", memory_mode="baseline")
    graph.invoke(payload, config, context=ctx, interrupt_after=["prototyper"])
    code = graph.get_state(config).values.get("harness_code")
    if not code:
        raise RuntimeError("the graph stopped before the prototyper wrote a harness")
    return str(code)


def main(argv: list[str] | None = None) -> int:
    """Write (and compare) the first drafts of every function of the given benchmarks."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmarks", nargs="+", help="benchmark YAML files")
    parser.add_argument("--out", required=True, type=Path, help="directory for the drafts")
    parser.add_argument("--compare", type=Path, help="drafts written earlier, to compare with")
    parser.add_argument("--diff", action="store_true", help="print a unified diff of each change")
    add_markdown_option(parser)
    args = parser.parse_args(argv)
    missing = [b for b in args.benchmarks if not Path(b).is_file()]
    if missing or (args.compare and not args.compare.is_dir()):
        print(f"error: no such file or directory: {(missing or [args.compare])[0]}", file=sys.stderr)
        return 2
    with markdown_copy(args.markdown, "First drafts compared", fenced=True):
        return write_drafts(args)


def write_drafts(args: argparse.Namespace) -> int:
    """Write every target's first draft under --out and print how it compares with --compare."""
    failed = same = changed = new = 0
    for path in args.benchmarks:
        bench = load_benchmark(path)
        for fn in [f.name for f in bench.functions]:
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    code = first_draft(path, fn, Path(tmp))
                except Exception as exc:  # noqa: BLE001 - reported and counted, the next target goes on
                    print(f"{bench.project}/{fn}: failed: {exc}", file=sys.stderr)
                    failed += 1
                    continue
            out = args.out / bench.project / f"{fn}.c"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(code)
            before = args.compare / bench.project / f"{fn}.c" if args.compare else None
            if before is None:
                continue
            if not before.is_file():
                new += 1
                print(f"new: {bench.project}/{fn}")
            elif before.read_text() == code:
                same += 1
            else:
                changed += 1
                print(f"changed: {bench.project}/{fn}")
                if args.diff:
                    sys.stdout.writelines(difflib.unified_diff(
                        before.read_text().splitlines(True), code.splitlines(True),
                        str(before), str(out)))
    if args.compare:
        print(f"{same + changed + new} compared: {same} identical, {changed} changed, {new} new")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
