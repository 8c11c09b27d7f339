"""Header facts as data: the Types section round-trips, macro values are evaluated safely."""

from __future__ import annotations

from agents.offline.type_table import read_types
from fuzzkit.header_facts import Enum, HeaderFacts, Macro, Record, Releaser, Typedef, stream_types
from fuzzkit.header_facts_collect import _int_value

FACTS = HeaderFacts(
    typedefs=[Typedef("acme_u8", "unsigned char", "unsigned char"),
              Typedef("acme_pipe", "struct acme_pipe_s", "struct acme_pipe_s"),
              Typedef("acme_read_fn", "int (*)(void *, acme_u8 *, unsigned long)",
                      "int (*)(void *, unsigned char *, unsigned long)")],
    records=[Record("struct", "acme_pipe_s", ("acme_pipe",),
                    (("next_in", "const acme_u8 *"), ("avail_in", "unsigned int"),
                     ("next_out", "acme_u8 *"), ("avail_out", "unsigned int")), False),
             Record("struct", "acme_ctx", (), (), True)],
    enums=[Enum("acme_status", (("ACME_STATUS_ERROR", 0), ("ACME_STATUS_OK", 1)))],
    macros=[Macro("ACME_OK", 0, 1), Macro("ACME_EINVAL", -2, 1), Macro("ACME_FINISH", 4, 2)],
    releasers=[Releaser(function="acme_free_reply", releases="what acme_parse_reply allocates",
                        evidence="by documentation")],
    returns={"acme_parse": "Returns 1 on success, 0 on error."},
    retains=["acme_set_name"], consumes=["acme_emit"], inside_only=["acme_visit_depth"],
    borrows=["acme_next_row"],
)


def test_the_rendered_section_reads_back_into_the_same_facts() -> None:
    assert HeaderFacts.from_dict(FACTS.to_dict()) == FACTS
    table = read_types(FACTS.render())
    assert table.canonical["acme_u8"] == "unsigned char"
    assert table.canonical["acme_read_fn"].startswith("int (*)(")
    assert [f for f, _t in table.records["acme_pipe"].fields] == ["next_in", "avail_in", "next_out",
                                                                  "avail_out"]
    assert table.records["acme_ctx"].opaque
    assert table.constants == {"ACME_STATUS_ERROR": 0, "ACME_STATUS_OK": 1, "ACME_OK": 0,
                               "ACME_EINVAL": -2, "ACME_FINISH": 4}
    assert table.enum_members["acme_status"] == ["ACME_STATUS_ERROR", "ACME_STATUS_OK"]
    assert table.releasers == [("acme_free_reply", "what acme_parse_reply allocates")]
    assert table.returns["acme_parse"].startswith("Returns 1")
    assert table.retains == {"acme_set_name"} and table.consumes == {"acme_emit"}
    assert table.inside_only == {"acme_visit_depth"} and table.borrows == {"acme_next_row"}
    assert stream_types(FACTS) == {"acme_pipe_s", "acme_pipe"}


def test_macro_values_are_integer_constant_expressions_and_nothing_else() -> None:
    assert _int_value("(1 << 3)") == 8 and _int_value("0x10u") == 16 and _int_value("(~0U)") == -1
    assert _int_value("(1 << 99999999)") is None  # bounded: never a huge integer
    assert _int_value("abc") is None and _int_value("__import__") is None
    assert _int_value('"text"') is None and _int_value("(x) + 1") is None
    # C's octal literals (a file-mode mask), alone or in an expression; `09` is no literal
    assert _int_value("0170000") == 0o170000 and _int_value("(0140000 | 010)") == 0o140010
    assert _int_value("0") == 0 and _int_value("09") is None and _int_value("1.0") is None


def test_a_releaser_taking_its_maker_s_object_is_linked_by_documentation() -> None:
    from agents.offline.cdecl import parse_prototypes
    from fuzzkit.header_releasers import find_releasers

    api = parse_prototypes(
        "unsigned char *acme_get_error(struct acme_h *hand, int verbose);\n"
        "void acme_free_error(struct acme_h *hand, unsigned char *str);\n"
        "void acme_free(struct acme_h *hand);\n")
    docs = {"acme_get_error": "Returns a string which should be freed with acme_free_error.",
            "acme_free_error": "Free an error returned from acme_get_error."}
    found = find_releasers(api, docs, [], {})
    assert Releaser(function="acme_free_error", releases="what acme_get_error allocates",
                    evidence="by documentation") in found
    # Its own documentation names what it frees, not something it allocates.
    assert not [r for r in found if r.releases == "what acme_free_error allocates"]


def test_a_returned_buffer_the_caller_must_free_goes_back_to_free() -> None:
    from agents.offline.cdecl import parse_prototypes
    from fuzzkit.header_releasers import find_releasers

    api = parse_prototypes(
        "char *acme_to_html(const char *text, size_t len, int options);\n"
        "acme_doc *acme_parse(const char *text, size_t len);\n"
        "const char *acme_name(int code);\n")
    says = "Returns a NUL-terminated string. It is the caller's responsibility to free the returned buffer."
    docs = {"acme_to_html": says, "acme_parse": says, "acme_name": says}
    found = find_releasers(api, docs, [], {})
    assert Releaser(function="free", releases="what acme_to_html allocates",
                    evidence="by documentation") in found
    # Only memory: an object of the library's, or a const string, is not given to free().
    assert [r.releases for r in found] == ["what acme_to_html allocates"]
    # Memory whose source the documentation names goes back through that source's releaser.
    api += parse_prototypes("void *acme_malloc(size_t n);\nvoid acme_mfree(void *p);\n")
    docs["acme_to_html"] = "Returns memory obtained from [acme_malloc()]. " + says
    docs["acme_malloc"] = "Allocates n bytes; release them with acme_mfree()."
    found = find_releasers(api, docs, [], {})
    assert [r.function for r in found if r.releases == "what acme_to_html allocates"] == ["acme_mfree"]


def test_closing_a_part_of_an_object_does_not_release_it() -> None:
    from agents.offline.cdecl import parse_prototypes
    from fuzzkit.header_releasers import find_releasers

    api = parse_prototypes(
        "struct acme_gen *acme_gen_alloc(void);\n"
        "void acme_gen_free(struct acme_gen *g);\n"
        "int acme_gen_map_close(struct acme_gen *g);\n"
        "void acme_close(struct acme_conn *c);\n")
    found = {r.function for r in find_releasers(api, {}, [], {})}
    assert found == {"acme_gen_free", "acme_close"}
