"""A struct the caller owns, set up by ``x_init(&x)``, is released by the ``x_clear(&x)`` beside it.

Big-number and similar value APIs pair an initializer with a ``clear`` (``qn_init(qn_big *)`` /
``qn_clear(qn_big *)``) and no ``free``: the digits ``qn_init`` allocates are released only
there. Read as no releaser at all, every harness leaked the struct's digits on its first input
and the repairs gave up (harness misuse). ``clear`` alone releases nothing (a list's ``clear``
may only empty it); beside the initializer it undoes, or documented to free, it does.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.header_releasers import find_releasers

API = """
typedef int qn_err;
typedef struct { int used; int alloc; int sign; unsigned long *dp; } qn_big;
qn_err qn_init(qn_big *a);
qn_err qn_init_u32(qn_big *a, unsigned int v);
void qn_clear(qn_big *a);
qn_err qn_read_text(qn_big *a, const char *text, int base);
int qn_count_bits(const qn_big *a);
"""

LIST = ("typedef struct {{ int n; int *items; }} zz_list;\n"
        "void zz_{verb}(zz_list *l);\nint zz_push(zz_list *l, int v);\n")


def _releasers(api: str, docs: dict[str, str] | None = None) -> set[tuple[str, str]]:
    return {(r.function, r.releases) for r in find_releasers(parse_prototypes(api), docs or {}, [], {})}


def test_a_clear_beside_the_initializer_it_undoes_releases_the_type() -> None:
    assert ("qn_clear", "qn_big *") in _releasers(API)


def test_a_clear_with_no_initializer_and_no_documentation_releases_nothing() -> None:
    api = LIST.format(verb="clear")
    assert _releasers(api) == set()


def test_documentation_that_begins_with_free_makes_a_releaser() -> None:
    api = LIST.format(verb="wipe")
    assert ("zz_wipe", "zz_list *") in _releasers(api, {"zz_wipe": "free a list"})
    assert _releasers(api, {"zz_wipe": "set every item to zero"}) == set()


def test_the_harness_clears_what_the_initializer_set_up() -> None:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "qn_read_text")
    found = find_releasers(decls, {}, [], {})
    struct = API.split("\n", 2)[2].split("qn_err qn_init")[0]
    types = f"```c\n{struct}```\n" + HeaderFacts(releasers=found).render()
    with using(read_types(types)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["qn.h"], arche, default_skeleton(arche)).code
    made = re.search(r"qn_init\w*\(&(\w+)", code)
    assert made, code
    assert re.search(rf"qn_clear\(&{made.group(1)}\);", code), code
