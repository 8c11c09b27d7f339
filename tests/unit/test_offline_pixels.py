"""An image encoder's API: pixel buffers measured by dimensions, output hooks in a record,
enum options, a quality setting named only by the header's wrapper. Invented names; each test
states one general rule."""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """\
int px_config_init_internal(px_config *, px_preset, float, int);
int px_picture_init(px_picture *pic);
void px_picture_free(px_picture *pic);
int px_picture_import_rgb(px_picture *pic, const uint8_t *rgb, int rgb_stride);
int px_encode(const px_config *config, px_picture *pic);
size_t px_encode_rgb(const uint8_t *rgb, int width, int height, int stride, uint8_t **output);
void px_free(void *ptr);
"""

TYPES = render_types("""\
```c
typedef struct px_config px_config;
typedef struct px_picture px_picture;
typedef enum px_preset px_preset;
typedef int (*px_writer_fn)(const uint8_t *, size_t, const px_picture *);
struct px_config { int lossless; float quality; int method; };
struct px_picture { int use_alpha; int width; int height; uint8_t *rgb; int stride; px_writer_fn writer; void *custom_ptr; };
enum px_preset { PX_PRESET_DEFAULT = 0, PX_PRESET_PHOTO = 2, PX_PRESET_TEXT = 7 };
```
Release functions:
- px_picture_free releases px_picture * (parameter type)
- px_free releases what px_encode_rgb allocates (by documentation)
Calls in the header's own wrappers (pass the same fixed arguments):
- px_config_init_internal(config, PX_PRESET_DEFAULT, 75.f, 3) in px_config_init(config)
- px_config_init_internal(config, preset, quality, 3) in px_config_preset(config, preset, quality)
""")  # noqa: E501


def _draft(name: str) -> str:
    with using(read_types(TYPES)):
        api = parse_prototypes(API)
        target = next(d for d in api if d.name == name)
        arche = analyze_function(target, api).archetype
        return write_harness(target, api, ["px.h"], arche, default_skeleton(arche)).code


def _body(code: str) -> str:
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_pixel_dimensions_come_from_options_and_fit_the_payload() -> None:
    """Width and height from option bytes, rows 4 bytes per pixel apart, no more rows than the
    payload holds: the library never reads past the input."""
    b = _body(_draft("px_encode_rgb"))
    w = re.search(r"(\w+) = lf_take_int\(&\w+, 1, 64\);", b)
    assert w, b
    stride = re.search(rf"(\w+) = {w.group(1)} \* 4;", b)
    assert stride, b
    assert re.search(rf"if \(\(size_t\){stride.group(1)} \* \(size_t\)(\w+) > size\) \1 = \(int\)\(size / "
                     rf"\(size_t\){stride.group(1)}\);", b), b
    assert re.search(rf"px_encode_rgb\(\(const uint8_t \*\)data, \(int\){w.group(1)}, \(int\)\w+, "
                     rf"\(int\){stride.group(1)}, &\w+\)", b), b
    assert "px_free(" in b  # the documented releaser of the output


def test_a_record_with_dimension_fields_is_sized_before_its_pixels_are_imported() -> None:
    b = _body(_draft("px_picture_import_rgb"))
    width = b.index("->width = ")
    assert width < b.index("->height = ") < b.index("px_picture_import_rgb(")
    assert re.search(r"px_picture_import_rgb\(&\w+, \(const uint8_t \*\)data, \(int\)\w+\)", b), b


def test_an_encoder_is_given_pixels_through_the_importer_and_a_writer_that_accepts_output() -> None:
    """The target takes only a config and a picture: the picture is fed by the function that
    imports pixels, and its NULL output hook (which the library calls) gets a callback."""
    code = _draft("px_encode")
    b = _body(code)
    assert b.index("px_picture_import_rgb(") < b.index("px_encode(")
    hook = re.search(r"\w+\.writer = (\w+);", b)
    assert hook, b
    assert re.search(rf"static int {hook.group(1)}\(const uint8_t \*a0, size_t a1, const px_picture \*a2\)"
                     r" \{[^}]*return \(int\)a1;", code), code


def test_enum_options_are_the_enum_values_and_an_unnamed_quality_gets_its_range() -> None:
    """The preset comes from the enum's own values; the unnamed float is ``quality`` in the
    header's wrapper, so it is drawn from 0..100 instead of any finite double."""
    code = _draft("px_encode")
    assert re.search(r"static const int \w+\[\] = \{0, 2, 7\};", code), code
    assert re.search(r"\w+ = \(float\)lf_take_int\(&\w+, 0, 100\);", code), code
    assert "lf_take_double" not in _body(code)


def test_text_beside_dimensions_stays_text() -> None:
    """``const char *`` is read up to its NUL: a caption drawn in a box is not pixels."""
    with using(read_types(TYPES)):
        caption = "int px_draw_caption(px_picture *pic, const char *caption, int width, int height);\n"
        api = parse_prototypes(API + caption)
        target = next(d for d in api if d.name == "px_draw_caption")
        code = write_harness(target, api, ["px.h"], "object_lifecycle",
                             default_skeleton("object_lifecycle")).code
    assert "lf_take_int(&lf_in, 1, 64)" not in code, code
    assert re.search(r"px_draw_caption\(&\w+, \(const char \*\)text", code), code
