"""Detection on synthetic libraries shaped like real ones: autotools+libtool, a CMake-generated
public header, a recipe that detects but does not build, and typedef'd byte types."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fuzzkit.detect import cache_name, detect_build, resolve_recipe
from fuzzkit.detect_make import configure_args
from fuzzkit.errors import ToolchainError
from fuzzkit.headers import canonical_types, parse_header
from fuzzkit.init_benchmark import make_benchmark
from fuzzkit.param_kinds import archetype

pytestmark = pytest.mark.toolchain

CONFIGURE_AC = """\
AC_INIT([toy], [1.0])
AC_CONFIG_SRCDIR([toy.c])
AC_CONFIG_HEADERS([config.h])
AM_INIT_AUTOMAKE([foreign])
AC_PROG_CC
LT_INIT
AM_PROG_AR
AC_CONFIG_FILES([Makefile sub/Makefile tests/Makefile])
AC_OUTPUT
"""
MAKEFILE_AM = """\
SUBDIRS = sub tests
lib_LTLIBRARIES = libtoy.la
libtoy_la_SOURCES = toy.c impl_fast.c
# A convenience library of another directory: `make -n` cannot see it made.
libtoy_la_LIBADD = sub/libsub.la
include_HEADERS = toy.h
# A header the build makes before compiling (as gnulib's replacement headers are).
BUILT_SOURCES = toy_gen.h
toy_gen.h:
	echo '#define TOY_ONE 1' > $@
# A header made by a rule of its own, listed nowhere a dry run would show (a table a helper
# program writes): asked for by name because a library source includes it.
toy_table.h:
	echo '#define TOY_ZERO 0' > $@
"""


NEEDS_AUTOTOOLS = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("autoreconf", "libtoolize", "automake")),
    reason="autoconf, automake and libtool are not installed (scripts/setup.sh installs them)",
)


def _autotools_project(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "configure.ac").write_text(CONFIGURE_AC)
    (root / "Makefile.am").write_text(MAKEFILE_AM)
    (root / "toy.h").write_text(
        "#include <stddef.h>\nint toy_parse(const unsigned char *data, size_t size);\n"
        "int toy_sum(int a, int b);\n"
    )
    (root / "toy.c").write_text(
        '#include "config.h"\n#include "toy.h"\n#include "toy_gen.h"\n'
        "int toy_parse(const unsigned char *d, size_t n) { return n ? toy_sum(d[0], TOY_ONE) : 0; }\n"
    )
    # Two alternative implementations of one function; the build system picks one.
    (root / "sub").mkdir()
    # A subdirectory's generated header: make there reads ../aclocal.m4 and ../Makefile, so
    # its sandbox must see the whole tree (else make tries to regenerate the build system).
    (root / "sub" / "Makefile.am").write_text(
        "noinst_LTLIBRARIES = libsub.la\nlibsub_la_SOURCES = sub.c\nBUILT_SOURCES = sub_gen.h\n"
        "sub_gen.h:\n\techo '#define SUB_ONE 1' > $@\n"
    )
    (root / "sub" / "sub.c").write_text(
        '#include "sub_gen.h"\nint toy_helper(int x);\nint toy_helper(int x) { return x + SUB_ONE; }\n'
    )
    # A test suite's helper library is archived too, but it is no library code.
    (root / "tests").mkdir()
    (root / "tests" / "Makefile.am").write_text(
        "noinst_LIBRARIES = libcheck.a\nlibcheck_a_SOURCES = check.c\n"
    )
    (root / "tests" / "check.c").write_text("int toy_check(int x);\nint toy_check(int x) { return !x; }\n")
    (root / "impl_fast.c").write_text(
        '#include "toy.h"\n#include "toy_table.h"\nint toy_sum(int a, int b) { return a + b + TOY_ZERO; }\n'
    )
    (root / "impl_slow.c").write_text(
        '#include "toy.h"\nint toy_sum(int a, int b) { while (b--) a++; return a; }\n'
    )


@NEEDS_AUTOTOOLS
def test_autotools_libtool_project_builds_one_implementation(tmp_path: Path) -> None:
    root = tmp_path / "toy-1.0"
    _autotools_project(root)
    # No configure script, as in a git snapshot: detection runs autoreconf like a distro.
    found = detect_build(root, cache=tmp_path / "cache")
    assert found.system == "autotools" and found.recipe.root
    assert "--static" in (Path(found.recipe.root) / "configure").read_text()  # libtool's text
    # Not impl_slow.c (no redefinition); the convenience library's source is in.
    assert found.recipe.sources == ["impl_fast.c", "sub/sub.c", "toy.c"]
    assert found.recipe.headers == ["toy.h"] and "HAVE_CONFIG_H" in found.recipe.defines
    bench = make_benchmark({"path": str(root)}, cache=tmp_path / "cache")
    assert bench["build"] == {"system": "autotools"}
    assert [f["name"] for f in bench["functions"]][0] == "toy_parse"


@NEEDS_AUTOTOOLS
def test_sub_makes_told_not_to_print_their_directory_still_place_their_sources(tmp_path: Path) -> None:
    root = tmp_path / "toy-1.0"
    _autotools_project(root)
    # The sub-makes say nothing of the directory they work in: `sub.c` alone names no place.
    am = root / "Makefile.am"
    am.write_text("AM_MAKEFLAGS = --no-print-directory\n" + am.read_text())
    found = detect_build(root, cache=tmp_path / "cache")
    assert found.system == "autotools"
    assert found.recipe.sources == ["impl_fast.c", "sub/sub.c", "toy.c"]


@NEEDS_AUTOTOOLS
def test_a_tree_set_up_by_its_autogen_script_builds(tmp_path: Path) -> None:
    root = tmp_path / "toy-1.0"
    _autotools_project(root)
    # configure.ac is made from a template by the project's own script, which then runs
    # configure with its own arguments and, like some do, ignores NOCONFIGURE.
    (root / "configure.ac").rename(root / "configure.ac.in")
    (root / "autogen.sh").write_text(
        "#!/bin/sh\nset -e\nsed 's/1.0/1.0.1/' configure.ac.in > configure.ac\n"
        "autoreconf -fi\n./configure --enable-no-such-thing-fails-later\nexit 1\n"
    )
    found = detect_build(root, cache=tmp_path / "cache")
    assert found.system == "autotools"
    assert found.recipe.sources == ["impl_fast.c", "sub/sub.c", "toy.c"]


@NEEDS_AUTOTOOLS
def test_a_tree_autoreconf_cannot_set_up_alone_is_set_up_by_its_script(tmp_path: Path) -> None:
    root = tmp_path / "toy-1.0"
    _autotools_project(root)
    # Makefile.am includes a fragment a documentation tool would install; the project's script
    # writes a stub when the tool is missing, then runs autoreconf (plain autoreconf fails).
    (root / "Makefile.am").write_text("include doc-tool.make\n" + (root / "Makefile.am").read_text())
    (root / "autogen.sh").write_text(
        "#!/bin/sh\nset -e\necho 'EXTRA_DIST =' > doc-tool.make\nautoreconf -fi\n"
    )
    found = detect_build(root, cache=tmp_path / "cache")
    assert found.system == "autotools"
    assert found.recipe.sources == ["impl_fast.c", "sub/sub.c", "toy.c"]


def test_configure_options_come_from_help_not_the_script_text() -> None:
    libtool_help = (
        "  --enable-shared[=PKGS]  build shared libraries [default=yes]\n"
        "  --enable-static[=PKGS]  build static libraries [default=yes]\n"
        "  --disable-dependency-tracking  speeds up one-time build\n"
    )
    assert configure_args(libtool_help, ["--with-x"]) == [
        "--disable-shared", "--enable-static", "--disable-dependency-tracking", "--with-x"
    ]  # fmt: skip
    hand_written = "usage: configure [--static] [--64] [--prefix=PREFIX]\n"
    assert configure_args(hand_written, []) == ["--static"]
    # The recipe compiles C, which the sanitizers see; hand-written assembly they would not.
    assert configure_args("  --disable-assembler     Disable assembler code\n", []) == ["--disable-assembler"]


TOY_H_IN = """\
#include <stddef.h>
#define TOY_WIDTH @TOY_WIDTH@
#define TOY_GLUE(a, b) a##b
#define TOY_XGLUE(a, b) TOY_GLUE(a, b)
#define TOY_SUFFIX(name) TOY_XGLUE(name, TOY_WIDTH)
#define toy_decode TOY_SUFFIX(toy_decode_)
int toy_decode(const unsigned char *data, size_t size);
"""


def test_generated_public_header_is_read_after_configure(tmp_path: Path) -> None:
    root = tmp_path / "gtoy-1.0"
    (root / "include").mkdir(parents=True)
    (root / "include" / "toy.h.in").write_text(TOY_H_IN)
    # A compatibility wrapper, the only public API header in the tree before configure.
    (root / "include" / "toy_compat.h").write_text("int toy_compat_decode(const char *text);\n")
    # A platform-only header: it cannot be parsed here and must not sink detection.
    (root / "include" / "toy_win32.h").write_text("#include <io.h>\nint toy_win32_open(int fd);\n")
    (root / "toy.c").write_text(
        '#include "toy.h"\n#include "toy_compat.h"\n'
        "int toy_decode(const unsigned char *d, size_t n) { return n > 2 ? d[1] : -1; }\n"
        "int toy_compat_decode(const char *t) { return t[0]; }\n"
    )
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(gtoy C)\nset(TOY_WIDTH 8)\n"
        "configure_file(include/toy.h.in ${CMAKE_BINARY_DIR}/include/toy.h @ONLY)\n"
        "add_library(gtoy toy.c)\n"
        "target_include_directories(gtoy PUBLIC ${CMAKE_BINARY_DIR}/include include)\n"
        "install(FILES ${CMAKE_BINARY_DIR}/include/toy.h include/toy_compat.h DESTINATION include)\n"
    )
    cache = tmp_path / "cache"
    found = detect_build(root, cache=cache)
    assert found.system == "cmake"
    assert ".logicfuzz-build/include/toy.h" in found.recipe.headers
    assert "include/toy_win32.h" not in found.recipe.headers
    bench = make_benchmark({"path": str(root)}, cache=cache)
    names = [f["name"] for f in bench["functions"]]
    assert names[0] == "toy_decode_8", names  # the generated header's function, renamed
    assert bench["build"]["system"] == "cmake"


def test_recipe_that_detects_but_does_not_build_gives_way(tmp_path: Path) -> None:
    """The `sources` detector compiles without the build's flags; the Makefile's are needed."""
    root = tmp_path / "flags-1.0"
    root.mkdir()
    (root / "flags.h").write_text("int flags_parse(const char *text, int len);\n")
    # Fine at -O0 as the detector compiles it; the instrumented build needs the Makefile's
    # macro (as a source whose config macro a build system sets would).
    (root / "flags.c").write_text(
        '#include "flags.h"\n'
        "#if defined(__has_feature)\n#if __has_feature(address_sanitizer) && !defined(FLAGS_CONFIGURED)\n"
        '#error "build through the Makefile"\n#endif\n#endif\n'
        "int flags_parse(const char *t, int n) { return n > 0 ? t[0] : 0; }\n"
    )
    (root / "Makefile").write_text(
        "libflags.a: flags.o\n\t$(AR) rcs $@ flags.o\n"
        "flags.o: flags.c\n\t$(CC) -DFLAGS_CONFIGURED=1 -c -o $@ flags.c\n"
    )
    found = detect_build(root, cache=tmp_path / "cache")
    assert found.system == "make" and "FLAGS_CONFIGURED=1" in found.recipe.defines
    # A build section and function names given by the caller win over detection and ranking.
    given = {"sources": ["flags.c"], "defines": ["FLAGS_CONFIGURED=2"], "headers": ["flags.h"]}
    bench = make_benchmark({"path": str(root)}, ["flags_parse"], cache=tmp_path / "cache", build=given)
    assert bench["build"] == given and [f["name"] for f in bench["functions"]] == ["flags_parse"]
    with pytest.raises(ToolchainError, match="bad build section"):
        make_benchmark({"path": str(root)}, cache=tmp_path / "cache", build={"colour": "red"})


def test_typedefd_byte_and_length_types_have_canonical_spellings(tmp_path: Path) -> None:
    header = tmp_path / "lib.h"
    header.write_text(
        "typedef unsigned char lib_uint8_t;\ntypedef long lib_ssize_t;\n"
        "int lib_feed(void *ctx, const lib_uint8_t *bytes, lib_ssize_t count);\n"
    )
    canonical = canonical_types([header])
    assert canonical["const lib_uint8_t *"] == "const unsigned char *"
    assert canonical["lib_ssize_t"] == "long"
    (feed,) = parse_header(header)
    assert archetype(feed) == "other" and archetype(feed, canonical) == "buffer"


def test_an_optional_part_needing_an_absent_library_is_left_out(tmp_path: Path) -> None:
    """Files whose symbols nothing here provides go; a library missing its own helpers fails."""
    root = tmp_path / "opt-1.0"
    root.mkdir()
    (root / "opt.h").write_text("int opt_parse(const char *t, int n);\nint opt_write_png(int x);\n")
    (root / "util.c").write_text("int opt_util(int x) { return x + 1; }\n")
    (root / "parse.c").write_text('#include "opt.h"\n' "int opt_util(int x);\n"
                                  "int opt_parse(const char *t, int n) {\n"
                                  "  return n > 0 ? opt_util(t[0]) : 0;\n}\n")
    (root / "more.c").write_text("int opt_more(int x) { return x * 2; }\n")
    (root / "writer.c").write_text("int absent_png_create(int);\n"
                                   "int opt_write_png(int x) { return absent_png_create(x); }\n")
    found = detect_build(root, cache=tmp_path / "cache")
    assert not any(s.endswith("writer.c") for s in found.recipe.sources), found.recipe.sources
    assert any(s.endswith("parse.c") for s in found.recipe.sources)
    assert any("writer.c" in note and "absent_png_create" in note for note in found.notes)
    # Without its helper file the rest does not link, and leaving most files out is no answer.
    (root / "util.c").unlink()
    (root / "writer.c").unlink()
    with pytest.raises(ToolchainError, match="does not link on its own"):
        detect_build(root, cache=tmp_path / "cache2")


def test_system_libraries_come_from_what_the_build_system_found(tmp_path: Path) -> None:
    from fuzzkit.detect_links import cmake_link_flags, make_link_flags

    (tmp_path / "Makefile").write_text("LIBS = -lm -lno_such_library_here\nZ_LIBS = -lpthread\nCC = cc\n")
    assert make_link_flags(tmp_path) == ["-lm", "-lpthread"]
    # A configure step may write the variables into a file the Makefile includes.
    (tmp_path / "config.make").write_text("HOOK_LIBS = -ldl\n")
    (tmp_path / "Makefile").write_text("include config.make\nLIBS = -lm\n")
    assert make_link_flags(tmp_path) == ["-lm", "-ldl"]
    libm = next(p for p in Path("/usr/lib").rglob("libm.so*") if p.is_file() or p.is_symlink())
    (tmp_path / "CMakeCache.txt").write_text(
        f"M_LIBRARY:FILEPATH={libm}\nLZMA_LIBRARY:FILEPATH=LZMA_LIBRARY-NOTFOUND\nX:STRING=1\n")
    assert cmake_link_flags(tmp_path) == [str(libm)]


def test_a_grammar_the_build_system_generates_is_built_before_the_plain_sources(tmp_path: Path) -> None:
    """A parser made from a grammar file exists only after the build system's own step; the
    plain sources build without it, and its functions were missing from the library."""
    root = tmp_path / "gram-1.0"
    root.mkdir()
    (root / "gram.h").write_text("int gram_parse_string(const char *text);\nint gram_count(int n);\n")
    (root / "count.c").write_text('#include "gram.h"\nint gram_count(int n) { return n + 1; }\n')
    # The "grammar" is C already; the build turns it into gram_parser.c as a generator would.
    (root / "gram_parser.y").write_text(
        '#include "gram.h"\n'
        "int gram_parse_string(const char *t) { return t && t[0] ? gram_count(t[0]) : 0; }\n"
    )
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(gram C)\n"
        "add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/gram_parser.c\n"
        "  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_SOURCE_DIR}/gram_parser.y\n"
        "          ${CMAKE_BINARY_DIR}/gram_parser.c\n"
        "  DEPENDS gram_parser.y)\n"
        "add_library(gram count.c ${CMAKE_BINARY_DIR}/gram_parser.c)\n"
        "target_include_directories(gram PUBLIC ${CMAKE_SOURCE_DIR})\n"
    )
    cache = tmp_path / "cache"
    found = detect_build(root, cache=cache)
    assert found.system == "cmake"
    bench = make_benchmark({"path": str(root)}, cache=cache)
    assert "gram_parse_string" in [f["name"] for f in bench["functions"]]


def test_a_test_helper_library_under_regress_is_not_the_library(tmp_path: Path) -> None:
    # A regression suite's helper library replaces one of the library's functions (a fixed
    # random source); taken in as a library target, the link check found it defined twice.
    root = tmp_path / "rtoy-1.0"
    (root / "lib").mkdir(parents=True)
    (root / "regress").mkdir()
    (root / "lib" / "rtoy.h").write_text("int rtoy_decode(const unsigned char *d, size_t n);\n")
    (root / "lib" / "rtoy.c").write_text(
        '#include <stddef.h>\n#include "rtoy.h"\nint rtoy_random(void) { return 4; }\n'
        "int rtoy_decode(const unsigned char *d, size_t n) { return n > 1 ? d[0] + rtoy_random() : -1; }\n")
    (root / "regress" / "fixedrandom.c").write_text("int rtoy_random(void) { return 0; }\n")
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(rtoy C)\nadd_subdirectory(lib)\n"
        "add_subdirectory(regress)\n")
    (root / "lib" / "CMakeLists.txt").write_text(
        "add_library(rtoy rtoy.c)\ninstall(FILES rtoy.h DESTINATION include)\n")
    (root / "regress" / "CMakeLists.txt").write_text("add_library(fixedrandom SHARED fixedrandom.c)\n")
    for system in ("auto", "cmake"):
        found = detect_build(root, system, cache=tmp_path / "cache")
        assert "lib/rtoy.c" in found.recipe.sources
        assert not [s for s in found.recipe.sources if "regress" in s], (system, found.recipe.sources)


def test_a_missing_build_dependency_is_named_with_what_to_do(tmp_path: Path) -> None:
    """CMake's own "Could NOT find" line reaches the user, with the dependency hint.

    Its error block comes before a long call stack and CMake's closing lines, which were all a
    failed detection used to show ("Configuring incomplete, errors occurred!").
    """
    root = tmp_path / "deptoy-1.0"
    root.mkdir()
    (root / "toy.c").write_text('#include "zzdep.h"\nint toy_decode(const char *t) { return t[0]; }\n')
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(deptoy C)\n"
        "find_path(ZZDEP_INCLUDE_DIR zzdep.h)\n"
        "include(FindPackageHandleStandardArgs)\n"
        "find_package_handle_standard_args(ZZDEP REQUIRED_VARS ZZDEP_INCLUDE_DIR)\n"
        "if(NOT ZZDEP_FOUND)\n  message(FATAL_ERROR \"zzdep is required\")\nendif()\n"
        + "".join(f'message(STATUS "after {i}")\n' for i in range(20))
        + "add_library(deptoy toy.c)\n"
    )
    with pytest.raises(ToolchainError) as err:
        detect_build(root, system="cmake", cache=tmp_path / "cache")
    assert "Could NOT find ZZDEP" in err.value.message, err.value.message
    assert "apt-get build-dep" in err.value.hint


TOY_PARSE_H = "#include <stddef.h>\nint toy_parse(const unsigned char *data, size_t size);\n"
FOO_CONFIGURE = """\
#!/bin/sh
# Hand-written. The upstream tree bundles libfoo in third_party/; this source leaves it out.
external=no
for arg in "$@"; do
  case "$arg" in
    --help) cat <<'EOF'
Usage: ./configure [OPTION]...
  --prefix=PREFIX          install under PREFIX
  --disable-docs           do not build the manual
  --with-external-libfoo   use the system's libfoo, not the copy in third_party/libfoo
EOF
      exit 0 ;;
    --with-external-libfoo) external=yes ;;
  esac
done
if [ "$external" = no ] && [ ! -f third_party/libfoo/foo.c ]; then
  echo "checking for the bundled libfoo... no"
  echo "configure: error: the bundled libfoo sources are not present" >&2
  exit 1
fi
EXTERNAL_CHECK
echo '#define TOY_CONFIGURED 1' > config.h
printf 'libtoy.a: toy.o\\n\\t$(AR) rcs $@ toy.o\\n' > Makefile
printf 'toy.o: toy.c config.h\\n\\t$(CC) -c -o $@ toy.c\\n' >> Makefile
"""


def _bundled_part_project(root: Path, external_check: str = "") -> None:
    root.mkdir(parents=True)
    (root / "configure").write_text(FOO_CONFIGURE.replace("EXTERNAL_CHECK", external_check))
    (root / "toy.h").write_text(TOY_PARSE_H)
    (root / "toy.c").write_text(  # config.h comes from configure: the plain sources do not build
        '#include "config.h"\n#include "toy.h"\n'
        "int toy_parse(const unsigned char *d, size_t n) { return n ? d[0] + TOY_CONFIGURED : 0; }\n")


def test_configure_stopping_on_a_missing_bundled_part_is_retried_with_the_option_its_help_lists(
        tmp_path: Path) -> None:
    root = tmp_path / "bundled-1.0"
    _bundled_part_project(root)
    cache = tmp_path / "cache"
    found = detect_build(root, cache=cache)
    assert found.system == "autotools" and found.recipe.sources == ["toy.c"]
    assert found.added_args == ["--with-external-libfoo"]
    assert any("missing libfoo" in n and "--with-external-libfoo" in n for n in found.notes), found.notes
    log = (cache / "detect" / cache_name(root.resolve(), "auto", []) / "configure.log").read_text()
    assert "bundled libfoo sources are not present" in log
    assert "trying once more with --with-external-libfoo, which ./configure --help lists" in log
    # The benchmark YAML names the option, so a run configures with it straight away.
    bench = make_benchmark({"path": str(root)}, cache=cache)
    assert bench["build"] == {"system": "autotools", "configure_args": ["--with-external-libfoo"]}
    assert resolve_recipe(root, bench["build"], cache).sources == ["toy.c"]


def test_a_retry_that_fails_too_says_which_option_it_tried(tmp_path: Path) -> None:
    root = tmp_path / "bundled-1.0"
    _bundled_part_project(root, 'echo "configure: error: libfoo.h not found on this system" >&2; exit 1')
    with pytest.raises(ToolchainError) as err:
        detect_build(root, system="autotools", cache=tmp_path / "cache")
    message = err.value.message
    assert "tried again with --with-external-libfoo (which ./configure --help lists for it)" in message
    assert "failed too" in message and "libfoo.h not found on this system" in message
    # What configure stopped on first stays in the message too.
    assert "bundled libfoo sources are not present" in message


def test_cmake_stopping_on_a_missing_bundled_part_is_retried_with_the_option_it_declares(
        tmp_path: Path) -> None:
    root = tmp_path / "cbundled-1.0"
    root.mkdir()
    (root / "toy.h").write_text(TOY_PARSE_H)
    (root / "toy.c").write_text('#include "toy.h"\n'
                                "int toy_parse(const unsigned char *d, size_t n) { return n ? d[0] : 0; }\n")
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(cbundled C)\n"
        'option(ENABLE_DOCS "build the manual" ON)\n'
        'option(USE_SYSTEM_LIBFOO "use the system libfoo, not third_party/libfoo" OFF)\n'
        "if(NOT USE_SYSTEM_LIBFOO AND NOT EXISTS ${CMAKE_SOURCE_DIR}/third_party/libfoo/foo.c)\n"
        '  message(FATAL_ERROR "the bundled libfoo sources are not present")\nendif()\n'
        "add_library(cbundled toy.c)\n")
    found = detect_build(root, system="cmake", cache=tmp_path / "cache")
    assert found.system == "cmake" and found.added_args == ["-DUSE_SYSTEM_LIBFOO=ON"]
    assert any("-DUSE_SYSTEM_LIBFOO=ON" in n for n in found.notes)
