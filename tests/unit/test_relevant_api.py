"""Which API functions a prompt shows for a target of a large library (agents.sections)."""

from __future__ import annotations

from agents.sections import MAX_API, ranked_api, relevant_api, types_section
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.header_facts import HeaderFacts, Releaser, Typedef
from tests.types_text import released

# An invented library: documents have two typedef spellings (`kv_doc_p` and the HTML
# flavour's `kv_hdoc_p`), and more functions than a prompt shows.
TARGET = FunctionDecl("kv_hread_memory", "kv_hdoc_p", (Param("buf", "const char *"), Param("size", "int")))
RELEASE = FunctionDecl("kv_doc_free", "void", (Param("doc", "kv_doc_p"),))
CREATE = FunctionDecl("kv_doc_new", "kv_doc_p", (Param("version", "const kv_char *"),))
OPEN = FunctionDecl("kv_zz_open", "int", (Param("path", "const char *"), Param("out", "kv_doc **")))
FILLER = [FunctionDecl(f"kv_aaa_filler{i:03d}", "int", (Param("c", "kv_char *"), Param("n", "int")))
          for i in range(2 * MAX_API)]
USERS = [FunctionDecl(f"kv_doc_use{i:03d}", "int", (Param("doc", "kv_doc_p"), Param("x", "int")))
         for i in range(MAX_API)]
FACTS = HeaderFacts(
    typedefs=[Typedef("kv_doc_p", "kv_doc *", "struct kv_doc *"),
              Typedef("kv_hdoc_p", "kv_doc_p", "struct kv_doc *"),
              Typedef("kv_doc", "struct kv_doc", "struct kv_doc"),
              Typedef("kv_char", "unsigned char", "unsigned char")],
    releasers=[Releaser(function="kv_doc_free", releases="kv_doc_p", evidence="parameter type")]
    + [Releaser(function=f"kv_aaa_filler{i:03d}", releases="kv_char *", evidence="parameter type")
       for i in range(3)],
)


def _state(facts: HeaderFacts = FACTS) -> dict:
    api = [*FILLER, *USERS, CREATE, OPEN, TARGET, RELEASE]
    return {"target": TARGET.to_dict(), "api": [d.to_dict() for d in api],
            "header_facts": facts.to_dict()}


def test_the_releaser_of_the_targets_type_is_shown_whatever_its_typedef_spelling() -> None:
    shown = [d.name for d in relevant_api(_state())]
    assert len(shown) == MAX_API
    assert {"kv_hread_memory", "kv_doc_free", "kv_doc_new", "kv_zz_open"} <= set(shown)
    # A scalar typedef (`kv_char`) relates nothing: the fillers sharing it stay out.
    assert not any(n.startswith("kv_aaa_filler") for n in shown)


def test_without_the_typedef_facts_the_spellings_stay_apart() -> None:
    shown = [d.name for d in relevant_api(_state(HeaderFacts()))]
    assert "kv_doc_free" not in shown


def test_the_types_section_lists_releasers_of_shown_functions_only() -> None:
    text = types_section(_state())
    assert ("kv_doc_free", "kv_doc_p") in released(text)
    assert "kv_aaa_filler000" not in text


def test_makers_of_what_the_targets_makers_take_are_shown() -> None:
    """A blob is opened on a document handle: the handle's maker and releaser are shown too."""
    target = FunctionDecl("kv_blob_write", "int", (Param("b", "kv_blob *"), Param("z", "const void *"),
                                                    Param("n", "int")))
    blob_open = FunctionDecl("kv_blob_open", "int", (Param("db", "kv_doc_p"), Param("table", "const char *"),
                                                     Param("out", "kv_blob **")))
    blob_close = FunctionDecl("kv_blob_close", "int", (Param("b", "kv_blob *"),))
    api = [*FILLER, *USERS, CREATE, OPEN, blob_open, blob_close, target, RELEASE]
    state = {"target": target.to_dict(), "api": [d.to_dict() for d in api], "header_facts": FACTS.to_dict()}
    shown = {d.name for d in relevant_api(state)}
    assert {"kv_blob_open", "kv_blob_close", "kv_zz_open", "kv_doc_new", "kv_doc_free"} <= shown


def test_a_one_argument_releaser_of_a_type_a_shown_function_uses_is_listed() -> None:
    """A search filling a caller's `kv_region` is shown; the region's releasers are not."""
    scan = FunctionDecl("kv_doc_scan", "int", (Param("doc", "kv_doc_p"), Param("region", "kv_region *")))
    contents = FunctionDecl("kv_zz_free_regs", "void", (Param("r", "struct kv_regs *"),))
    whole = FunctionDecl("kv_zz_region_free", "void", (Param("r", "kv_region *"), Param("free_self", "int")))
    facts = HeaderFacts(
        typedefs=[*FACTS.typedefs, Typedef("kv_region", "struct kv_regs", "struct kv_regs")],
        releasers=[*FACTS.releasers,
                   Releaser(function="kv_zz_free_regs", releases="struct kv_regs *",
                            evidence="parameter type"),
                   Releaser(function="kv_zz_region_free", releases="kv_region *", evidence="parameter type")])
    api = [*FILLER, *USERS, CREATE, OPEN, TARGET, RELEASE, scan, contents, whole]
    state = {"target": TARGET.to_dict(), "api": [d.to_dict() for d in api],
             "header_facts": facts.to_dict()}
    shown = {d.name for d in relevant_api(state)}
    assert "kv_doc_scan" in shown and not {"kv_zz_free_regs", "kv_zz_region_free"} & shown
    text = types_section(state)
    assert ("kv_zz_free_regs", "struct kv_regs *") in released(text)
    # Not shown and taking more than the object: its prototype would be needed to call it.
    assert "kv_zz_region_free" not in text


def test_readers_of_what_the_targets_makers_take_are_shown() -> None:
    """A query evaluated in a context made on a document: the document's readers are shown.

    Without them the prompt offers only ``kv_doc_new(version)``, and the document the query runs
    on is empty.
    """
    target = FunctionDecl("kv_query_eval", "kv_result *", (Param("expr", "const kv_char *"),
                                                           Param("ctx", "kv_qctx *")))
    ctx_new = FunctionDecl("kv_qctx_new", "kv_qctx *", (Param("doc", "kv_doc_p"),))
    ctx_free = FunctionDecl("kv_qctx_free", "void", (Param("ctx", "kv_qctx *"),))
    reader = FunctionDecl("kv_zz_read_memory", "kv_doc_p",
                          (Param("buf", "const char *"), Param("size", "int")))
    api = [*FILLER, *USERS, CREATE, OPEN, RELEASE, ctx_new, ctx_free, reader, target]
    state = {"target": target.to_dict(), "api": [d.to_dict() for d in api], "header_facts": FACTS.to_dict()}
    shown = {d.name for d in relevant_api(state)}
    assert {"kv_qctx_new", "kv_qctx_free", "kv_doc_new", "kv_zz_read_memory"} <= shown
    # with the makers, before the functions that merely take a document
    ranked = [d.name for d in ranked_api(state)]
    assert ranked.index("kv_zz_read_memory") < ranked.index("kv_doc_use000")


def test_the_targets_own_header_ranks_before_names_merely_close_to_it() -> None:
    """An unescaper of plain text shares no type with anything: its header's family (the
    builders and escapers beside it) comes before the many functions whose names only start
    alike (`kv_uc_is_*` of a character-class header)."""
    def decl(name: str, header: str) -> FunctionDecl:
        return FunctionDecl(name, "char *", (Param("s", "const char *"),), header=header)

    target = FunctionDecl("kv_uri_unescape", "char *", (Param("s", "const char *"), Param("n", "int"),
                                                       Param("out", "char *")), header="kv_uri.h")
    classes = [decl(f"kv_uc_is_block{i:03d}", "kv_unicode.h") for i in range(MAX_API)]
    family = [decl("kv_build_uri", "kv_uri.h"), decl("kv_normalize_uri_path", "kv_uri.h")]
    api = [*classes, *family, target]
    state = {"target": target.to_dict(), "api": [d.to_dict() for d in api], "header_facts": FACTS.to_dict()}
    ranked = [d.name for d in ranked_api(state)]
    assert ranked[1:3] == ["kv_build_uri", "kv_normalize_uri_path"]
    assert {"kv_build_uri", "kv_normalize_uri_path"} <= {d.name for d in relevant_api(state)}


def test_a_restrict_spelling_of_a_type_is_that_type() -> None:
    """``typedef kv_doc *restrict kv_docrp`` is ``kv_doc *``: its maker is shown for a target taking it.

    The qualifier was read as the type's word, so no function of the target's type looked related
    to one returning the plain spelling, and the constructor was left out of the prompt.
    """
    target = FunctionDecl("kv_read_head", "void", (Param("doc", "kv_docrp"), Param("n", "int")))
    facts = HeaderFacts(typedefs=[*FACTS.typedefs, Typedef("kv_docrp", "kv_doc *restrict",
                                                           "struct kv_doc *restrict")])
    users = [FunctionDecl(f"kv_doc_use{i:03d}", "int", (Param("doc", "kv_docrp"), Param("x", "int")))
             for i in range(MAX_API)]
    api = [*FILLER, *users, CREATE, target, RELEASE]
    state = {"target": target.to_dict(), "api": [d.to_dict() for d in api], "header_facts": facts.to_dict()}
    assert {"kv_doc_new", "kv_doc_free"} <= {d.name for d in relevant_api(state)}
