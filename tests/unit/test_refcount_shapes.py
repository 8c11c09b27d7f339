# ruff: noqa: E501
"""Shapes from an unseen JSON library with reference-counted values (invented names).

- ``jv_put(struct jv *obj)`` drops a reference ("decrement the reference count and free if it
  reaches zero"): it is the values' releaser, though "put" elsewhere stores something.
- ``jv_iter_end(const struct jv *obj)`` hands back an iterator by value: no destructor.
- "You normally do not need to call jv_put() on the value jv_object_get() returns": a sentence
  saying not to release links nothing.
- ``jv_parse_int64(const char *buf, int64_t *retval)``: the pointer after the string is its
  value, not its length (the string was passed unterminated, its length as ``*retval``).
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts import HeaderFacts, Record
from fuzzkit.header_releasers import find_releasers

API = """
struct jv *jv_new_array(void);
struct jv *jv_new_string_len(const char *s, const int len);
struct jv *jv_object_get(const struct jv *obj, const char *key);
void jv_put(struct jv *obj);
void jv_queue_put(struct jv *queue, int value);
struct jv_iter jv_iter_end(const struct jv *obj);
int jv_set_string_len(struct jv *obj, const char *new_value, int len);
int jv_parse_int64(const char *buf, int64_t *retval);
struct jv *jv_new_double_s(double d, const char *ds);
void jv_free_userdata(struct jv *jso, void *userdata);
uint8_t *jv_planes(const uint8_t *data, size_t size, uint8_t **u, uint8_t **v);
uint8_t *jv_plane_view(const uint8_t *data, size_t size);
void jv_buf_free(void *ptr);
void jv_attrs_reset(struct jv_attrs *attrs);
void jv_attrs_clear(struct jv_attrs2 *attrs);
void jv_flush(struct jv *obj);
int jv_regcomp(struct jv_re *re, const char *pattern, int flags);
void jv_regfree(struct jv_re *re);
"""
DOCS = {
    "jv_put": "Decrement the reference count of jv and free if it reaches zero.",
    "jv_queue_put": "Append value to the queue.",
    "jv_new_array": "Create a new empty array with a reference count of 1. Call jv_put() when done.",
    "jv_object_get": "Get the value of a field. You normally do not need to call jv_put() on the value returned.",
    "jv_new_double_s": "Create a double whose text is ds; the copy of ds is released by jv_free_userdata.",
    "jv_planes": "Returns the first plane. The U and V planes need NOT be passed to jv_buf_free(), "
                 "unlike the returned one.",
    "jv_plane_view": "Returns a view of the plane. Do not pass it to jv_buf_free(), unlike what "
                     "jv_planes does not return.",
    "jv_attrs_reset": "Reset the attributes to a fresh state. This function frees any auxiliary "
                      "resources that the structure may contain.",
    "jv_attrs_clear": "Clear the attributes. This does not free any memory.",
    "jv_flush": "Write out pending output and free the memory of the buffers.",
}
RECORDS = [Record("struct", "jv", (), (), True), Record("struct", "jv_iter", (), (("n", "int"),), False)]


def _releasers() -> list[tuple[str, str]]:
    found = find_releasers(parse_prototypes(API), DOCS, RECORDS, {})
    return [(r.function, r.releases) for r in found]


def test_a_put_that_drops_a_reference_is_the_releaser() -> None:
    found = _releasers()
    assert ("jv_put", "struct jv *") in found
    assert not any(f == "jv_queue_put" for f, _ in found)  # "append": it stores, it releases nothing


def test_a_sentence_saying_not_to_release_links_nothing() -> None:
    found = _releasers()
    assert ("jv_put", "what jv_new_array allocates") in found
    assert not any("jv_object_get" in what for _, what in found)
    assert not any(f == "free" and "jv_put" in what for f, what in found)  # its own "free if ..."


def test_a_negated_sentence_links_what_it_contrasts_with() -> None:
    found = _releasers()
    assert ("jv_buf_free", "what jv_planes allocates") in found
    assert not any("jv_plane_view" in what for _, what in found)  # a negated contrast stays negated
    code = _draft("jv_planes")
    assert re.search(r"(\w+) = jv_planes\(.*\n(?:.*\n)*.*jv_buf_free\(\1\)", code), code
    assert not re.search(r"jv_buf_free\((u|v)\)", code), code  # views into the returned block


def test_a_fused_release_word_releases_its_parameters_type() -> None:
    assert ("jv_regfree", "struct jv_re *") in _releasers()


def test_a_reset_documented_to_free_what_the_structure_holds_releases_its_type() -> None:
    found = _releasers()
    assert ("jv_attrs_reset", "struct jv_attrs *") in found
    assert not any(f == "jv_attrs_clear" for f, _ in found)  # "does not free"
    assert not any(f == "jv_flush" for f, _ in found)  # jv has a releaser by name (jv_put)


def _draft(name: str) -> str:
    decls = parse_prototypes(API)
    facts = HeaderFacts(records=RECORDS, releasers=find_releasers(decls, DOCS, RECORDS, {}))
    target = next(d for d in decls if d.name == name)
    with using(read_types(facts.render())):
        assert ApiIndex(decls).destructor("jv") == "jv_put"  # not jv_iter_end
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["jv.h"], arche, default_skeleton(arche)).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_a_value_made_for_the_target_is_released_with_the_reference_drop() -> None:
    code = _draft("jv_set_string_len")
    made = re.search(r"(\w+) = jv_new_\w+\(", code)
    assert made is not None, code
    assert f"jv_put({made.group(1)})" in code and "jv_iter_end" not in code, code


def test_the_pointer_after_a_string_named_as_a_value_is_not_its_length() -> None:
    code = _draft("jv_parse_int64")
    call = re.search(r"jv_parse_int64\(([^;]*)\);", code)
    assert call is not None, code
    assert call.group(1) == "(const char *)text, &retval" and "lf_strndup(data, size)" in code, code
    assert "retval = (int64_t)size" not in code, code


def test_a_releaser_taking_its_makers_object_is_not_given_a_number() -> None:
    """`jv_free_userdata(obj, data)` frees what `jv_new_double_s(double d, ...)` keeps, per the
    documentation; passing it the maker's first argument (`d`, a double) did not compile in
    five fix rounds. The value goes back with its type's one-argument releaser."""
    code = _draft("jv_new_double_s")
    assert "jv_free_userdata" not in code and re.search(r"jv_put\(result\);", code), code
