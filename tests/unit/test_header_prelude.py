"""A header using types a sibling declares is read after the headers included before it.

``acme/pdu.h`` names ``acme_pdu *`` but leaves its typedef to ``acme/types.h``, which the
library's umbrella includes first. Parsed alone, libclang reads each unknown type as ``int``:
``int *acme_pdu_new(void)``, an API of integer pointers with no object in it.
"""

from __future__ import annotations

from pathlib import Path

from fuzzkit.headers import canonical_types, parse_header, parse_headers

TYPES = ("#pragma once\n#include <stddef.h>\ntypedef struct acme_pdu acme_pdu;\n"
         "typedef unsigned char acme_u8;\n")
PDU = ("#pragma once\nacme_pdu *acme_pdu_new(size_t size);\n"
       "int acme_pdu_parse(const acme_u8 *data, size_t len, acme_pdu *pdu);\n")


def _headers(tmp_path: Path) -> list[Path]:
    (tmp_path / "types.h").write_text(TYPES)
    (tmp_path / "pdu.h").write_text(PDU)
    return [tmp_path / "types.h", tmp_path / "pdu.h"]


def test_a_header_is_parsed_after_the_headers_before_it(tmp_path: Path) -> None:
    decls = {d.name: d for d in parse_headers(_headers(tmp_path), [tmp_path])}
    assert decls["acme_pdu_new"].return_type == "acme_pdu *"
    assert [p.type for p in decls["acme_pdu_parse"].params] == ["const acme_u8 *", "size_t", "acme_pdu *"]
    assert decls["acme_pdu_parse"].header == "pdu.h"
    assert canonical_types(_headers(tmp_path), [tmp_path])["acme_pdu *"] == "struct acme_pdu *"


def test_a_self_contained_header_is_read_alone(tmp_path: Path) -> None:
    types, pdu = _headers(tmp_path)
    pdu.write_text('#pragma once\n#include "types.h"\n' + PDU)
    (tmp_path / "other.h").write_text("typedef int acme_pdu;\n")  # would clash if included first
    decls = parse_header(pdu, [tmp_path], before=[tmp_path / "other.h"])
    assert decls[0].return_type == "acme_pdu *"
