"""The README.md of an export: what the harnesses are, what they cover, how to build and run them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from logicfuzz.export import ExportResult

_HOW = """\
## Build and run them with libFuzzer

`build.sh` is an OSS-Fuzz / ClusterFuzzLite build script. It expects the library's source (the
version the run fuzzed) at `$SRC/{project}`, compiles it with `$CC $CFLAGS`, and links each
harness with `$LIB_FUZZING_ENGINE` into `$OUT`, with its dictionary and seed corpus beside it.
By hand:

```sh
export SRC=/path/to/sources          # holds {project}/
export OUT=$PWD/out CC=clang CXX=clang++
export CFLAGS="-fsanitize=address,fuzzer-no-link -g" LIB_FUZZING_ENGINE=-fsanitize=fuzzer
bash build.sh
mkdir -p corpus && unzip -o "$OUT/{first}_seed_corpus.zip" -d corpus
"$OUT/{first}" -dict="$OUT/{first}.dict" corpus
```

## Keep fuzzing them in CI

- ClusterFuzzLite: copy these files into the library's `.clusterfuzzlite/` folder, with a
  Dockerfile on the base-builder image that copies the library's source to `$SRC/{project}` and
  these files to `$SRC/` (`build.sh` looks for its harnesses beside itself).
- OSS-Fuzz: the same files go into `projects/{project}/` with that Dockerfile.
"""


def readme_text(result: ExportResult) -> str:
    """The export's README.md."""
    count = len(result.harnesses)
    lines = [
        f"# Fuzz harnesses for {result.project}, exported by LogicFuzz", "",
        f"{count} libFuzzer harness{'es' if count != 1 else ''} chosen from the {result.run_harnesses} "
        f"running harnesses of the LogicFuzz run `{result.run_dir.rsplit('/', 1)[-1]}`. Each harness's "
        "corpus was replayed through a coverage build to learn which library lines it covers; a greedy "
        "set cover then took the harness adding the most lines not yet covered until none added any, "
        f"so together they cover {result.kept_lines} of the {result.run_lines} library lines all the "
        "run's harnesses cover.", "",
    ]
    if result.left_out:
        lines += [f"Left out (the others cover every line they cover): {', '.join(result.left_out)}.", ""]
    lines += ["| harness | target function | library lines | lines it adds | seed inputs |",
              "| --- | --- | --- | --- | --- |"]
    for h in result.harnesses:
        seeds = f"{h.seeds} (minimized from {h.corpus_inputs})" if h.minimized else str(h.seeds)
        lines.append(f"| `{h.name}` | `{h.function}` | {h.lines} | {h.added_lines} | {seeds} |")
    lines += ["", "## Files", "",
              "- `NAME.c`: the harness (`LLVMFuzzerTestOneInput`).",
              "- `NAME.dict`: the dictionary the run fuzzed with (the library's own string literals).",
              "- `NAME_seed_corpus.zip`: the inputs that reached new coverage while the run fuzzed the "
              "harness, minimized with libFuzzer's `-merge=1` when that keeps every line.",
              "- `build.sh`, `project.yaml`: the build, in OSS-Fuzz / ClusterFuzzLite form.",
              "- `export.json`: the figures above."]
    if result.generated:
        lines.append("- `generated/`: files the library's configure step generated, which its source "
                     "does not ship; `build.sh` lays them over a copy of the source.")
    first = result.harnesses[0].name if result.harnesses else "NAME"
    return "\n".join(lines) + "\n\n" + _HOW.format(project=result.project, first=first)
