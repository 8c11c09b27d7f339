"""Which headers of a source tree are the library's public API, and when a detection is reused."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzkit.detect_tree import public_headers


def _tree(root: Path, cmake: str) -> Path:
    (root / "src" / "api").mkdir(parents=True)
    (root / "CMakeLists.txt").write_text("add_subdirectory(src)\n")
    (root / "src" / "CMakeLists.txt").write_text(cmake)
    for name in ("src/acme_lex.h", "src/acme_buf.h", "src/api/acme_parse.h", "src/api/acme_gen.h"):
        (root / name).write_text("int x;\n")
    (root / "src" / "acme.c").write_text("int y;\n")
    return root


def _names(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in public_headers(root))


def test_what_cmake_installs_is_public_not_every_header_list(tmp_path: Path) -> None:
    root = _tree(tmp_path / "acme-1.0", (
        "SET (HDRS acme_lex.h acme_buf.h)\n"
        "SET (PUB_HDRS api/acme_parse.h api/acme_gen.h)\n"
        "ADD_LIBRARY(acme STATIC acme.c ${HDRS} ${PUB_HDRS})\n"
        "INSTALL(FILES ${PUB_HDRS} DESTINATION include/acme)\n"))
    assert _names(root) == ["src/api/acme_gen.h", "src/api/acme_parse.h"]


def test_without_an_install_rule_a_header_list_variable_still_names_them(tmp_path: Path) -> None:
    root = _tree(tmp_path / "acme-1.0", (
        "SET (PUBLIC_HEADERS api/acme_parse.h)\nADD_LIBRARY(acme STATIC acme.c)\n"))
    assert _names(root) == ["src/api/acme_parse.h"]


def test_automake_header_variables_are_expanded(tmp_path: Path) -> None:
    root = tmp_path / "cfgparse-1.5"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "Makefile.am").write_text(
        "libsrc = cfgparse.c scanner.l grammar.y scanctx.h\nlibinc = cfgparse.h\n"
        "BUILT_SOURCES = scanner.c scanner.h\ninclude_HEADERS = $(libinc)\n")
    for name in ("cfgparse.h", "scanctx.h", "scanner.h"):
        (root / "lib" / name).write_text("int x;\n")
    (root / "lib" / "cfgparse.c").write_text("int y;\n")
    assert _names(root) == ["lib/cfgparse.h"]  # not the scanner's generated header


def test_a_detection_is_not_reused_after_the_detectors_change(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzzkit import detect

    (tmp_path / "lib.c").write_text("int f(void) { return 0; }\n")
    before = detect.cache_name(tmp_path, "auto", [])
    assert detect.cache_name(tmp_path, "auto", []) == before  # same tree, same code: reused
    monkeypatch.setattr(detect, "_code", lambda: "another-version")
    assert detect.cache_name(tmp_path, "auto", []) != before


def test_include_headers_the_build_does_not_name_are_not_public_when_it_names_others(tmp_path: Path) -> None:
    """``include/codec/*.h`` is installed by name; ``include/share/`` holds the tools' helpers."""
    root = tmp_path / "codec-1.0"
    (root / "include" / "codec").mkdir(parents=True)
    (root / "include" / "share").mkdir()
    (root / "include" / "codec" / "stream.h").write_text("int codec_decode(const unsigned char *d, int n);\n")
    (root / "include" / "share" / "helpers.h").write_text("int helper_parse(const char *spec);\n")
    (root / "include" / "codec" / "Makefile.am").write_text("codecinclude_HEADERS = stream.h\n")
    (root / "include" / "share" / "Makefile.am").write_text("EXTRA_DIST = helpers.h\n")
    names = [p.relative_to(root).as_posix() for p in public_headers(root)]
    assert names == ["include/codec/stream.h"]
    # nothing under include/ named by the build files: all of it is public, as before
    (root / "include" / "codec" / "Makefile.am").write_text("EXTRA_DIST = stream.h\n")
    names = sorted(p.relative_to(root).as_posix() for p in public_headers(root))
    assert names == ["include/codec/stream.h", "include/share/helpers.h"]


def _capture_tree(root: Path) -> Path:
    (root / "cap").mkdir(parents=True)
    for name in ("capture.h", "cap/cap.h", "cap/filter.h", "cap-int.h", "cap-linux.h", "lexer.h"):
        (root / name).write_text("int x;\n")
    (root / "cap.c").write_text("int y;\n")
    return root


def test_a_distribution_list_is_no_install_but_an_install_loop_over_a_variable_is(tmp_path: Path) -> None:
    """``EXTRA_DIST`` names every header and ``install-sh``; the public ones are installed by a loop."""
    root = _capture_tree(tmp_path / "capture-1.0")
    (root / "Makefile.in").write_text(
        "PUBHDR = \\\n\tcapture.h \\\n\tcap/cap.h \\\n\tcap/filter.h\n"
        "HDR = $(PUBHDR) \\\n\tcap-int.h \\\n\tlexer.h\n"
        "EXTRA_DIST = \\\n\tcap-linux.h \\\n\tinstall-sh \\\n\tlexer.h\n"
        "install: libcap.a\n"
        "\tfor i in $(PUBHDR); do \\\n\t\t$(INSTALL_DATA) $(srcdir)/$$i \\\n"
        "\t\t    $(DESTDIR)$(includedir)/$$i; done\n")
    assert _names(root) == ["cap/cap.h", "cap/filter.h", "capture.h"]


def test_a_dash_int_header_is_internal(tmp_path: Path) -> None:
    root = _capture_tree(tmp_path / "capture-1.0")
    assert "cap-int.h" not in _names(root)  # nothing installed: those beside the sources, less internal ones
