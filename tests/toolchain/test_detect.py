from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from fuzzkit.detect import BuildSpec, detect_build, resolve_recipe
from fuzzkit.detect_make import parse_make_dry_run
from fuzzkit.errors import ToolchainError
from fuzzkit.header_includes import harness_headers
from fuzzkit.library import build_library
from fuzzkit.source import SourceSpec, fetch_source
from fuzzkit.tools import tool

pytestmark = pytest.mark.toolchain


def _symbols(archive: str) -> str:
    return subprocess.run(["nm", archive], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def zlib_root(cache: Path) -> Path:
    return fetch_source(SourceSpec(apt="zlib"), cache=cache)


@pytest.fixture(scope="module")
def libyaml_root(cache: Path) -> Path:
    return fetch_source(SourceSpec(apt="libyaml"), cache=cache)


def test_sources_detection_on_cjson_zlib_libyaml(
    cjson_root: Path, zlib_root: Path, libyaml_root: Path, cache: Path
) -> None:
    cjson = detect_build(cjson_root, cache=cache)
    assert cjson.system == "sources" and cjson.recipe.root is None
    assert cjson.recipe.sources == ["cJSON.c", "cJSON_Utils.c"]  # test.c defines main
    assert cjson.recipe.headers == ["cJSON.h", "cJSON_Utils.h"]

    zlib = detect_build(zlib_root, cache=cache).recipe
    # crc32.c and inflate.c mention main() in an #ifdef and a comment: still library code.
    assert {"crc32.c", "inflate.c", "gzread.c"} <= set(zlib.sources) and len(zlib.sources) == 15
    assert zlib.headers == ["zlib.h"] and zlib.defines == []  # zconf.h declares no function

    yaml = detect_build(libyaml_root, cache=cache).recipe
    assert yaml.sources == [
        f"src/{n}.c" for n in "api dumper emitter loader parser reader scanner writer".split()
    ]
    assert yaml.defines == [
        "YAML_VERSION_MAJOR=0", "YAML_VERSION_MINOR=2", "YAML_VERSION_PATCH=5", 'YAML_VERSION_STRING="0.2.5"'
    ]  # fmt: skip
    assert yaml.headers == ["include/yaml.h"] and "include" in yaml.include_dirs
    lib = build_library(libyaml_root, yaml, cache=cache)
    assert " T yaml_parser_parse" in _symbols(lib.fuzz_archive)


def test_cmake_and_autotools_detection(libyaml_root: Path, zlib_root: Path, cache: Path) -> None:
    cmake = detect_build(libyaml_root, system="cmake", cache=cache)
    recipe = cmake.recipe
    assert recipe.root and Path(recipe.root).name == libyaml_root.name and Path(recipe.root) != libyaml_root
    assert len(recipe.sources) == 8 and "HAVE_CONFIG_H" in recipe.defines
    assert (Path(recipe.root) / ".logicfuzz-build" / "include" / "config.h").is_file()  # generated
    assert not (libyaml_root / ".logicfuzz-build").exists()  # the shared tree is untouched

    auto = detect_build(zlib_root, system="autotools", cache=cache).recipe
    assert "_LARGEFILE64_SOURCE=1" in auto.defines
    assert len(auto.sources) == 15 and not any("example" in s or "minigzip" in s for s in auto.sources)
    again = detect_build(zlib_root, system="autotools", cache=cache)
    assert again.recipe == auto  # cached


MAKEFILE = """\
CFLAGS = -O2 -DFOO_LEVEL=3
all: libfoo.a footool
libfoo.a: foo.o bar.o
\t$(AR) rcs $@ foo.o bar.o
footool: tool.o libfoo.a
\t$(CC) -o $@ tool.o libfoo.a
%.o: %.c
\t$(CC) $(CFLAGS) -Iinclude -c -o $@ $<
"""


def _make_project(root: Path) -> None:
    (root / "include").mkdir(parents=True)
    (root / "include" / "foo.h").write_text("int foo_parse(const char *text, int len);\nint bar(int x);\n")
    (root / "foo.c").write_text(
        '#include "foo.h"\n#ifndef FOO_LEVEL\n#define FOO_LEVEL 1\n#endif\n'
        "int foo_parse(const char *t, int n) { return n + FOO_LEVEL; }\n"
    )
    (root / "bar.c").write_text('#include "foo.h"\nint bar(int x) { return x * 2; }\n')
    (root / "tool.c").write_text('#include "foo.h"\nint main(void) { return bar(1); }\n')
    (root / "Makefile").write_text(MAKEFILE)


def test_plain_makefile_project(tmp_path: Path) -> None:
    root = tmp_path / "foo-1.0"
    _make_project(root)
    found = detect_build(root, system="make", cache=tmp_path / "cache")
    assert found.recipe.sources == ["bar.c", "foo.c"]  # the tool is not library code
    assert found.recipe.defines == ["FOO_LEVEL=3"] and found.recipe.headers == ["include/foo.h"]
    assert "include" in found.recipe.include_dirs
    lib = build_library(root, found.recipe, cache=tmp_path / "cache")
    assert " T foo_parse" in _symbols(lib.fuzz_archive) and " T main" not in _symbols(lib.fuzz_archive)


def test_make_dry_run_parsing() -> None:
    top = Path("/src/proj")
    text = textwrap.dedent("""\
        make: Entering directory '/src/proj'
        make[1]: Entering directory '/src/proj/lib'
        sh ../libtool --tag=CC --mode=compile clang -DHAVE_CONFIG_H -I. -I../include -g -c -o api.lo api.c
        clang -DX=1 -std=c99 -pthread -c a.c b.c
        ar rcs libpart.a *.o
        sh ../libtool --tag=CC --mode=link clang -g -o libproj.la -rpath /usr/lib api.lo -lm
        make[1]: Leaving directory '/src/proj/lib'
        make[1]: Entering directory '/src/proj/tests'
        clang -I../include -c -o t.o t.c && clang -o t t.o ../lib/libproj.la
        """)
    commands = parse_make_dry_run(text, top)
    assert set(commands.compiles) == {Path("/src/proj/lib/api.lo"), Path("/src/proj/lib/a.o"),
                                      Path("/src/proj/lib/b.o"), Path("/src/proj/tests/t.o")}  # fmt: skip
    api = commands.compiles[Path("/src/proj/lib/api.lo")]
    assert api.source == Path("/src/proj/lib/api.c")
    assert api.flags == ["-DHAVE_CONFIG_H", "-I/src/proj/lib", "-I/src/proj/include"]
    assert commands.compiles[Path("/src/proj/lib/a.o")].flags == ["-DX=1", "-pthread"]
    members = {(str(d), m) for d, m in commands.members}
    assert members == {("/src/proj/lib", "*.o"), ("/src/proj/lib", "api.lo")}  # not the test program


def test_dry_run_reads_compiles_of_a_libtool_variable_left_unset() -> None:
    """`$(LIBTOOL) --mode=compile --tag=CC $(CC) ...` where only a packaging script sets LIBTOOL."""
    top = Path("/src/ix")
    text = textwrap.dedent("""\
        make[1]: Entering directory '/src/ix/src'
        mode=compile --tag=CC gcc -std=gnu99 -DIX_LINUX -c ixapi.c -o ixapi.o
        mode=link --tag=CC gcc -o libix.la ixapi.lo -rpath /usr/lib
        """)
    commands = parse_make_dry_run(text, top)
    api = commands.compiles[Path("/src/ix/src/ixapi.o")]
    assert api.source == Path("/src/ix/src/ixapi.c") and api.flags == ["-DIX_LINUX"], api
    assert {m for _, m in commands.members} == {"ixapi.lo"}


def test_dry_run_reads_compiles_through_a_quieting_shell_wrapper() -> None:
    """Some projects run libtool and the compiler through a script that shortens their output."""
    top = Path("/src/fy")
    text = textwrap.dedent("""\
        make[1]: Entering directory '/src/fy/src'
        /bin/bash /src/fy/build-aux/shave-libtool '/bin/bash ../libtool'  --tag=CC   --mode=compile \
          /bin/bash /src/fy/build-aux/shave cc /usr/bin/clang -DHAVE_CONFIG_H -I. -I../include -g -c \
          -o lib/libfy_la-parse.lo `test -f 'lib/parse.c' || echo './'`lib/parse.c
        /bin/bash /src/fy/build-aux/shave-libtool '/bin/bash ../libtool' --tag=CC --mode=link \
          /bin/bash /src/fy/build-aux/shave cc /usr/bin/clang -g -o libfy.la -rpath /usr/lib \
          lib/libfy_la-parse.lo
        """)
    commands = parse_make_dry_run(text, top)
    parse = commands.compiles[Path("/src/fy/src/lib/libfy_la-parse.lo")]
    assert parse.source == Path("/src/fy/src/lib/parse.c")
    assert parse.flags == ["-DHAVE_CONFIG_H", "-I/src/fy/src", "-I/src/fy/include"]
    assert {(str(d), m) for d, m in commands.members} == {("/src/fy/src", "lib/libfy_la-parse.lo")}


def test_generated_header_defers_to_the_build_system(tmp_path: Path) -> None:
    root = tmp_path / "gen"
    root.mkdir()
    (root / "gen.h").write_text("int gen_decode(const unsigned char *data, unsigned long size);\n")
    (root / "gen_config.h.in").write_text("#define GEN_LIMIT @LIMIT@\n")
    (root / "gen.c").write_text(
        '#include "gen_config.h"\n#include "gen.h"\n'
        "int gen_decode(const unsigned char *d, unsigned long n) { return n > GEN_LIMIT ? d[0] : 0; }\n"
    )
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(gen C)\nset(LIMIT 7)\n"
        "configure_file(gen_config.h.in ${CMAKE_CURRENT_BINARY_DIR}/gen_config.h)\n"
        "add_library(gen gen.c)\ntarget_include_directories(gen PRIVATE ${CMAKE_CURRENT_BINARY_DIR})\n"
        "add_executable(gen_test gen.c)\n"
    )
    found = detect_build(root, cache=tmp_path / "cache")
    assert found.system == "cmake" and found.recipe.sources == ["gen.c"]
    assert found.recipe.headers == ["gen.h"]
    lib = build_library(root, found.recipe, cache=tmp_path / "cache")
    assert " T gen_decode" in _symbols(lib.fuzz_archive)


def test_undetectable_tree_says_what_to_write(tmp_path: Path) -> None:
    (tmp_path / "README").write_text("nothing to build here\n")
    (tmp_path / "Makefile").write_text("all:\n\t@echo nothing\n")
    with pytest.raises(ToolchainError) as info:
        detect_build(tmp_path, cache=tmp_path / "cache")  # a cache inside the tree is not copied
    assert "sources:" in str(info.value) and "make: `make -n` showed no compile" in str(info.value)
    assert "build:" in info.value.hint


def test_build_section_forms(tmp_path: Path) -> None:
    root = tmp_path / "foo-1.0"
    _make_project(root)
    (root / "Makefile").unlink()  # leave the `sources` detector to do it
    (root / "win32_port.c").write_text("#include <windows.h>\nint port(void) { return 0; }\n")
    cache = tmp_path / "cache"
    explicit = resolve_recipe(root, {"sources": ["foo.c"], "defines": ["FOO_LEVEL=1"]}, cache)
    assert explicit.sources == ["foo.c"] and explicit.headers == ["include/foo.h"]  # headers found
    detected = resolve_recipe(root, None, cache)
    assert detected.sources == ["bar.c", "foo.c"]  # win32_port.c needs a platform header
    assert detect_build(root, cache=cache).notes == [
        "dropped win32_port.c: needs windows.h (a platform header)"
    ]
    tuned = resolve_recipe(root, BuildSpec(auto=True, exclude=["bar.c"], defines=["FOO_LEVEL=9"]), cache)
    assert tuned.exclude == ["bar.c"] and tuned.defines[-1] == "FOO_LEVEL=9"
    lib = build_library(root, tuned, cache=cache)
    assert [Path(s).name for s in lib.sources] == ["foo.c"]
    with pytest.raises(ValueError):
        BuildSpec.model_validate({"sources": ["a.c"], "colour": "red"})


def test_library_in_a_subdirectory(tmp_path: Path) -> None:
    root = tmp_path / "pkg-2.0"
    (root / "debian").mkdir(parents=True)
    (root / "debian" / "rules").write_text("#!/usr/bin/make -f\n")
    _make_project(root / "foo")
    (root / "foo" / "Makefile").unlink()
    found = detect_build(root, cache=tmp_path / "cache")
    assert found.recipe.sources == ["foo/bar.c", "foo/foo.c"]
    assert found.recipe.headers == ["foo/include/foo.h"] and "foo/include" in found.recipe.include_dirs


def test_assembly_the_c_sources_call_is_built(tmp_path: Path) -> None:
    """A decoder whose fast loop is in a .S file: leaving the .S out dropped the whole decoder."""
    root = tmp_path / "asmlib-1.0"
    (root / "lib" / "decode").mkdir(parents=True)
    (root / "Makefile").write_text("all:\n\t$(MAKE) -C lib\n")
    (root / "lib" / "asmlib.h").write_text("int asm_decode(const unsigned char *in, int n);\n"
                                           "int asm_encode(int x);\n")
    (root / "lib" / "encode.c").write_text('#include "asmlib.h"\nint asm_encode(int x) { return x + 1; }\n')
    (root / "lib" / "decode" / "decode.c").write_text(
        '#include "../asmlib.h"\nextern int asm_fast_loop(int n);\n'
        "int asm_decode(const unsigned char *in, int n) { return in ? asm_fast_loop(n) : -1; }\n")
    (root / "lib" / "decode" / "fast_amd64.S").write_text(
        "#if defined(__x86_64__)\n.text\n.globl asm_fast_loop\nasm_fast_loop:\n"
        "  movl %edi, %eax\n  ret\n#endif\n"
        '.section .note.GNU-stack,"",@progbits\n')
    (root / "lib" / "decode" / "fast_other.S").write_text(".text\n  this is not an instruction\n")
    found = detect_build(root, system="sources", cache=tmp_path / "cache")
    assert found.recipe.sources == ["lib/decode/decode.c", "lib/decode/fast_amd64.S", "lib/encode.c"]
    assert any("fast_other.S" in n and "does not assemble" in n for n in found.notes)
    lib = build_library(root, found.recipe, cache=tmp_path / "cache")
    assert " T asm_decode" in _symbols(lib.fuzz_archive) and " T asm_fast_loop" in _symbols(lib.fuzz_archive)
    assert all(not f.endswith(".S") for f in lib.coverage_files)


def test_a_source_written_and_compiled_by_one_suffix_rule_is_made_through_its_object(tmp_path: Path) -> None:
    # `.tpl.o:` writes `_ext.c` from `ext.tpl` and compiles it in the same recipe: make has no
    # rule for `_ext.c` alone, so the detector asks for `ext.o`.
    root = tmp_path / "tpl-1.0"
    root.mkdir()
    (root / "tpl.h").write_text("int tpl_parse(const char *s, int n);\nint tpl_ext(int x);\n")
    (root / "tpl.c").write_text(
        '#include "tpl.h"\nint tpl_parse(const char *s, int n) { return n ? tpl_ext(s[0]) : 0; }\n'
    )
    (root / "ext.tpl").write_text("int tpl_ext(int x) { return x + 1; }\n")
    (root / "Makefile").write_text(
        ".SUFFIXES: .tpl\n.tpl.o:\n\tcp $< _$*.c\n\t$(CC) -c -o $@ _$*.c\n"
        "libtpl.a: tpl.o ext.o\n\tar rcs $@ tpl.o ext.o\n"
    )
    found = detect_build(root, system="make", cache=tmp_path / "cache")
    assert found.recipe.sources == ["_ext.c", "tpl.c"]
    lib = build_library(Path(found.recipe.root or root), found.recipe, cache=tmp_path / "cache")
    assert " T tpl_ext" in _symbols(lib.fuzz_archive)


def test_headers_in_a_folder_of_their_own_are_found_for_the_plain_sources(tmp_path: Path) -> None:
    """Sources under src/ including headers kept in src/headers (a folder no source sits in)."""
    root = tmp_path / "qux-1.0"
    (root / "src" / "headers").mkdir(parents=True)
    (root / "src" / "ciphers").mkdir()
    (root / "src" / "headers" / "qux.h").write_text(
        '#include "qux_private.h"\nint qux_sum(const unsigned char *d, int n);\nint qux_rot(int x);\n')
    (root / "src" / "headers" / "qux_private.h").write_text("#define QUX_ONE 1\n")
    (root / "src" / "qux.c").write_text(
        '#include "qux.h"\nint qux_sum(const unsigned char *d, int n) { return n ? d[0] + QUX_ONE : 0; }\n')
    (root / "src" / "ciphers" / "rot.c").write_text(
        '#include "qux.h"\nint qux_rot(int x) { return x + QUX_ONE; }\n')
    (root / "version.c").write_text('#include "qux.h"\nint qux_version(void) { return QUX_ONE; }\n')
    (root / "src" / "headers" / "qux.h").write_text(
        (root / "src" / "headers" / "qux.h").read_text() + "int qux_version(void);\n")
    found = detect_build(root, cache=tmp_path / "cache")
    assert found.system == "sources"
    assert "src/headers" in found.recipe.include_dirs
    assert sorted(found.recipe.sources) == ["src/ciphers/rot.c", "src/qux.c", "version.c"], found.notes
    assert found.recipe.headers == ["src/headers/qux.h"]


def test_an_umbrella_header_comes_with_the_parts_that_need_it(tmp_path: Path) -> None:
    """qux_hash.h uses qux_cipher.h's type without including it; only qux.h includes both."""
    root = tmp_path / "qux-2.0"
    (root / "src" / "headers").mkdir(parents=True)
    (root / "src" / "headers" / "qux.h").write_text('#include "qux_cipher.h"\n#include "qux_hash.h"\n')
    (root / "src" / "headers" / "qux_cipher.h").write_text(
        "typedef struct { int rounds; } qux_key;\nint qux_setup(qux_key *key, int rounds);\n")
    (root / "src" / "headers" / "qux_hash.h").write_text(
        "int qux_hash(qux_key *key, const unsigned char *d, int n);\n")
    (root / "src" / "qux.c").write_text(
        '#include "qux.h"\nint qux_setup(qux_key *key, int rounds) { key->rounds = rounds; return 0; }\n'
        "int qux_hash(qux_key *key, const unsigned char *d, int n) { return n ? d[0] + key->rounds : 0; }\n")
    (root / "version.c").write_text('#include "qux.h"\nint qux_version(void) { return 2; }\n')
    found = detect_build(root, cache=tmp_path / "cache")
    assert found.recipe.headers[0] == "src/headers/qux.h", found.recipe.headers
    assert set(found.recipe.headers) == {"src/headers/qux.h", "src/headers/qux_cipher.h",
                                         "src/headers/qux_hash.h"}
    # init-benchmark keeps it too, though it declares no function of its own
    from fuzzkit.init_benchmark import make_benchmark

    bench = make_benchmark({"path": str(root)}, cache=tmp_path / "cache")
    assert bench["build"].get("headers", found.recipe.headers)[0] == "src/headers/qux.h", bench["build"]
    # The harness includes the umbrella alone: its parts have no include guard, and a harness
    # including them as well redefines their types.
    headers = [root / h for h in found.recipe.headers]
    lib = build_library(fetch_source(SourceSpec(path=str(root))), found.recipe, cache=tmp_path / "cache")
    assert harness_headers(headers) == ["qux.h"]

    def compiles(names: list[str]) -> bool:
        source = tmp_path / "h.c"
        source.write_text("".join(f'#include "{n}"\n' for n in names) + "int main(void) { return 0; }\n")
        flags = [f"-I{d}" for d in lib.include_dirs]
        return subprocess.run([tool("clang"), "-fsyntax-only", *flags, str(source)],
                              capture_output=True).returncode == 0

    assert compiles(harness_headers(headers)) and not compiles([h.name for h in headers])


def test_internal_headers_that_include_the_public_ones_are_not_umbrellas(tmp_path: Path) -> None:
    """The build installs yak.h (which includes the three parts) and the parts; yak_common.h and
    yak_parser_internal.h sit beside them and include two parts each, as internals do; the
    installed yakInternals.h is public, whatever its name."""
    root = tmp_path / "yak-1.0"
    (root / "src").mkdir(parents=True)
    (root / "src" / "yak_tree.h").write_text(
        "#ifndef YAK_TREE_H\n#define YAK_TREE_H\nstruct yak_node { int kind; };\n"
        "int yak_node_kind(const struct yak_node *n);\n#endif\n")
    (root / "src" / "yak_print.h").write_text(
        '#ifndef YAK_PRINT_H\n#define YAK_PRINT_H\n#include "yak_tree.h"\n'
        "int yak_print(const struct yak_node *n, char *buf, int len);\n#endif\n")
    (root / "src" / "yak_parse.h").write_text(
        '#ifndef YAK_PARSE_H\n#define YAK_PARSE_H\n#include "yak_tree.h"\n'
        "int yak_parse(const char *text, struct yak_node **out);\n#endif\n")
    (root / "src" / "yak.h").write_text(
        '#include "yak_tree.h"\n#include "yak_parse.h"\n#include "yak_print.h"\n')
    # Named like an internal header, but installed: public (its function too).
    (root / "src" / "yakInternals.h").write_text(
        '#include "yak_tree.h"\nint yak_node_reset(struct yak_node *n);\n')
    internal = '#include "yak_tree.h"\n#include "yak_parse.h"\nint yak_{0}_step(struct yak_node *n);\n'
    (root / "src" / "yak_common.h").write_text(internal.format("common"))
    (root / "src" / "yak_parser_internal.h").write_text(internal.format("parser"))
    (root / "src" / "yak.c").write_text(
        '#include <stdlib.h>\n#include "yak_common.h"\n#include "yak_parser_internal.h"\n'
        "int yak_common_step(struct yak_node *n) { return n->kind; }\n"
        "int yak_parser_step(struct yak_node *n) { return n->kind + 1; }\n"
        "int yak_node_kind(const struct yak_node *n) { return n->kind; }\n"
        "int yak_node_reset(struct yak_node *n) { n->kind = 0; return 0; }\n"
        "int yak_print(const struct yak_node *n, char *b, int l) { return l > 0 ? n->kind : 0; }\n"
        "int yak_parse(const char *t, struct yak_node **out) {\n"
        "  *out = calloc(1, sizeof **out); (*out)->kind = t[0]; return 0; }\n")
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(yak C)\nadd_library(yak src/yak.c)\n"
        "set(headers src/yak.h src/yak_tree.h src/yak_parse.h src/yak_print.h src/yakInternals.h)\n"
        "install(FILES ${headers} DESTINATION include/yak)\n")
    from fuzzkit.init_benchmark import make_benchmark

    found = detect_build(root, cache=tmp_path / "cache")
    bench = make_benchmark({"path": str(root)}, cache=tmp_path / "cache")
    for headers in (found.recipe.headers, bench["build"].get("headers", found.recipe.headers)):
        assert "src/yak_common.h" not in headers and "src/yak_parser_internal.h" not in headers, headers
        assert {"src/yak_parse.h", "src/yak_print.h", "src/yakInternals.h"} <= set(headers), headers
