"""Headers that leave their parameters unnamed: what the shapes alone say.

An invented packet-capture API spelled the way such headers are (`f(const char *, char *)`):
one constructor takes a device name, others open a saved capture from a path or a stream, all
with an unnamed error buffer the library fills to a size of its own; one makes a handle from
two numbers alone.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_roles import roles
from fuzzkit.header_releasers import find_releasers

CAPTURE = """\
typedef struct cap cap_t;
cap_t *cap_create(const char *, char *);
cap_t *cap_open_offline(const char *, char *);
cap_t *cap_fopen_offline(FILE *, char *);
int cap_next_ex(cap_t *, struct cap_pkthdr **, const unsigned char **);
void cap_close(cap_t *);
"""
# An invented session library: made through `T **`, released by a `dealloc`.
SESSION = ("typedef struct ss_ctx ss_ctx_t;\nint ss_create(ss_ctx_t **session, int profile);\n"
           "int ss_dealloc(ss_ctx_t *session);\n")
COMPILER = """\
cap_t *cap_open_dead(int, int);
int cap_compile(cap_t *, struct cap_program *, const char *, int, unsigned int);
"""


def _draft(name: str, text: str = CAPTURE) -> str:
    api = parse_prototypes(text)
    target = next(f for f in api if f.name == name)
    analysis = analyze_function(target, api)
    skeleton = default_skeleton(analysis.archetype)
    return write_harness(target, api, ["cap.h"], analysis.archetype, skeleton).code


def _body(name: str, text: str) -> str:
    code = _draft(name, text)
    return code[code.index("LLVMFuzzerTestOneInput"):]


def _kinds(name: str, text: str = CAPTURE) -> list[str]:
    idx = ApiIndex(parse_prototypes(text))
    return [r.kind for r in roles(idx.by_name[name], idx)]


def test_an_unnamed_char_pointer_after_the_input_is_room_the_library_writes() -> None:
    assert _kinds("cap_create") == ["text", "outbuf"]
    assert _kinds("cap_fopen_offline") == ["file", "outbuf"]


def test_a_handle_read_from_the_input_is_opened_from_it_not_named_by_it() -> None:
    """The capture file openers read the input; a device name reads nothing of it."""
    code = _draft("cap_next_ex")
    assert "cap_open_offline(" in code or "cap_fopen_offline(" in code, code
    assert "cap_create(" not in code, code
    assert "lf_take_str" not in code, code  # the error buffer is room, not a short string


def test_an_openers_unnamed_writable_string_is_no_mode() -> None:
    """`open(const char *, char *)`: a path and an error buffer; with `const char *`: path, mode."""
    with_mode = CAPTURE + "cap_t *cap_open_mode(const char *, const char *);\n"
    assert _kinds("cap_open_offline") == ["path", "outbuf"]
    assert _kinds("cap_open_mode", with_mode) == ["path", "mode"]
    assert not re.search(r'open_offline\([^;]*"rb"\)', _draft("cap_next_ex"))


def test_a_handle_the_input_does_not_feed_comes_from_the_constructor_needing_no_made_up_name() -> None:
    """A compiler's handle: `open_dead(int, int)` makes one; `create(device, errbuf)` names a device."""
    code = _draft("cap_compile", CAPTURE + COMPILER)
    assert "cap_open_dead(" in code and "cap_create(" not in code, code


def test_a_release_verb_fused_before_its_noun_names_a_releaser() -> None:
    """`freecode(struct cap_program *)` releases what a compile filled; `freeze` releases nothing."""
    api = parse_prototypes("void cap_freecode(struct cap_program *);\nvoid cap_freeze(struct cap_state *);\n"
                           "void cap_freealldevs(struct cap_if *);\n")
    assert {r.function for r in find_releasers(api, {}, [], {})} == {"cap_freecode", "cap_freealldevs"}


def test_a_stream_given_to_an_object_closed_by_a_close_is_not_closed_again() -> None:
    """`cap_close(cap)` closes the `FILE *` `cap_fopen_offline` was given: no second fclose."""
    code = _draft("cap_next_ex", "typedef struct cap cap_t;\ncap_t *cap_fopen_offline(FILE *, char *);\n"
                  "int cap_next_ex(cap_t *, struct cap_pkthdr **, const unsigned char **);\n"
                  "void cap_close(cap_t *);\n")
    assert re.search(r"if \((\w+) != NULL\) (fp\w*) = NULL;", code), code
    assert re.search(r"if \(fp\w* != NULL\) fclose\(fp\w*\);", code)  # when the open failed


def test_a_dealloc_releases_its_handle() -> None:
    """`ss_dealloc(ctx)` releases what `ss_create(&ctx, ...)` made: never `free()` on it."""
    text = SESSION + "int ss_unprotect(ss_ctx_t *ctx, const void *packet, int len);\n"
    assert {r.function for r in find_releasers(parse_prototypes(text), {}, [], {})} == {"ss_dealloc"}
    body = _body("ss_unprotect", text)
    assert "ss_dealloc(" in body and "free(" not in body, body


def test_a_packet_transformed_in_place_gets_the_input_and_its_length() -> None:
    """`ss_protect(ctx, void *packet, int *len)` takes no other data: the input is copied in, with room."""
    body = _body("ss_protect", SESSION + "int ss_protect(ss_ctx_t *ctx, void *rtp_hdr, int *len_ptr);\n")
    assert re.search(r"memcpy\((packet\w*), data, size\);", body), body
    assert re.search(r"(packet_len\w*) = \(int\)size;", body), body
    assert re.search(r"ss_protect\(\w+, \(void \*\)packet\w*, &packet_len\w*\)", body), body


def test_a_library_wide_initializer_runs_once_before_anything() -> None:
    """`ss_init(void)` sets up the whole library (its cipher kernel); `ss_init_policy(&p)` one record."""
    body = _body("ss_unprotect", SESSION + "int ss_init(void);\nint ss_init_policy(ss_policy_t *p);\n"
                 "int ss_unprotect(ss_ctx_t *ctx, const void *packet, int len);\n")
    once = re.search(r"static int (library_ready\w*) = 0;\s+"
                     r"if \(!\1\) \{ \1 = 1; \(void\)ss_init\(\); \}", body)
    assert once and once.start() < body.index("ss_create("), body
    assert "ss_init_policy" not in body


def test_a_node_loaded_into_a_top_node_given_is_the_top_nodes() -> None:
    """`ml_load_string(top, s, cb)` adds what it reads to `top`: only `top` is deleted."""
    text = ("typedef struct ml_node_s ml_node_t;\nml_node_t *ml_new_xml(const char *version);\n"
            "ml_node_t *ml_load_string(ml_node_t *top, const char *s, int (*cb)(ml_node_t *));\n"
            "void ml_delete(ml_node_t *node);\n")
    idx = ApiIndex(parse_prototypes(text))
    assert not idx.returns_owned(idx.by_name["ml_load_string"])
    assert idx.returns_owned(idx.by_name["ml_new_xml"])


def test_a_result_buffer_of_an_object_fed_otherwise_is_no_packet() -> None:
    """With `ss_set_input(ctx, data, len)`, `ss_export(ctx, out, &len)` only writes its result there."""
    body = _body("ss_export", SESSION + "int ss_set_input(ss_ctx_t *ctx, const unsigned char *d, size_t n);\n"
                 "int ss_export(ss_ctx_t *ctx, void *out, int *out_len);\n")
    assert "packet" not in body and "ss_set_input(" in body, body
