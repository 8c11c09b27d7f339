"""A target fed the input whose context is made on a document: the document reads a share of it.

Invented API: ``kv_query_eval(expr, ctx)`` evaluates a query in a context made on a document
(``kv_qctx_new(doc)``), and documents are read from memory (``kv_read_memory(buf, len)``) or
made empty (``kv_doc_new(version)``). Fed the whole input too, the document would be the query
text; made empty, the query walks nothing.
"""

from __future__ import annotations

import re

from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness

API = """
typedef unsigned char kv_char;
typedef struct kv_doc kv_doc;
typedef struct kv_qctx kv_qctx;
typedef struct kv_result kv_result;
kv_doc *kv_doc_new(const kv_char *version);
kv_doc *kv_read_memory(const char *buffer, int size, int options);
kv_doc *kv_read_file(const char *filename, int options);
void kv_doc_free(kv_doc *doc);
kv_qctx *kv_qctx_new(kv_doc *doc);
void kv_qctx_free(kv_qctx *ctx);
kv_result *kv_query_eval(const char *expr, kv_qctx *ctx);
void kv_result_free(kv_result *res);
int kv_doc_validate(kv_doc *doc, const char *buffer, int size);
"""


def _body(target: str) -> str:
    decls = parse_prototypes(API)
    fn = next(f for f in decls if f.name == target)
    code = write_harness(fn, decls, ["kv.h"], "object_lifecycle", default_skeleton("object_lifecycle")).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_the_document_reads_a_share_and_the_query_the_rest() -> None:
    body = _body("kv_query_eval")
    share = re.search(r"(\w+) = lf_take_part\(&lf_in\);", body)
    assert share, body
    part = share.group(1)
    assert re.search(rf"kv_read_memory\(\(const char \*\){part}, \(int\)strlen\({part}\)", body)
    # the share is taken before the payload is what is left
    assert body.index("lf_take_part") < body.index("size = lf_in.size;")
    assert re.search(r"kv_query_eval\(\(const char \*\)text, \w+\)", body)
    assert "kv_read_file" not in body
    # A share that does not parse leaves an empty document, not a query that never runs.
    doc = re.search(r"(\w+) = kv_read_memory\(", body).group(1)
    fallback = re.search(rf"if \({doc} == NULL\) {doc} = kv_doc_new\(\(const kv_char \*\)(\w+)\);", body)
    assert fallback, body
    assert body.index(fallback.group(0)) < body.index(f"if ({doc} == NULL) goto lf_cleanup;")
    assert body.count(f"kv_doc_free({doc})") == 1


def test_an_object_of_the_target_itself_is_not_split_off() -> None:
    """The target's own document argument is made unfed as before (it is no reader's share)."""
    body = _body("kv_doc_validate")
    assert "lf_take_part" not in body
    assert re.search(r"kv_doc_validate\(\w+, \(const char \*\)data, \(int\)", body), body
