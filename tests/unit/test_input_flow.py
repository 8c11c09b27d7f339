"""The input-flow gate and its repair: a harness whose library calls never see the input."""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from agents.offline.fixer_input import feed_input
from fuzzkit.input_flow import input_reaches_api, tainted_names
from tests.types_text import render_types

API = parse_prototypes("""
codec_ctx *codec_ctx_new(int flags);
int codec_set_buffer(codec_ctx *ctx, const uint8_t *buf, size_t len);
int codec_decode(codec_ctx *ctx, uint8_t *out, size_t out_len, int fmt);
void codec_ctx_free(codec_ctx *ctx);
""")
NAMES = [f.name for f in API]

UNFED = """\
static int helper(const uint8_t *p, size_t n) { return n ? p[0] : 0; }
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lf_input_t lf_in = {data, size};
  int flags = (int)lf_take_int(&lf_in, 0, 255);
  int fmt = data[0];
  uint8_t *out = malloc(64 + size);
  codec_ctx *ctx = codec_ctx_new(flags);
  if (ctx == NULL) return 0;
  codec_decode(ctx, out, 64 + size, fmt);  /* decodes nothing: no buffer */
  codec_ctx_free(ctx);
  free(out);
  return 0;
}
"""


def test_option_scalars_taken_from_the_input_do_not_count_as_the_input() -> None:
    assert "flags" not in tainted_names(UNFED) and "fmt" not in tainted_names(UNFED)
    assert not input_reaches_api(UNFED, NAMES)


def test_the_input_reaches_through_copies_structs_and_setters() -> None:
    copied = UNFED.replace("  codec_decode(", "  uint8_t *copy = malloc(size);\n"
                           "  memcpy(copy, data, size);\n  codec_set_buffer(ctx, copy, size);\n"
                           "  codec_decode(")
    assert input_reaches_api(copied, NAMES)
    via_struct = UNFED.replace("codec_ctx_new(flags)", "codec_ctx_new(flags); struct src s = {data, size}; "
                               "codec_set_buffer(ctx, (const uint8_t *)s.p, s.n)")
    assert input_reaches_api(via_struct, NAMES)


def test_the_repair_hands_the_input_to_the_target_object_before_the_call() -> None:
    target = next(f for f in API if f.name == "codec_decode")
    code, how = feed_input(UNFED, target, API)
    assert how is not None and "codec_set_buffer" in how
    assert "codec_set_buffer(ctx, (const uint8_t *)data, (size_t)size);\n  codec_decode(" in code
    assert input_reaches_api(code, NAMES)


def test_no_repair_without_a_function_that_takes_input() -> None:
    api = [f for f in API if f.name != "codec_set_buffer"]
    target = next(f for f in api if f.name == "codec_decode")
    assert feed_input(UNFED, target, api) == (UNFED, None)


def test_the_gate_applies_only_where_a_function_takes_the_input_for_the_target() -> None:
    from fuzzkit.input_flow import feeder_exists

    by = {f.name: f for f in API}
    assert feeder_exists(by["codec_decode"], API)
    assert not feeder_exists(by["codec_set_buffer"], API)  # takes the buffer itself
    assert not feeder_exists(by["codec_decode"], [f for f in API if f.name != "codec_set_buffer"])


def test_a_leaked_out_parameter_is_released_with_the_documented_releaser() -> None:
    from agents.offline.fixer_leak import release_results
    from agents.offline.type_table import read_types, using

    api = parse_prototypes("""
int rr_parse_reply(const unsigned char *abuf, int alen, struct rr_reply **out);
void rr_free_data(void *dataptr);
char *rr_escape(const char *s);
""")
    code = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct rr_reply *out = NULL;
  char *esc = rr_escape("x");
  rr_parse_reply((const unsigned char *)data, (int)size, &out);
  return 0;
}
"""
    types = render_types("```c\nstruct rr_reply { int ttl; };\n```\nRelease functions:\n"
                         "- rr_free_data releases what rr_parse_reply allocates (by documentation)\n"
                         "- free releases what rr_escape allocates (by documentation)\n")
    target = next(f for f in api if f.name == "rr_parse_reply")
    with using(read_types(render_types(types))):
        fixed, added = release_results(code, target, api)
        assert "if (out != NULL) { rr_free_data(out); out = NULL; }\n  return 0;" in fixed
        escape = next(f for f in api if f.name == "rr_escape")
        fixed2, _ = release_results(code, escape, api)
        assert "free(esc)" in fixed2
    assert added and release_results(fixed, target, api)[1] == []  # not released twice


def test_a_feeder_known_only_by_its_shape_is_used_by_the_repair() -> None:
    api = parse_prototypes("""
acme_idec *acme_idec_new(int flags);
int acme_idec_append(acme_idec *idec, const uint8_t *data, size_t data_size);
int acme_idec_area(const acme_idec *idec, int *left, int *top);
void acme_idec_delete(acme_idec *idec);
""")
    target = next(f for f in api if f.name == "acme_idec_area")
    code = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  acme_idec *idec = acme_idec_new(0);
  int left = 0, top = 0;
  acme_idec_area(idec, &left, &top);
  acme_idec_delete(idec);
  return 0;
}
"""
    assert not input_reaches_api(code, [f.name for f in api])
    fixed, how = feed_input(code, target, api)
    assert how and "acme_idec_append(idec, (const uint8_t *)data, (size_t)size);" in fixed, fixed


def test_a_buffer_left_in_a_config_field_is_released_with_its_types_releaser() -> None:
    from agents.offline.fixer_leak import release_results
    from agents.offline.type_table import read_types, using

    api = parse_prototypes("""
int acme_init_config(acme_config *config);
int acme_decode(const uint8_t *data, size_t size, acme_config *config);
void acme_free_buffer(acme_buffer *buffer);
""")
    types = (
        "```c\ntypedef struct acme_config acme_config;\ntypedef struct acme_buffer acme_buffer;\n"
        "struct acme_buffer { uint8_t *rgba; size_t size; };\n"
        "struct acme_config { int flags; acme_buffer output; };\n```\nRelease functions:\n"
        "- acme_free_buffer releases acme_buffer * (parameter type)\n")
    code = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  acme_config config;
  acme_init_config(&config);
  acme_decode(data, size, &config);
  return 0;
}
"""
    target = next(f for f in api if f.name == "acme_decode")
    with using(read_types(render_types(types))):
        fixed, added = release_results(code, target, api)
    assert "acme_free_buffer(&config.output);\n  return 0;" in fixed, fixed
    assert added == ["release config.output (filled by acme_decode) with acme_free_buffer before returning"]
    # A field whose typedef hides a pointer (`acme_buffer_p output;`) holds no buffer by value:
    # `&config.output` would hand the releaser the field's address (an invalid free).
    hidden = types.replace("acme_buffer output;", "acme_buffer_p output;").replace(
        "typedef struct acme_buffer acme_buffer;", "typedef struct acme_buffer acme_buffer;\n"
        "typedef struct acme_buffer *acme_buffer_p;")
    with using(read_types(render_types(hidden))):
        unchanged, none = release_results(code, target, api)
    assert none == [] and "&config.output" not in unchanged, unchanged


def test_the_input_reaches_through_a_file_the_harness_wrote_it_to() -> None:
    """An image reader opened from a temporary file holding the input was judged unfed (the
    path is the helper's third argument, an array), so its repair attached the input as the
    reader's work buffer, which the library writes into: every later input crashed."""
    api = parse_prototypes("img *img_open(const char *path, const char *mode);\n"
                           "int img_read_buffer_setup(img *im, void *bp, long size);\n"
                           "int img_read_directory(img *im);\nvoid img_close(img *im);\n")
    code = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = -1;
  char path[512] = {0};
  img *im = NULL;
  fd = lf_tmpfile(data, size, path, sizeof path);
  if (fd < 0) goto lf_cleanup;
  im = img_open(path, "rb");
  if (im == NULL) goto lf_cleanup;
  img_read_directory(im);
lf_cleanup: ;
  if (im != NULL) img_close(im);
  return 0;
}
"""
    names = [f.name for f in api]
    assert "path" in tainted_names(code) and input_reaches_api(code, names)
    # A scalar handed alongside the input stays a scalar: a length is not the input.
    scalar = UNFED.replace("  codec_decode(", "  size_t n = size;\n  lf_note(data, n);\n  codec_decode(")
    assert "n" not in tainted_names(scalar) and not input_reaches_api(scalar, NAMES)


CTOR_API = parse_prototypes("""
struct pix_alloc { int unused; };
pix_ctx *pix_ctx_new2(struct pix_alloc *alloc, int flags);
int pix_set_buffer(pix_ctx *ctx, const void *buf, size_t size);
int pix_decode(pix_ctx *ctx, void *out, size_t len, int fmt);
void pix_ctx_free(pix_ctx *ctx);
""")

UNFED_CTOR = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int flags = size ? data[0] : 0;
  pix_ctx *ctx = pix_ctx_new2(NULL, flags);
  uint8_t out[64];
  if (ctx == NULL) return 0;
  pix_decode(ctx, out, sizeof out, 0);
  pix_ctx_free(ctx);
  return 0;
}
"""


def test_a_constructor_target_whose_object_is_never_fed_is_gated_and_repaired() -> None:
    """``ctx_new2(alloc, flags)`` takes no bytes; what it makes gets them from ``set_buffer``."""
    from fuzzkit.input_flow import feeder_exists

    by = {f.name: f for f in CTOR_API if f.name}
    target = by["pix_ctx_new2"]
    names = [f.name for f in CTOR_API]
    assert feeder_exists(target, CTOR_API)
    assert not feeder_exists(target, [f for f in CTOR_API if f.name != "pix_set_buffer"])
    assert not input_reaches_api(UNFED_CTOR, names)
    fixed, how = feed_input(UNFED_CTOR, target, CTOR_API)
    assert how and "pix_set_buffer" in how, fixed
    assert ("pix_ctx *ctx = pix_ctx_new2(NULL, flags);\n"
            "  if (ctx != NULL) pix_set_buffer(ctx, (const void *)data, (size_t)size);\n") in fixed
    assert input_reaches_api(fixed, names)
