"""The option a configure step is retried with: words of the missing part against the option names."""

from __future__ import annotations

from fuzzkit.detect_options import autoconf_retry, cmake_candidates

HELP = """\
  --disable-docs           do not build the manual
  --with-external-libfoo   use the system's libfoo, not the bundled copy
  --disable-foo-tools      do not build the libfoo tools
  --with-bar[=DIR]         use libbar from DIR
  --enable-baz             build the baz codec
"""


def _option(output: str, help_text: str = HELP, given: tuple[str, ...] = ()) -> str | None:
    retry = autoconf_retry(output, help_text, given)
    return retry.option if retry else None


def test_a_missing_bundled_copy_takes_it_from_the_system_a_missing_dependency_turns_the_part_off() -> None:
    assert _option("configure: error: the bundled libfoo sources are not present") == "--with-external-libfoo"
    retry = autoconf_retry("configure: error: the bundled libfoo sources are not present\n", HELP, ())
    assert retry is not None and retry.missing == "libfoo" and retry.source == "./configure --help"
    # The system lacks libbar: asking for the system's copy again cannot help; leaving it out can.
    assert _option("configure: error: libbar not found") == "--without-bar"
    assert _option("configure: error: baz support requires zlib headers (missing)") == "--disable-baz"


def test_no_retry_for_a_failure_about_nothing_missing_or_with_no_option_naming_it() -> None:
    assert _option("configure: error: C compiler cannot create executables") is None
    assert _option("configure: error: the bundled libqux sources are not present") is None
    assert _option("checking for libfoo... no\nconfigure: WARNING: all is well") is None


def test_an_option_already_given_is_not_tried_again_and_one_the_error_names_comes_first() -> None:
    bundled = "configure: error: the bundled libfoo sources are not present"
    assert _option(bundled, given=("--with-external-libfoo",)) == "--disable-foo-tools"
    named = "configure: error: libfoo missing; pass --disable-foo-tools or install it"
    assert _option(named) == "--disable-foo-tools"


def test_cmake_options_are_set_the_way_that_takes_the_part_from_the_system_or_off() -> None:
    cache = ("USE_SYSTEM_LIBFOO:BOOL=OFF\nWITH_BAR:BOOL=ON\nENABLE_DOCS:BOOL=OFF\n"
             "CMAKE_EXPORT_COMPILE_COMMANDS:BOOL=ON\nBUILD_SHARED_LIBS:BOOL=OFF\n")
    args = [c.arg for c in cmake_candidates(cache, ["NO_BAZ", "WITH_BAR"])]
    # ENABLE_DOCS is off already, CMake's own settings are never a component.
    assert args == ["-DUSE_SYSTEM_LIBFOO=ON", "-DWITH_BAR=OFF", "-DNO_BAZ=ON"]


def test_cmake_error_block_is_the_cause_not_an_optional_package_warned_about_before() -> None:
    output = ("-- Could NOT find PkgConfig (missing: PKG_CONFIG_EXECUTABLE)\n"
              "CMake Error at /usr/share/cmake/Modules/FindPackageHandleStandardArgs.cmake:230 (message):\n"
              "  Could NOT find Qux (missing: QUX_LIBRARY QUX_INCLUDE_DIR)\n"
              "Call Stack (most recent call first):\n  CMakeLists.txt:4 (find_package)\n\n"
              "-- Configuring incomplete, errors occurred!\n")
    retry = autoconf_retry(output, "  --with-pkgconfig\n  --without-qux  leave qux out\n", ())
    assert retry is not None and retry.option == "--without-qux" and retry.missing == "qux"
    assert retry.cause == "Could NOT find Qux (missing: QUX_LIBRARY QUX_INCLUDE_DIR)"
