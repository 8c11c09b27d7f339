"""Library lists of ``bench/generality.py``: ``@FILE``, ``--devset`` and the development set's own list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchkit.generality_args import DEVSET, UsageError, expand_lists, library_of, list_file, parse_args


def test_a_list_file_gives_one_library_a_line_without_comments(tmp_path: Path) -> None:
    listed = tmp_path / "libs.txt"
    listed.write_text("# header\nacme\n\n  beta=1.2-3  # pinned\nbench/x.yaml:f,g\n")
    assert list_file(listed) == ["acme", "beta=1.2-3", "bench/x.yaml:f,g"]
    assert expand_lists(["one", f"@{listed}", "--seconds", "15"]) == [
        "one", "acme", "beta=1.2-3", "bench/x.yaml:f,g", "--seconds", "15"]
    assert expand_lists(["--devset"]) == list_file(DEVSET)


def test_a_missing_list_file_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the library list .*nope.txt"):
        parse_args([f"@{tmp_path / 'nope.txt'}"])


def test_the_development_set_lists_the_eleven_libraries_the_issues_name() -> None:
    names = [spec.partition("=")[0] for spec in list_file(DEVSET)]
    assert names == ["expat", "libxml2", "mbedtls", "pcre2", "libwebp", "libidn2", "sqlite3",
                     "libpng1.6", "libsndfile", "tiff", "flac"]
    # A pin is a whole Debian version (upstream-revision), never a bare upstream one.
    assert all(re.fullmatch(r"[\w.+-]+(=[\w.+~:]+-[\w.+~]+)?", spec) for spec in list_file(DEVSET))


def test_a_yaml_with_functions_and_a_version_with_an_epoch(tmp_path: Path) -> None:
    bench = tmp_path / "acme.yaml"
    bench.write_text("source: {apt: acme}\n")
    lib = library_of(f"{bench}:acme_parse, acme_free")
    assert (lib.key, lib.functions) == ("acme", ["acme_parse", "acme_free"])
    with pytest.raises(UsageError, match="unknown library 'no-such-pkg-xyz'"):
        library_of("no-such-pkg-xyz=1:2.0-1")  # the epoch is part of the version, not a function list
