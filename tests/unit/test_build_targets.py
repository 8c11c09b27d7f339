"""Targets read from build files' text (fuzzkit.build_targets) and the plan of an upstream harness."""

from __future__ import annotations

from pathlib import Path

from fuzzkit.build_targets import automake_targets, canonical, cmake_targets, owning_library
from fuzzkit.upstream_build import defining_sources, harness_plans, undefined_symbols


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_automake_target_sources_flags_and_links(tmp_path: Path) -> None:
    _write(tmp_path, {"fz/Makefile.am": (
        "AM_CPPFLAGS = -I$(top_srcdir)/include -I $(srcdir)/util # shared\n"
        "common = util.c \\\n  util.h\n"
        "if FUZZ\nnoinst_PROGRAMS = a_fuzzer\nendif\n"
        "a_fuzzer_SOURCES = a_fuzzer.c $(common)\n"
        "a_fuzzer_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZING=1 @EXTRA@\n"
        "a_fuzzer_LDADD = $(top_builddir)/lib/libacme.la $(LIB_FUZZING_ENGINE) -lm\n")})
    (target,) = automake_targets(tmp_path / "fz" / "Makefile.am", tmp_path)
    assert target.name == "a_fuzzer" and target.kind == "program"
    assert target.sources == [tmp_path / "fz" / n for n in ("a_fuzzer.c", "util.c", "util.h")]
    assert target.include_dirs[:2] == [tmp_path / "include", tmp_path / "fz" / "util"]
    assert target.defines == ["FUZZING=1"]
    assert target.links == [str(tmp_path / "lib" / "libacme.la")]


def test_an_archive_is_found_in_the_makefile_that_declares_it(tmp_path: Path) -> None:
    _write(tmp_path, {"Makefile.am": "noinst_LTLIBRARIES = sub/libacme++-static.la\n"
                                     "sub_libacme___static_la_SOURCES = sub/a.cc sub/b.cc\n"})
    assert canonical("sub/libacme++-static.la") == "sub_libacme___static_la"
    found = owning_library(tmp_path / "sub" / "libacme++-static.la", tmp_path)
    assert found is not None and found.kind == "library"
    assert [p.name for p in found.sources] == ["a.cc", "b.cc"]


def test_cmake_loops_variables_and_target_commands(tmp_path: Path) -> None:
    _write(tmp_path, {"fuzz/CMakeLists.txt": (
        "# add_executable(commented_out x.c)\n"
        "set(COMMON common.c)\nlist(APPEND COMMON extra.c)\n"
        "foreach(f one two)\n"
        "  add_executable(${f}_fuzz ${f}.c ${COMMON})\n"
        "  target_include_directories(${f}_fuzz PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/inc)\n"
        "  target_compile_definitions(${f}_fuzz PRIVATE NAME=\"${f}\")\n"
        "  target_link_libraries(${f}_fuzz acme $<$<BOOL:ON>:gen>)\n"
        "endforeach()\nadd_library(acmexx STATIC wrap.cc)\n")})
    targets = {t.name: t for t in cmake_targets(tmp_path / "fuzz" / "CMakeLists.txt", tmp_path)}
    assert sorted(targets) == ["acmexx", "one_fuzz", "two_fuzz"]
    two = targets["two_fuzz"]
    assert [p.name for p in two.sources] == ["two.c", "common.c", "extra.c"]
    assert two.include_dirs == [tmp_path / "fuzz" / "inc"] and two.defines == ["NAME=two"]
    assert two.links == ["acme"] and targets["acmexx"].kind == "library"


def test_plan_takes_helpers_and_companions_but_not_the_library_or_a_driver(tmp_path: Path) -> None:
    _write(tmp_path, {
        "CMakeLists.txt": "add_library(acme acme.c)\nadd_library(acmexx wrap/wrap.cc)\n"
                          "target_link_libraries(acmexx acme)\n"
                          "add_executable(f_fuzz fuzz/f.c fuzz/helper.c fuzz/standalone.c fuzz/g.c)\n"
                          "target_link_libraries(f_fuzz acmexx)\n",
        "acme.c": "int acme(void) { return 0; }\n", "wrap/wrap.cc": "int acmexx() { return 1; }\n",
        "fuzz/f.c": "int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }\n",
        "fuzz/g.c": "int LLVMFuzzerTestOneInput(const char *d, long n) { return 1; }\n",
        "fuzz/helper.c": "int help(void) { return 2; }\n",
        "fuzz/standalone.c": "int main(int argc, char **argv) { return 0; }\n"})
    (plan,) = harness_plans(tmp_path / "fuzz" / "f.c", tmp_path, [str(tmp_path / "acme.c")])
    assert plan.target == "f_fuzz"
    assert plan.helpers == [tmp_path / "fuzz" / "helper.c", tmp_path / "wrap" / "wrap.cc"]
    assert harness_plans(tmp_path / "acme.c", tmp_path, []) == []  # no program compiles it


def test_undefined_symbols_and_the_sources_defining_them(tmp_path: Path) -> None:
    log = ("f.cc:62: undefined reference to `acme_open(char const*, std::istream*)'\n"
           "f.cc:70: undefined reference to 'acme::Reader::Reader()'\n"
           "f.cc:71: undefined reference to 'acme_open(char const*, std::istream*)'\n")
    assert undefined_symbols(log) == ["acme_open(char const*, std::istream*)", "acme::Reader::Reader()"]
    _write(tmp_path, {"stream.cxx": "ACME* acme_open(const char *name, std::istream *is)\n"
                                    "{\n  return 0;\n}\n",
                      "reader.cpp": "namespace acme {\nReader::Reader() : n_(0) {}\n}\n",
                      "decl_only.c": "int acme_open(const char *name, void *is);\n",
                      "tool.c": "int acme_open(const char *n, void *i) { return 0; }\n"
                                "int main(void) { return 0; }\n",
                      "acme.c": "int acme_open(const char *n, void *i) { return 0; }\n"})
    found = defining_sources(undefined_symbols(log), [tmp_path], {(tmp_path / "acme.c").resolve()})
    assert [p.name for p in found] == ["reader.cpp", "stream.cxx"]
