"""A string handle (``typedef char *tx``) that a call may move, and a pointer into one.

Invented API: ``txcattx(tx s, const tx t)`` appends ``t`` to ``s`` and returns ``s``, maybe
moved (``realloc``): once it succeeded only the result is released, though a second handle of
the type goes in (read-only). ``txAllocPtr(tx s)`` hands back where ``s`` keeps its memory, not
a new block: releasing it freed ``s`` under the harness, which then released ``s`` again.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts import HeaderFacts, Releaser, Typedef

API = parse_prototypes("""
typedef char *tx;
tx txnewlen(const void *init, size_t initlen);
tx txdup(const tx s);
void txfree(tx s);
tx txcatlen(tx s, const void *t, size_t len);
tx txcattx(tx s, const tx t);
void *txAllocPtr(tx s);
void tx_free(void *ptr);
""")
TYPES = HeaderFacts(typedefs=[Typedef("tx", "char *", "char *")],
                    releasers=[Releaser(function="txfree", releases="tx", evidence="by parameter type")]
                    ).render()


def _body(name: str) -> str:
    target = next(d for d in API if d.name == name)
    with using(read_types(TYPES)):
        analysis = analyze_function(target, API)
        code = write_harness(target, API, ["tx.h"], analysis.archetype,
                             default_skeleton(analysis.archetype), rules=analysis.rules).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_the_handle_given_up_to_the_result_is_released_once_even_beside_a_read_only_peer() -> None:
    for name in ("txcatlen", "txcattx"):
        body = _body(name)
        call = re.search(rf"(\w+) = {name}\((\w+)[,)]", body)
        assert call, body
        # once the call succeeded, the argument is no longer the harness's to release
        assert re.search(rf"if \({call[1]} != NULL\) {call[2]} = NULL;", body), body


def test_a_pointer_into_a_handle_is_not_released() -> None:
    body = _body("txAllocPtr")
    call = re.search(r"(\w+) = txAllocPtr\(", body)
    assert call, body
    assert not re.search(rf"\w*free\({call[1]}\)", body), body
