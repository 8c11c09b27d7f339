"""The two builds of a known bug and the differential oracle that tells it from anything else.

The source as Debian ships it has the fix applied: it is the fixed tree. The same tree with the
patch reversed (``patch -R -p1``, in a copy of the configured tree when the build system made
one) is the vulnerable tree; both are built with the one recipe detection found for the source
as shipped, so the two builds differ by the fix alone.

A crash input found on the vulnerable build is replayed alone on the same harness built on
both: it crashes the vulnerable build and not the fixed one, it is the known bug (as ARVO and
Magma judge "found"); it crashes both, it is some other crash; it does not crash the vulnerable
build alone, it counts as nothing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from fuzzkit.crash import CrashReport
from fuzzkit.errors import ToolchainError
from fuzzkit.library import BuildRecipe, LibraryBuild, build_library
from fuzzkit.reproducer import replay_input

KNOWN, OTHER, NONE = "known", "other", "none"
_MARKER = "bugbench-tree.json"


def classify(on_vulnerable: CrashReport | None, on_fixed: CrashReport | None) -> str:
    """The differential oracle: ``known`` (vulnerable only), ``other`` (both), ``none`` (no replay)."""
    if on_vulnerable is None:
        return NONE
    return OTHER if on_fixed is not None else KNOWN


def patch_file(root: Path, name: str) -> Path:
    """``root/debian/patches/NAME``, or an error listing what is there."""
    folder = root / "debian" / "patches"
    path = folder / name
    if not path.is_file():
        there = sorted(p.name for p in folder.iterdir() if p.name != "series") if folder.is_dir() else []
        raise ToolchainError(f"{name} is not in {folder}",
                             f"pick one of: {', '.join(there)}" if there else
                             "this source has no debian/patches/: pick another version")
    return path


def patched_files(patches: list[Path]) -> list[str]:
    """The files the patches change, as paths from the source root (``-p1``)."""
    names = [n for patch in patches
             for n in re.findall(r"^\+\+\+ (\S+)", patch.read_text(errors="replace"), flags=re.MULTILINE)]
    return sorted({n.split("/", 1)[1] for n in names if "/" in n and n != "/dev/null"})


def _reverse(tree: Path, patch: Path) -> None:
    cmd = ["patch", "-R", "-p1", "-s", "--no-backup-if-mismatch", "-f", "-i", str(patch)]
    done = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = (done.stdout + done.stderr).strip().splitlines()
        raise ToolchainError(f"`patch -R -p1 < {patch.name}` failed in {tree}: " + "; ".join(said[:3]),
                             "a later patch of the series touches the same lines: list it too, after "
                             "this one (`patch: [A, B]`), or pick another patch or version")


def reversed_tree(origin: Path, patches: list[Path], dest: Path) -> Path:
    """A copy of ``origin`` at ``dest`` with ``patches`` reversed, the last first; kept for later sittings.

    ``patches`` are in the order Debian applies them (a fix in parts, or a fix and its regression fix).
    """
    wanted = {"origin": str(origin), "patches": [str(p) for p in patches]}
    marker = dest / _MARKER
    if marker.is_file() and json.loads(marker.read_text()) == wanted:
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    tmp = dest.with_name(f".{dest.name}-tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(origin, tmp, symlinks=True)
    try:
        for patch in reversed(patches):
            _reverse(tmp, patch)
    except ToolchainError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    (tmp / _MARKER).write_text(json.dumps(wanted))
    tmp.rename(dest)
    return dest


def library_pair(root: Path, recipe: BuildRecipe, patches: list[Path],
                 dest: Path) -> tuple[LibraryBuild, LibraryBuild]:
    """(vulnerable, fixed) builds with one recipe: the tree it builds, with the patches reversed, and as is.

    ``root`` is the source as shipped; the recipe's configured copy of it, if detection made
    one, is what gets copied, so the build system's generated files are the same for both.
    """
    base = Path(recipe.root) if recipe.root else root
    tree = reversed_tree(base, patches, dest / base.name)
    vulnerable = build_library(tree, recipe.model_copy(update={"root": str(tree) if recipe.root else None}))
    return vulnerable, build_library(root, recipe)


def built_files_patched(patches: list[Path], lib: LibraryBuild) -> list[str]:
    """The files the patches change that the library's build compiles or includes."""
    built = {Path(p).resolve() for p in [*lib.sources, *lib.coverage_files, *lib.headers]}
    root = Path(lib.root).resolve()
    return [f for f in patched_files(patches) if (root / f).resolve() in built]


def replay_both(unit: Path, vulnerable_bin: Path, fixed_bin: Path | None, work: Path,
                harness_name: str) -> dict[str, Any]:
    """One crash input replayed alone on both builds, and what the oracle makes of it."""
    on_v, _ = replay_input(vulnerable_bin, unit, work, harness_name=harness_name)
    on_f = None
    if on_v is not None and fixed_bin is not None:
        on_f, _ = replay_input(fixed_bin, unit, work, harness_name=harness_name)
    verdict = classify(on_v, on_f) if fixed_bin is not None or on_v is None else "unchecked"
    return {"input": str(unit), "class": verdict,
            "kind": on_v.kind if on_v else "", "signature": on_v.signature if on_v else "",
            "fixed_kind": on_f.kind if on_f else ""}


def top_of(signature: str) -> tuple[str, str]:
    """(kind, innermost project function) of a crash signature ``kind@f1<f2<f3``."""
    kind, _, frames = signature.partition("@")
    return kind, frames.split("<")[0]


def run_verdicts(run_dir: Path) -> list[dict[str, Any]]:
    """Every crash a ``logicfuzz run`` judged: target, signature, verdict (from ``events.jsonl``)."""
    found: list[dict[str, Any]] = []
    for events in sorted(run_dir.glob("*/*/events.jsonl")):
        signature = ""
        for line in events.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            data = event.get("data") or {}
            if event.get("type") == "crash.triaged":
                signature = str(data.get("signature") or "")
            elif event.get("type") == "crash.verdict":
                found.append({"target": events.parent.name, "signature": signature,
                              "verdict": data.get("verdict") or "", "feasible": data.get("feasible")})
    return found


def verdict_for(known: list[dict[str, Any]], verdicts: list[dict[str, Any]]) -> str:
    """What LogicFuzz's run judged the known bug: the verdicts of its crashes with the same kind
    and innermost library frame, or ``not met`` when its run never crashed there.
    """
    keys = {top_of(c["signature"]) for c in known if c.get("signature")}
    said = sorted({v["verdict"] or "unjudged" for v in verdicts if top_of(v["signature"]) in keys})
    return ", ".join(said) if said else "not met"


def library_bug_verdicts(run_dir: Path, known: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every distinct crash LogicFuzz's run judged a library bug, marked whether it is the known bug.

    Each with its reproducer when the target's final record still holds it (an earlier
    version's crash keeps only its signature).
    """
    keys = {top_of(c["signature"]) for c in known if c.get("signature")}
    out: list[dict[str, Any]] = []
    for v in run_verdicts(run_dir):
        seen = any(o["target"] == v["target"] and o["signature"] == v["signature"] for o in out)
        if v["verdict"] != "library_bug" or seen:
            continue
        reproducer = ""
        for result in run_dir.glob(f"*/{v['target']}/result.json"):
            crash = (json.loads(result.read_text(errors="replace")).get("crash") or {})
            if crash.get("signature") == v["signature"]:
                reproducer = str(crash.get("reproducer") or "")
        out.append({"target": v["target"], "signature": v["signature"], "reproducer": reproducer,
                    "known_bug": top_of(v["signature"]) in keys})
    return out


def apply_reviews(rows: list[dict[str, Any]], reviews: dict[str, Any]) -> None:
    """Attach the hand reviews (``bench/bugs/reviews.yaml``) to the verdicts that are not the known bug."""
    for row in rows:
        for v in row.get("library_bug_verdicts") or []:
            if not v.get("known_bug"):
                got = reviews.get(f"{row['id']} {v['signature']}") or {}
                v["review"], v["why"] = got.get("review", "unreviewed"), got.get("why", "")
