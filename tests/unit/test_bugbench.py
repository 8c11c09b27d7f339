"""``bench/bugbench.py``'s pure parts: the bugs-file loader, the differential oracle, the table.

Invented entries and crash reports; nothing is fetched, built or fuzzed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchkit import bugbench_load as load
from benchkit import bugbench_oracle as oracle
from benchkit import bugbench_table as table
from fuzzkit.crash import CrashReport
from tests.bench_scripts import BENCH, load_bench_script

GOOD = """\
bugs:
  - id: libfoo-CVE-2024-1
    source: libfoo=1.2-3+deb12u1
    patch: CVE-2024-1.patch
    functions: [foo_parse]
untriggered:
  - id: local-bug
    source: {path: tree}
    patch: fix.patch
    verified: false
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bugs.yaml"
    path.write_text(text)
    return path


def test_loader_reads_both_lists_and_resolves_a_path_beside_the_file(tmp_path: Path) -> None:
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "foo_parse.c").write_text("int x;\n")
    text = GOOD.replace("    functions:", "    harness: h/foo_parse.c\n    functions:")
    entries = load.load_bugs(_write(tmp_path, text))
    assert entries[0].harness == str(tmp_path.resolve() / "h" / "foo_parse.c")
    assert [(e.id, e.listed_in) for e in entries] == [("libfoo-CVE-2024-1", "bugs"),
                                                      ("local-bug", "untriggered")]
    assert entries[0].source == {"apt": "libfoo=1.2-3+deb12u1"} and entries[0].package == "libfoo"
    assert entries[0].functions == ["foo_parse"] and entries[0].verified
    assert entries[0].patch == ["CVE-2024-1.patch"]
    assert entries[1].source == {"path": str((tmp_path / "tree").resolve())} and not entries[1].verified


@pytest.mark.parametrize(("text", "said"), [
    ("bugs:\n  - {id: a, source: libfoo, patch: p.patch}\n",
     "bugs[0] (id a): source: Value error, source 'libfoo' is not pinned: write NAME=VERSION"),
    ("bugs:\n  - {id: a, source: libfoo=1, patch: ../p.patch}\n", "must be a file name in debian/patches/"),
    ("bugs:\n  - {id: a, source: libfoo=1, patch: []}\n", "or a list of them"),
    ("bugs:\n  - {id: a, source: libfoo=1}\n", "(id a): patch: Field required"),
    ("bugs:\n  - {id: a, source: libfoo=1, patch: p, colour: red}\n",
     "colour: Extra inputs are not permitted"),
    ("bugs:\n  - {id: 'a b', source: libfoo=1, patch: p}\n", "must be letters, digits"),
    ("bugs:\n  - {id: a, source: 'Libfoo=1', patch: p}\n", "is not a Debian source package"),
    ("bugs:\n  - {id: a, source: {git: x}, patch: p}\n", "NAME=VERSION or a mapping {path: DIR}"),
    ("bugs:\n  - just-a-string\n", "bugs[0]: an entry is a mapping with id, source and patch"),
    ("bugs:\n  - {id: a, source: x=1, patch: p}\n  - {id: a, source: y=1, patch: q}\n",
     "id(s) used twice: a"),
    ("bugz: []\n", "expected a mapping with a `bugs:` list"),
    ("bugs: []\nextra: 1\n", "unknown key(s) extra"),
    ("bugs: {id: a}\n", "`bugs:` must be a list"),
    ("bugs: [\n", "cannot read it as YAML"),
    ("bugs:\n  - {id: a, source: x=1, patch: p, harness: nowhere.c}\n", "(id a): harness "),
])
def test_a_bad_entry_says_where_and_what(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(load.BugsFileError) as err:
        load.load_bugs(_write(tmp_path, text))
    assert said in str(err.value)


def test_a_bad_bugs_file_exits_2_with_one_clear_line(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench_script("bugbench")
    path = _write(tmp_path, "bugs:\n  - {id: a, source: libfoo, patch: p.patch}\n")
    assert bench.main([str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bugbench.py: error: ") and "is not pinned: write NAME=VERSION" in err
    assert bench.main([str(_write(tmp_path, GOOD)), "--sides", "mine"]) == 2
    assert "--sides takes a choice of logicfuzz, upstream, function, not mine" in capsys.readouterr().err
    assert bench.main([str(path.parent / "bugs.yaml"), "--only", "nope", "--repeats", "0"]) == 2
    assert "--repeats must be at least 1" in capsys.readouterr().err


def _crash(kind: str = "heap-buffer-overflow") -> CrashReport:
    return CrashReport(kind=kind, summary=f"ERROR: AddressSanitizer: {kind}", signature=f"{kind}@foo_parse")


def test_the_oracle_tells_the_known_bug_from_other_crashes() -> None:
    assert oracle.classify(_crash(), None) == oracle.KNOWN  # crashes vulnerable, not fixed
    assert oracle.classify(_crash(), _crash("SEGV")) == oracle.OTHER  # crashes both
    assert oracle.classify(None, None) == oracle.NONE  # does not replay
    assert oracle.classify(None, _crash()) == oracle.NONE


def test_patched_files_are_read_from_the_patch(tmp_path: Path) -> None:
    patch = tmp_path / "fix.patch"
    patch.write_text("--- a/src/foo.c\n+++ b/src/foo.c\n@@ -1 +1 @@\n-a\n+b\n"
                     "--- /dev/null\n+++ b/test/new.xml\n@@ -0,0 +1 @@\n+x\n")
    assert oracle.patched_files([patch]) == ["src/foo.c", "test/new.xml"]


def test_the_runs_verdict_on_the_known_bug_comes_from_its_audit_log(tmp_path: Path) -> None:
    events = tmp_path / "run" / "foo" / "foo_parse" / "events.jsonl"
    events.parent.mkdir(parents=True)
    overflow = "heap-buffer-overflow@foo_parse<LLVMFuzzerTestOneInput"
    lines = [{"type": "crash.triaged", "data": {"signature": overflow}},
             {"type": "crash.verdict", "data": {"verdict": "harness_misuse", "feasible": False}},
             {"type": "crash.triaged", "data": {"signature": "leak@foo_new"}},
             {"type": "crash.verdict", "data": {"verdict": "library_bug", "feasible": True}}]
    events.write_text("\n".join(json.dumps(e) for e in lines) + "\nnot json\n")
    verdicts = oracle.run_verdicts(tmp_path / "run")
    assert [v["verdict"] for v in verdicts] == ["harness_misuse", "library_bug"]
    known = [{"signature": "heap-buffer-overflow@foo_parse<foo_read<main"}]
    assert oracle.verdict_for(known, verdicts) == "harness_misuse"
    assert oracle.verdict_for([{"signature": "SEGV@foo_parse"}], verdicts) == "not met"


def _row(bug: str, lf: int | None, up: int, **extra: object) -> dict[str, object]:
    sides: dict[str, object] = {"upstream": {"built": ["f.c"], **table.side_summary(
        [{"first_find_cpu_seconds": 40.0 + i} for i in range(up)] + [{}] * (2 - up))}}
    if lf is not None:
        sides["logicfuzz"] = {"built": ["a/harness.c"], **table.side_summary(
            [{"first_find_cpu_seconds": 100.0}] * lf + [{}] * (2 - lf))}
    return {"id": bug, "source_text": "libfoo=1", "patch": "p.patch", "sides": sides,
            "patched_built_files": ["foo.c"], **extra}


def test_the_table_shows_finds_times_verdicts_and_totals() -> None:
    rows = [_row("bug-a", 2, 1, logicfuzz_verdict="library_bug", functions=["foo_parse"]),
            _row("bug-b", 0, 2, logicfuzz_verdict="not met"),
            {"id": "bug-c", "source_text": "libbar=2", "patch": "q.patch", "error": "no | such",
             "stage": "build"}]
    text = table.markdown(rows)
    assert "| bug-a * | libfoo=1 | p.patch | 2/2 | 1/2 | 100 / 40 | library_bug |  |" in text
    assert "| bug-b | libfoo=1 | p.patch | 0/2 | 2/2 | - / 40 | not met |  |" in text
    assert "| bug-c | libbar=2 | q.patch | - | - | - / - | - | failed in build: no / such |" in text
    assert ("Total: 3 bugs, 2 measured; found by LogicFuzz 1 (1 in every repeat), by the library's own "
            "harness set 2 (1 in every repeat); LogicFuzz's run judged the known bug a library bug for 1."
            ) in text
    assert "* LogicFuzz ran on the entry's named functions" in text
    assert table.summarize(rows)["failed"] == 1
    assert table.side_summary([{"first_find_cpu_seconds": 10.0}, {"first_find_cpu_seconds": 30.0}, {}]) == {
        "found": 2, "repeats": 3, "median_cpu_seconds_to_find": 20.0}


def test_the_function_harness_column_shows_only_when_measured() -> None:
    row = _row("bug-a", None, 0)
    assert "function harness found" not in table.markdown([row])
    row["sides"]["function"] = {"built": ["h/f.c"], **table.side_summary([{"first_find_cpu_seconds": 7.0}])}  # type: ignore[index]
    text = table.markdown([row])
    assert "| bug-a | libfoo=1 | p.patch | - | 0/2 | 1/1 | - / - / 7 | - |  |" in text
    assert "by the patched function's harness 1;" in text


def test_the_shipped_dev_list_loads_pinned_with_its_harnesses() -> None:
    entries = load.load_bugs(BENCH / "bugs" / "dev.yaml")
    measured = [e for e in entries if e.listed_in == "bugs"]
    assert measured and all(e.verified for e in measured)
    assert all("=" in e.source["apt"] for e in entries)
    assert all(Path(e.harness).is_file() for e in entries if e.harness)


def test_a_fix_in_parts_is_reversed_last_part_first(tmp_path: Path) -> None:
    import subprocess

    shipped = tmp_path / "shipped"
    (shipped / "debian" / "patches").mkdir(parents=True)
    versions = ["one\n", "two\n", "three\n"]  # before the fix, after part 1, after part 2 (as shipped)
    patches = []
    for i in (1, 2):
        old, new = tmp_path / f"v{i - 1}", tmp_path / f"v{i}"
        old.write_text(versions[i - 1])
        new.write_text(versions[i])
        diff = subprocess.run(["diff", "-u", "--label", "a/f.txt", "--label", "b/f.txt", str(old), str(new)],
                              capture_output=True, text=True, check=False).stdout
        patches.append(shipped / "debian" / "patches" / f"part{i}.patch")
        patches[-1].write_text(diff)
    (shipped / "f.txt").write_text(versions[2])
    tree = oracle.reversed_tree(shipped, patches, tmp_path / "out" / "vulnerable")
    assert (tree / "f.txt").read_text() == "one\n" and (shipped / "f.txt").read_text() == "three\n"
    with pytest.raises(Exception, match=r"(?s)part1.patch` failed.*list it too"):
        oracle.reversed_tree(shipped, patches[:1], tmp_path / "out" / "only-part1")


def test_every_library_bug_verdict_is_listed_with_its_review(tmp_path: Path) -> None:
    run = tmp_path / "run" / "proj"
    for target, sig in (("parse", "heap-buffer-overflow@parse_string<parse_object"),
                        ("set_alpha", "heap-buffer-overflow@set_alpha<LLVMFuzzerTestOneInput")):
        (run / target).mkdir(parents=True)
        events = [{"type": "crash.triaged", "data": {"signature": sig}},
                  {"type": "crash.verdict", "data": {"verdict": "library_bug", "feasible": True}}]
        (run / target / "events.jsonl").write_text("\n".join(json.dumps(e) for e in events))
        (run / target / "result.json").write_text(json.dumps({"crash": {"signature": sig,
                                                                        "reproducer": f"/r/{target}"}}))
    known = [{"signature": "heap-buffer-overflow@parse_string<parse_object<parse_value", "class": "known"}]
    found = oracle.library_bug_verdicts(tmp_path / "run", known)
    assert [(v["target"], v["known_bug"], v["reproducer"]) for v in found] == [
        ("parse", True, "/r/parse"), ("set_alpha", False, "/r/set_alpha")]
    rows = [{"id": "b1", "library_bug_verdicts": found}]
    oracle.apply_reviews(rows, {"b1 heap-buffer-overflow@set_alpha<LLVMFuzzerTestOneInput":
                                {"review": "misuse", "why": "the count was not the buffer's"}})
    assert found[1]["review"] == "misuse" and "review" not in found[0]
    text = table._other_verdicts(rows)
    assert "the known bug 1 and other crashes 1" in text[1]
    assert ("set_alpha<LLVMFuzzerTestOneInput` (set_alpha; replays on: not tried): misuse "
            "(the count was not the buffer's)") in text[2]


def test_a_verdict_replaying_on_the_vulnerable_build_alone_is_the_known_bug() -> None:
    bench = load_bench_script("bugbench")
    verdicts = [{"signature": "SEGV@put_tile<get_strip", "known_bug": False, "replay": "vulnerable only"},
                {"signature": "leak@x", "known_bug": False, "replay": "both builds"}]
    known = bench.known_by_replay(verdicts)
    assert [v["known_bug"] for v in verdicts] == [True, False]
    assert known == [{"signature": "SEGV@put_tile<get_strip", "class": "known"}]
    judged = [{"signature": "SEGV@put_tile<get_strip<img_read", "verdict": "library_bug"}]
    assert oracle.verdict_for(known, judged) == "library_bug"
