"""A buffer given as start and end pointers: the end is the start plus the length.

Shapes from an unseen regex library: ``(str, end, start, range)`` where ``start`` and
``range`` are positions inside ``[str, end]``, and a ``(name, name_end)`` key.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_roles import roles

API = """
typedef struct kx_re kx_re;
int kx_new(kx_re **re, const unsigned char *pattern, const unsigned char *pattern_end, int flags);
void kx_free(kx_re *re);
int kx_search(kx_re *re, const unsigned char *str, const unsigned char *end, \
const unsigned char *start, const unsigned char *range, int option);
int kx_name_to_group(kx_re *re, const char *name, const char *name_end, int **nums);
int kx_two_strings(const char *a, const char *b);
const unsigned char *kx_get_tag_start(kx_re *re, int n);
typedef struct kx_regs { int n; int *beg; } kx_region;
int kx_scan(kx_re *re, const unsigned char *str, const unsigned char *end, kx_region *region, \
int option, int (*cb)(int, int, kx_region *, void *), void *arg);
"""


def _draft(name: str) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == name)
    arche = analyze_function(target, decls).archetype
    return write_harness(target, decls, ["kx.h"], arche, default_skeleton(arche)).code


def test_end_and_positions_get_their_roles() -> None:
    decls = parse_prototypes(API)
    idx = ApiIndex(decls)
    kinds = [(r.kind, r.pair) for r in roles(idx.by_name["kx_search"], idx)]
    assert kinds[1:5] == [("bytes", 2), ("end_ptr", 1), ("pos_ptr", 1), ("pos_ptr", 1)]
    # Two strings with no end-like name stay two strings.
    assert [r.kind for r in roles(idx.by_name["kx_two_strings"], idx)] == ["text", "text"]


def test_the_subject_ends_at_the_input_s_end_and_positions_point_into_it() -> None:
    code = _draft("kx_search")
    call = code[code.index("kx_search("):]
    call = call[: call.index(";")]
    args = [a.strip() for a in call[len("kx_search("):-1].split(",")]
    assert args[1:5] == ["(const unsigned char *)data", "(const unsigned char *)data + size",
                         "(const unsigned char *)data", "(const unsigned char *)data + size"], code


def test_a_range_that_is_not_the_input_ends_at_its_terminator() -> None:
    code = _draft("kx_name_to_group")
    assert "(const char *)data, (const char *)data + size" in code, code
    # The pattern the object is compiled from is a short string of its own.
    assert "(const unsigned char *)pattern + strlen(pattern)" in code, code


def test_a_getter_named_start_is_not_an_initializer_of_an_opaque_object() -> None:
    code = _draft("kx_search")
    assert "kx_get_tag_start" not in code and "kx_new(&" in code, code


def test_a_call_that_takes_the_whole_input_is_not_repeated_as_a_step() -> None:
    """`kx_scan` fills a region like a stepper, but scans the whole input on every call."""
    code = _draft("kx_search")
    use = code[code.index("/* @LF:USE */"):code.index("/* @LF:CLEANUP */")]
    assert "kx_scan(" in use, code
    done = use[use.index("int done"):].split(";")[0]
    assert done.rstrip().endswith("1 /* it takes the whole input: once */"), use
