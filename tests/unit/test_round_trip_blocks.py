"""A coverage block calling an encoder that hands back a fresh buffer decodes that buffer with
the encoder's inverse. Invented APIs; each test states one general rule."""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_trip import fresh_output
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

IMAGE = """\
size_t AcmeEncodeRGB(const uint8_t *rgb, int width, int height, int stride, float quality, uint8_t **output);
uint8_t *AcmeDecodeRGB(const uint8_t *data, size_t data_size, int *width, int *height);
int AcmeGetInfo(const uint8_t *data, size_t data_size, int *width, int *height);
void AcmeFree(void *ptr);
"""
IMAGE_TYPES = render_types("""Release functions:
- AcmeFree releases what AcmeEncodeRGB allocates (by documentation)
- AcmeFree releases what AcmeDecodeRGB allocates (by documentation)
""")

CODEC = """\
int b64_encode(const uint8_t *src, size_t src_len, char **dst, size_t *dst_len);
int b64_decode(const char *src, size_t src_len, uint8_t **dst, size_t *dst_len);
int b64_check(const char *src, size_t src_len);
int txt_escape(const char *in, char **out);
int txt_unescape(const char *in, char **out);
int txt_width(const char *in);
"""


def _improved(
    api_text: str, types: str, target: str, uncovered: list[str], avoid: tuple[str, ...] = ()
) -> tuple[list[str], str]:
    with using(read_types(types)):
        api = parse_prototypes(api_text)
        t = next(d for d in api if d.name == target)
        arche = analyze_function(t, api).archetype
        code = write_harness(t, api, ["acme.h"], arche, default_skeleton(arche)).code
        imp = improve_harness(code, t, api, uncovered, avoid=avoid)
    return imp.directions, imp.code


def test_what_an_encoder_returns_the_size_of_is_decoded_by_its_inverse_in_any_case_style() -> None:
    directions, code = _improved(IMAGE, IMAGE_TYPES, "AcmeGetInfo", ["AcmeEncodeRGB"])
    assert directions == ["call AcmeEncodeRGB on the input, then AcmeDecodeRGB on what it wrote"]
    enc = re.search(r"(\w+) = AcmeEncodeRGB\([^;]*, &(\w+)\);", code)
    assert enc, code
    rc, out = enc.groups()
    dec = re.search(
        rf"if \({out} != NULL && {rc} > 0\) \{{\s+(\w+) = AcmeDecodeRGB\("
        rf"\(const uint8_t \*\){out}, \(size_t\){rc}, ",
        code,
    )
    assert dec, code
    # Both buffers go back with the releaser the documentation names, once each.
    assert code.count(f"AcmeFree({out});") == 1 and code.count(f"AcmeFree({dec.group(1)});") == 1


def test_a_size_out_parameter_is_the_length_the_decoder_reads() -> None:
    directions, code = _improved(CODEC, "", "b64_check", ["b64_encode"])
    assert directions == ["call b64_encode on the input, then b64_decode on what it wrote"], code
    enc = re.search(r"b64_encode\([^;]*, &(\w+), &(\w+)\);", code)
    assert enc, code
    dst, dst_len = enc.groups()
    assert re.search(
        rf"if \({dst} != NULL && {dst_len} > 0\) \{{\s+\w+ = b64_decode\("
        rf"\(const char \*\){dst}, \(size_t\){dst_len}, &\w+, &\w+\);",
        code,
    ), code
    assert code.count(f"free({dst});") == 1


def test_a_text_without_a_length_ends_at_its_terminator() -> None:
    directions, code = _improved(CODEC, "", "txt_width", ["txt_escape"])
    assert directions == ["call txt_escape on the input, then txt_unescape on what it wrote"], code
    out = re.search(r"txt_escape\([^;]*, &(\w+)\);", code)
    assert out, code
    assert re.search(
        rf"if \({out.group(1)} != NULL && strlen\(\(const char \*\){out.group(1)}\) > 0\) \{{"
        rf"\s+\w+ = txt_unescape\(\(const char \*\){out.group(1)}, &\w+\);",
        code,
    ), code
    assert "#include <string.h>" in code


def test_no_inverse_or_an_avoided_one_leaves_the_plain_call() -> None:
    directions, code = _improved(CODEC, "", "txt_width", ["txt_escape"], avoid=("txt_unescape",))
    assert directions == ["call txt_escape on the input"] and "txt_unescape(" not in code
    with using(read_types("")):
        api = {d.name: d for d in parse_prototypes(CODEC + "int txt_fold(const char *in, char **out);\n")}
    assert fresh_output(api["txt_fold"]) == (1, None)
    assert fresh_output(api["b64_encode"]) == (2, 3)
    assert fresh_output(api["b64_check"]) is None
