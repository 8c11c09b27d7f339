"""Models side by side on the same targets: the offline engine, a real small model, any endpoint.

Arms, in one run on the same benchmark functions and budgets:
- ``offline``: the embedded deterministic model;
- ``openai:smollm2``: SmolLM2-135M-Instruct served by llama.cpp on a free local port (started
  here with :mod:`agents.local_model`), with the offline fallback (the default) and without it
  (``--no-fallback``: the model alone);
- every ``--model openai:NAME`` given, against ``--base-url URL`` (key from ``--api-key-env``).

Per arm: functions running, union line/branch coverage of the library, model calls, steps the
fallback did, prompt and completion tokens (the server's usage when it reports it, else exact
counts with tiktoken/bpe-openai), wall time.

    .venv/bin/python bench/model_compare.py --markdown docs/results/model-compare.md  # cJSON, 2 functions
    .venv/bin/python bench/model_compare.py --model openai:my-model --base-url http://host:8000/v1
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from agent_graph.context import Context  # noqa: E402
from agents.llm import forget_rejections  # noqa: E402
from agents.local_model import LocalModelError, LocalModelServer, smollm2_gguf  # noqa: E402
from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402
from logicfuzz.runner import RunOptions, run_benchmark  # noqa: E402

LOCAL_KEY = "LOGICFUZZ_LOCAL_MODEL_KEY"


@dataclass
class Arm:
    """One column of the comparison: a model, where it is served, and its fallback."""

    label: str
    model: str
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    fallback: str = "offline"


def measure(arm: Arm, bench: Path, functions: list[str], out: Path,
            args: argparse.Namespace) -> dict[str, Any]:
    """Run the arm and read what the run recorded."""
    forget_rejections()
    ctx = Context(model=arm.model, base_url=arm.base_url, api_key_env=arm.api_key_env,
                  fallback=arm.fallback, fuzz_seconds=args.fuzz_seconds,
                  max_iterations=args.max_iterations, max_output_tokens=args.max_output_tokens,
                  memory_mode="baseline")
    started = time.monotonic()
    summary = run_benchmark(RunOptions(bench, functions, out, ctx, jobs=1))
    records = summary["results"]
    union = summary.get("union_coverage") or {}
    return {
        "running": sum(1 for r in records if r.get("runs")), "targets": len(records),
        "errors": sum(1 for r in records if r.get("error")),
        "lines": (union.get("lines") or {}).get("percent", 0.0),
        "branches": (union.get("branches") or {}).get("percent", 0.0),
        "calls": sum(int(r.get("model_calls") or 0) for r in records),
        "fallbacks": sum(sum((r.get("fallbacks") or {}).values()) for r in records),
        "prompt": sum(int(r.get("prompt_tokens") or 0) for r in records),
        "completion": sum(int(r.get("completion_tokens") or 0) for r in records),
        "seconds": time.monotonic() - started,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The bench's arguments (``--markdown`` is checked here, before any server or arm starts)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("benchmark", type=Path, nargs="?", default=REPO / "benchmarks" / "cjson.yaml")
    parser.add_argument("--functions", default="cJSON_Parse,cJSON_Minify")
    parser.add_argument("--fuzz-seconds", type=int, default=5)
    parser.add_argument("--max-iterations", type=int, default=1)
    parser.add_argument("--max-output-tokens", type=int, default=512)
    parser.add_argument("--model", action="append", default=[], help="openai:NAME at --base-url")
    parser.add_argument("--base-url", default="", help="endpoint of the --model arms")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY")
    parser.add_argument("--no-local", action="store_true", help="skip the local SmolLM2 arms")
    parser.add_argument("--out", type=Path, default=None)
    add_markdown_option(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run every arm, print one Markdown table."""
    args = parse_args(argv)
    functions = [f for f in args.functions.split(",") if f]
    root = args.out or Path(tempfile.mkdtemp(prefix="model-compare-"))
    arms = [Arm("offline", "offline")]
    arms += [Arm(f"{m} (fallback)", m, args.base_url, args.api_key_env) for m in args.model]
    arms += [Arm(f"{m} alone", m, args.base_url, args.api_key_env, "") for m in args.model]
    rows: dict[str, dict[str, Any]] = {}
    server = None
    try:
        if not args.no_local:
            server = LocalModelServer(smollm2_gguf(), alias="smollm2").start()
            os.environ.setdefault(LOCAL_KEY, "local-server-needs-no-key")
            local = f"openai:{server.alias}"
            arms += [Arm(f"{local} (fallback)", local, server.url, LOCAL_KEY),
                     Arm(f"{local} alone", local, server.url, LOCAL_KEY, "")]
        for n, arm in enumerate(arms):
            rows[arm.label] = measure(arm, args.benchmark, functions, root / f"arm{n}", args)
            print(f"done: {arm.label}", file=sys.stderr, flush=True)
    except LocalModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if server is not None:
            server.stop()
    report(args, functions, rows, root)
    return 0


def title(args: argparse.Namespace) -> str:
    """The Markdown file's title: the offline engine against the real models of the arms."""
    others = ([] if args.no_local else ["a real small model (SmolLM2-135M-Instruct on llama.cpp)"])
    others += args.model
    if not others:
        return "The offline engine alone"
    named = others[0] if len(others) == 1 else ", ".join(others[:-1]) + " and " + others[-1]
    return f"The offline engine against {named}"


def report(args: argparse.Namespace, functions: list[str], rows: dict[str, dict[str, Any]],
           root: Path) -> None:
    """Print the table; with ``--markdown``, write it there too under :func:`title`."""
    with markdown_copy(args.markdown, title(args)):
        print_table(args, functions, rows, root)


def print_table(args: argparse.Namespace, functions: list[str], rows: dict[str, dict[str, Any]],
                root: Path) -> None:
    """One row per arm."""
    print(f"model compare: {args.benchmark.name} {functions} fuzz={args.fuzz_seconds}s "
          f"iterations={args.max_iterations} max_output_tokens={args.max_output_tokens} (runs in {root})\n")
    print("| model | running | errors | union lines | union branches | model calls | fallbacks | "
          "prompt tokens | completion tokens | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, r in rows.items():
        print(f"| {label} | {r['running']}/{r['targets']} | {r['errors']} | {r['lines']:.1f}% | "
              f"{r['branches']:.1f}% | "
              f"{r['calls']} | {r['fallbacks']} | {r['prompt']} | {r['completion']} | {r['seconds']:.0f} |")


if __name__ == "__main__":
    raise SystemExit(main())
