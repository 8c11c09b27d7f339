"""A pattern buffer its constructor makes empty is compiled before a search reads it.

A regex library's GNU-style API (``int pk_alloc_pattern(struct pk_pattern **out)``,
``int pk_compile_pattern(const char *pattern, int len, struct pk_pattern *buf, char *err)``,
``int pk_match(struct pk_pattern *buf, const char *text, int len, int start, struct pk_regs
*regs)``): the harness allocated the buffer and matched on it at once, and the library followed
the NULL program an empty buffer holds (SEGV in the matcher, judged harness misuse on every
run). The compiler, found by its name and shape (text, a non-const pointer to the buffer, a
status), now runs first, on a share of the input when the target takes the input itself.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
struct pk_pattern { unsigned char *program; int used; };
struct pk_regs { int num; int *beg; int *end; };
int pk_alloc_pattern(struct pk_pattern **out);
int pk_compile_pattern(const char *pattern, int len, struct pk_pattern *buf, char *err);
int pk_match(struct pk_pattern *buf, const char *text, int len, int start, struct pk_regs *regs);
void pk_free_pattern(struct pk_pattern *buf);
void pk_free_regs(struct pk_regs *regs);
"""

TYPES = render_types("""```c
struct pk_pattern { unsigned char *program; int used; };
struct pk_regs { int num; int *beg; int *end; };
```
Release functions:
- pk_free_pattern releases struct pk_pattern * (parameter type)
""")


def _draft(target_name: str) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == target_name)
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        return write_harness(target, decls, ["pk.h"], arche, default_skeleton(arche)).code


def test_the_empty_buffer_is_compiled_from_a_share_of_the_input_before_the_match() -> None:
    code = _draft("pk_match")
    made = re.search(r"pk_alloc_pattern\(&(\w+)\)", code)
    assert made, code
    buf = made.group(1)
    compiled = re.search(rf"pk_compile_pattern\(\(const char \*\)(\w+), [^;]*, {buf}, [^;]*\);", code)
    assert compiled and made.start() < compiled.start() < code.index("pk_match("), code
    # the pattern is a share of the input, the subject the rest of it
    assert re.search(rf"{compiled.group(1)} = lf_take_part\(", code), code
    assert re.search(r"pk_match\([^;]*\(const char \*\)\w+, \(int\)", code), code


def test_the_compiler_itself_as_target_is_not_called_twice() -> None:
    code = _draft("pk_compile_pattern")
    assert code.count("pk_compile_pattern(") == 1, code


def test_the_harness_compiles(tmp_path: Path) -> None:
    (tmp_path / "pk.h").write_text(API)
    (tmp_path / "harness.c").write_text(_draft("pk_match"))
    cmd = ["clang", "-fsyntax-only", "-Wall", "-Werror", f"-I{tmp_path}", str(tmp_path / "harness.c")]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_container_a_search_filled_is_released_whatever_the_search_returned() -> None:
    """A mismatch returns -1 after the search resized the registers: they leaked at each miss."""
    code = _draft("pk_match")
    assert re.search(r"pk_match\([^;]*&regs\);\n(?:.*\n)*?\s*regs_ready = 1;", code), code
    assert "if (result >= 0) regs_ready = 1;" not in code, code
    assert "if (regs_ready) pk_free_regs(&regs);" in code, code
