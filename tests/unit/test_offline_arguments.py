"""Arguments the offline draft passes: option values from the header, slot counts, NULL contexts."""

from __future__ import annotations

from agents.offline.synth_choices import DEFAULT_INT, int_choices
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

TYPES = (
    "```c\n#define ACME_OK 0\n#define ACME_ENOMEM -1\n\n"
    "#define ACME_ATTACH_FREE_ON_DETACH 1\n#define ACME_ATTACH_GROWABLE_RESIZABLE 2\n"
    "#define ACME_ATTACH_READONLY 4\n#define ACME_ATTACH_NOSYNC 8\n#define ACME_ATTACH_SHUTDOWN 16\n\n"
    "#define ACME_OPEN_READ 1\n#define ACME_OPEN_WRITE 2\n```\n"
)


def test_flags_take_the_functions_own_constants_but_never_give_the_buffer_away() -> None:
    with using(read_types(render_types(TYPES))):
        # A bit set: no flag at all is one of the choices; free-on-detach and resizable are not.
        assert int_choices("flags", "acme_attach") == (0, 4, 8, 16)
        assert int_choices("mFlags", "acme_attach") == (0, 4, 8, 16)
        assert int_choices("flags", "acme_file_open") == DEFAULT_INT  # ACME_OPEN_* lacks "file"
        assert int_choices("flags", "acme_open") == (0, 1, 2)
        # An opener's mode reads (the input is what it opens): its own read constant, not
        # ACME_ATTACH_READONLY, though that is shorter.
        assert int_choices("mode", "acme_file_open") == (1,)
        # Not an option parameter, or the library's prefix alone: nothing is read into it.
        assert int_choices("count", "acme_attach") != (0, 4, 8, 16)
        assert int_choices("flags", "acme") == DEFAULT_INT


def test_a_status_code_takes_the_headers_status_values() -> None:
    statuses = "```c\n#define ACME_ERANGE -100\n#define ACME_EINVAL -101\n```\n"
    with using(read_types(render_types(TYPES + statuses))):
        # Named a status, or any integer a describer of statuses takes: the codes, negative ones too.
        assert int_choices("rc", "acme_strerror") == (-101, -100, -1, 0)
        assert int_choices("errnum", "acme_attach") == (-101, -100, -1, 0)
        assert int_choices("arg0", "acme_get_error_message") == (-101, -100, -1, 0)
        # Neither a status name nor a describer: the default range.
        assert int_choices("arg0", "acme_seek") == DEFAULT_INT
        assert int_choices("value", "acme_strerror") != (-101, -100, -1, 0)
    many = "".join(f"#define ACME_E{i} {-i}\n" for i in range(1, 80))
    with using(read_types(render_types("```c\n#define ACME_OK 0\n" + many + "```\n"))):
        assert int_choices("rc", "acme_strerror") == (-79, 0)  # past 64 values: their range
    with using(read_types(render_types(TYPES))):
        assert int_choices("rc", "acme_strerror") == (-1, 0, 0)  # two values read as a set


def test_the_count_of_a_one_slot_object_array_is_one() -> None:
    from agents.offline.analysis import analyze_function
    from agents.offline.cdecl import parse_prototypes
    from agents.offline.synth import default_skeleton, write_harness
    from agents.offline.synth_api import ApiIndex
    from agents.offline.synth_roles import roles

    api = parse_prototypes("""
typedef struct acme_code acme_code;
void acme_code_free(acme_code *code);
int acme_restore(acme_code **codes, int number_of_codes, const unsigned char *bytes, size_t nbytes);
int acme_split(acme_code **parts, int flags);
""")
    idx = ApiIndex(api)
    assert [(r.kind, r.choices) for r in roles(api[1], idx)][:2] == [("out_ptr", ()), ("int", (1, 1))]
    assert roles(api[2], idx)[1].choices != (1, 1)  # not a count: an option
    analysis = analyze_function(api[1], api)
    code = write_harness(api[1], api, ["acme.h"], analysis.archetype,
                         default_skeleton(analysis.archetype)).code
    assert "acme_restore(&codes, number_of_codes," in code
    assert "number_of_codes = (int)lf_take_int(&lf_in, 1, 1);" in code


OPAQUE_CODE = """
typedef struct acme_code acme_code;
acme_code *acme_compile(const char *pattern, size_t length, int *err, acme_cctx *ccontext);
void acme_code_free(acme_code *code);
int acme_match(const acme_code *code, const char *subject, size_t length, int options);
"""


def match_draft(tag: str, constructor: str, avoid: list[str]) -> str:
    """The draft for acme_match, whose compile step takes an opaque context (struct ``tag``)."""
    from agents.offline.analysis import analyze_function
    from agents.offline.cdecl import parse_prototypes
    from agents.offline.synth import default_skeleton, write_harness
    from agents.offline.type_table import read_types, using

    api = parse_prototypes(f"typedef struct {tag} acme_cctx;\n{constructor}\n{OPAQUE_CODE}")
    target = next(f for f in api if f.name == "acme_match")
    types = (f"```c\ntypedef struct {tag} acme_cctx;\ntypedef struct acme_code acme_code;\n"
             f"struct {tag};  /* opaque: only pointers, made by the API */\n```\n")
    with using(read_types(render_types(types))):
        analysis = analyze_function(target, api)
        return write_harness(target, api, ["acme.h"], analysis.archetype,
                             default_skeleton(analysis.archetype), avoid=avoid).code


def test_an_opaque_context_none_of_whose_constructors_may_be_called_is_null() -> None:
    # A lesson said to avoid the context's only constructor: a zeroed struct of an opaque type
    # cannot compile ("variable has incomplete type"), so the draft passes NULL (the defaults).
    made = "acme_cctx *acme_cctx_create(void *gctx);\nvoid acme_cctx_free(acme_cctx *c);"
    code = match_draft("acme_cctx", made, ["acme_cctx_create"])
    assert "acme_cctx *acme_cctx2 = NULL;" in code
    assert "&err, acme_cctx2);" in code and "memset(&acme_cctx" not in code
    assert "acme_cctx_create" not in code.split("LLVMFuzzerTestOneInput")[1]


def test_an_opaque_context_the_api_list_has_no_constructor_for_is_null() -> None:
    # The prompt's API list was trimmed to a budget and lost the context's constructor; the
    # Types section still says the record is opaque.
    code = match_draft("acme_real_cctx", "", [])
    assert "acme_cctx *acme_cctx2 = NULL;" in code and "memset(&" not in code
    assert "&err, acme_cctx2);" in code


def test_a_count_before_its_string_array_bounds_an_array_the_harness_makes() -> None:
    """`make(…, int nParam, const char **azParam)`: a filled array, never `&one_string`.

    The library reads as many strings as the count says (pairs of them, or up to a NULL); a
    count from the input over a single slot read past it in a constructor the target needs.
    """
    from agents.offline.analysis import analyze_function
    from agents.offline.cdecl import parse_prototypes
    from agents.offline.synth import default_skeleton, write_harness
    from agents.offline.synth_api import ApiIndex
    from agents.offline.synth_roles import roles

    api = parse_prototypes("""
typedef const char *acme_name;
acme_name acme_name_make(const char *zBase, int nParam, const char **azParam);
void acme_name_free(acme_name);
long long acme_name_int(acme_name z, const char *zKey, long long dflt);
int acme_log(int n, char **out);
""")
    idx = ApiIndex(api)
    assert [r.kind for r in roles(api[0], idx)][1:] == ["count", "strarray"]
    assert [r.kind for r in roles(api[3], idx)] != ["count", "strarray"]  # an out-parameter
    analysis = analyze_function(api[2], api)
    code = write_harness(api[2], api, ["acme.h"], analysis.archetype,
                         default_skeleton(analysis.archetype)).code
    assert "char *strings[9] = {NULL};" in code
    assert "count = lf_take_int(&lf_in, 0, 4);" in code
    assert ", count, (const char **)strings);" in code


NAME_TYPES = render_types(
    "```c\ntypedef const char *acme_name;\n```\nRelease functions:\n"
    "- acme_name_free releases what acme_name_make allocates (by documentation)\n"
)


def name_draft(target: str) -> str:
    """The draft for ``target`` with the Types section above active (as the offline model has it)."""
    from agents.offline.analysis import analyze_function
    from agents.offline.cdecl import parse_prototypes
    from agents.offline.synth import default_skeleton, write_harness

    with using(read_types(render_types(NAME_TYPES))):
        # The releaser is named only by the Types section: the API list left it out.
        api = parse_prototypes("""
acme_name acme_name_make(const char *zBase, int nParam, const char **azParam);
long long acme_name_int(acme_name, const char *, long long);
int acme_complete16(const void *sql);
""")
        fn = next(d for d in api if d.name == target)
        analysis = analyze_function(fn, api)
        return write_harness(fn, api, ["acme.h"], analysis.archetype,
                             default_skeleton(analysis.archetype)).code


def test_a_string_typedef_the_library_makes_and_releases_comes_from_its_constructor() -> None:
    """`lib_name` standing for `const char *`: an input string is not one (the library reads
    what its constructor laid out after the text), so the harness makes and releases one."""
    code = name_draft("acme_name_int")
    assert "acme_name2 = acme_name_make(" in code
    assert "acme_name_free(acme_name2);" in code
    # unnamed `const char *` then an unnamed integer: the text keeps its terminator
    assert "acme_name_int(acme_name2, (const char *)text," in code


def test_text_of_wide_units_ends_with_a_zero_unit() -> None:
    code = name_draft("acme_complete16")
    assert "wide_text = lf_wstrndup(data, size);" in code
    assert "memset(s + n, 0, 4);" in code
    assert "acme_complete16((const void *)wide_text)" in code


def test_a_byte_string_typedef_released_by_a_same_type_releaser_is_still_the_input() -> None:
    """`typedef const unsigned char *acme_sptr`: a getter returns one and some releaser takes
    `unsigned char *`, yet a pattern parameter of that type is where the input goes."""
    from agents.offline.analysis import analyze_function
    from agents.offline.cdecl import parse_prototypes
    from agents.offline.synth import default_skeleton, write_harness

    types = render_types("```c\ntypedef const unsigned char *acme_sptr;\ntypedef struct acme_md acme_md;\n"
                         "```\nRelease functions:\n"
                         "- acme_pattern_free releases unsigned char * (parameter type)\n")
    with using(read_types(render_types(types))):
        api = parse_prototypes("""
acme_md *acme_md_create(unsigned int n);
void acme_md_free(acme_md *md);
acme_sptr acme_get_mark(acme_md *md);
void acme_pattern_free(unsigned char *p);
int acme_check(acme_sptr, size_t, unsigned int);
""")
        fn = api[4]
        code = write_harness(fn, api, ["acme.h"], analyze_function(fn, api).archetype,
                             default_skeleton(analyze_function(fn, api).archetype)).code
    assert "acme_check((acme_sptr)data, (size_t)size," in code
    assert "acme_get_mark" not in code


def test_a_tree_from_a_conversion_not_from_a_constructor_that_needs_a_tree() -> None:
    """`text2tree` makes the first tree; `create_element(defs, …, &element)` needs one already
    (building its input recursed until the draft failed outright). An error-message string is
    room the library writes into, not a short input string."""
    from agents.offline.analysis import analyze_function
    from agents.offline.cdecl import parse_prototypes
    from agents.offline.synth import default_skeleton, write_harness

    types = "```c\ntypedef acme_node_st *acme_node;\ntypedef struct acme_node_st acme_node_st;\n```\n"
    with using(read_types(render_types(types))):
        api = parse_prototypes("""
int acme_text2tree(const char *text, acme_node *tree, char *errorDescription);
int acme_create_element(acme_node definitions, const char *name, acme_node *element);
int acme_write_value(acme_node root, const char *name, const void *value, int len);
""")
        fn = api[2]
        arche = analyze_function(fn, api).archetype
        code = write_harness(fn, api, ["acme.h"], arche, default_skeleton(arche)).code
    assert "acme_text2tree(" in code and "acme_create_element(" not in code
    assert "(char *)out_buf)" in code


def test_a_length_named_after_the_error_buffer_is_its_capacity() -> None:
    """`tree_parse(const char *input, char *error_buffer, size_t error_buffer_size)`: the input
    is a terminated copy and the size is the error buffer's (it was the input's, unterminated)."""
    from agents.offline.analysis import analyze_function
    from agents.offline.cdecl import parse_prototypes
    from agents.offline.synth import default_skeleton, write_harness

    api = parse_prototypes("""
typedef struct acme_val_s *acme_val;
acme_val acme_tree_parse(const char *input, char *error_buffer, size_t error_buffer_size);
void acme_tree_free(acme_val v);
""")
    fn = api[0]
    arche = analyze_function(fn, api).archetype
    code = write_harness(fn, api, ["acme.h"], arche, default_skeleton(arche)).code
    assert "acme_tree_parse((const char *)text, (char *)out_buf, (size_t)out_cap);" in code


def test_the_capacity_of_a_one_slot_object_array_is_one() -> None:
    """``acme_io_prepare(ctx, acme_sock *socks[], unsigned max_socks, unsigned *num_socks)``: the
    library fills up to ``max_socks`` slots; a capacity from the input wrote past the one slot."""
    from agents.offline.cdecl import parse_prototypes
    from agents.offline.synth_api import ApiIndex
    from agents.offline.synth_roles import roles

    api = parse_prototypes("""
acme_ctx *acme_ctx_new(void);
void acme_ctx_free(acme_ctx *ctx);
unsigned acme_io_prepare(acme_ctx *ctx, acme_sock *socks[], unsigned max_socks, unsigned *num_socks);
int acme_pick(acme_sock **out, unsigned cap);
""")
    idx = ApiIndex(api)
    assert [(r.kind, r.choices) for r in roles(api[2], idx)][1:3] == [("out_ptr", ()), ("int", (1, 1))]
    assert [(r.kind, r.choices) for r in roles(api[3], idx)] == [("out_ptr", ()), ("int", (1, 1))]
