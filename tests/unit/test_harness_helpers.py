"""Which files beside an upstream fuzz harness it needs (fuzzkit.detect_tree.harness_helpers)."""

from __future__ import annotations

from pathlib import Path

from fuzzkit.detect_tree import harness_helpers


def test_only_the_helpers_the_harness_calls_are_taken(tmp_path: Path) -> None:
    (tmp_path / "fuzz_one.c").write_text(
        '#include "kv.h"\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) {\n'
        "  kv_fuzz_init();\n  return kv_parse((const char *)d, (int)n);\n}\n")
    (tmp_path / "fuzz_util.c").write_text(
        "static int count;\nvoid kv_fuzz_init(void) { kv_fuzz_reset(&count); }\n")
    (tmp_path / "fuzz_reset.c").write_text("void\nkv_fuzz_reset(int *c)\n{\n  *c = 0;\n}\n")
    # A test program, a fragment meant to be #included (no declarations of its own) and an
    # unrelated helper: none of them is the harness's business.
    (tmp_path / "speedtest.c").write_text("int main(int argc, char **argv) { return 0; }\n")
    (tmp_path / "fragment.c").write_text("  kv_store *db = open_it();\n  use(db);\n")
    (tmp_path / "other_util.c").write_text("int kv_other(void) { return 1; }\n")
    (tmp_path / "static_only.c").write_text("static void kv_parse(void) {}\n")
    helpers = harness_helpers(tmp_path / "fuzz_one.c")
    assert [p.name for p in helpers] == ["fuzz_reset.c", "fuzz_util.c"]
