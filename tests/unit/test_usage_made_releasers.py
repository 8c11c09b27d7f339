"""One object's releaser is the last release call made on it, whichever maker made it.

An invented codec whose reader and writer share one struct type: the library's own tests make
it with ``cx_create_write`` more often than with ``cx_create_read`` and release each with its
own ``cx_destroy_write(&p)`` / ``cx_destroy_read(&p)``. The type's releaser is the writer's, so
a harness that reads must still release what ``cx_create_read`` made with ``cx_destroy_read``.
A ``destroy(&p)`` clears the caller's pointer: it is no maker of ``p``.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from agents.offline.usage import usage_hints
from fuzzkit.usage_models import Arg, CallSite, UsageFacts, UsageFunction, UsageIndex
from fuzzkit.usage_protocols import object_protocols
from tests.types_text import render_types

API = """
typedef struct cx_struct cx_struct;
cx_struct *cx_create_read(int flags);
cx_struct *cx_create_write(int flags);
void cx_destroy_read(cx_struct **pp);
void cx_destroy_write(cx_struct **pp);
int cx_read_header(cx_struct *p, const unsigned char *data, size_t size);
"""
TYPES = render_types("""```c
typedef struct cx_struct cx_struct;
```
Release functions:
- cx_destroy_read releases cx_struct * (parameter type)
- cx_destroy_write releases cx_struct * (parameter type)
""")


def _use(name: str, maker: str, releaser: str) -> UsageFunction:
    obj = Arg(text="&p", kind="object", var="p", address=True)
    return UsageFunction(
        file="tests/t.c", name=name, origin="test", variables={"p": "cx_struct *"},
        calls=[CallSite(function=maker, args=[Arg(text="0", kind="constant")], result="p", result_var="p"),
               CallSite(function=releaser, args=[obj])],
    )


def _facts() -> UsageFacts:
    index = UsageIndex(functions=[
        _use("write_one", "cx_create_write", "cx_destroy_write"),
        _use("write_two", "cx_create_write", "cx_destroy_write"),
        _use("read_one", "cx_create_read", "cx_destroy_read"),
    ])
    return UsageFacts(objects=object_protocols(index, ["cx_struct *"], {"cx_struct"}))


def test_each_maker_keeps_the_releaser_its_objects_get() -> None:
    (proto,) = _facts().objects
    assert proto.release == "cx_destroy_write"
    assert proto.release_after == {"cx_create_read": "cx_destroy_read"}
    assert [s.call for s in proto.make] == ["cx_create_write", "cx_create_read"]  # no destroy among them


def test_the_reader_made_object_is_released_by_the_readers_releaser_at_its_address() -> None:
    facts = _facts()
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "cx_read_header")
    decls = [d for d in decls if d.name != "cx_create_write"]  # the reader is the only maker left
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["cx.h"], arche, default_skeleton(arche),
                             usage=usage_hints(facts, target, decls)).code
    assert "cx_create_read(" in code, code
    assert "cx_destroy_read(&" in code, code
    assert "cx_destroy_write" not in code, code


CHILD_API = API + """
typedef struct cx_info cx_info;
cx_info *cx_create_info(cx_struct *p);
void cx_destroy_info(cx_struct *p, cx_info **ip);
void cx_destroy_all(cx_struct **pp, cx_info **ip);
int cx_read_info(cx_struct *p, cx_info *info, const unsigned char *data, size_t size);
"""


CHILD_TYPES = render_types("""```c
typedef struct cx_struct cx_struct;
typedef struct cx_info cx_info;
```
Release functions:
- cx_destroy_read releases cx_struct * (parameter type)
- cx_destroy_write releases cx_struct * (parameter type)
- cx_destroy_info releases cx_info * (parameter type)
""")


def test_a_parents_releaser_taking_the_child_along_is_not_the_childs_releaser() -> None:
    # The library's code releases both with `cx_destroy_all(&p, &info)`: that is the parent's.
    facts = _facts()
    facts.objects[0].release_after = {}
    child = facts.objects[0].model_copy(update={"type": "cx_info *", "release": "cx_destroy_all",
                                                "release_after": {"cx_create_info": "cx_destroy_all"}})
    facts.objects.append(child)
    decls = parse_prototypes(CHILD_API)
    target = next(d for d in decls if d.name == "cx_read_info")
    with using(read_types(CHILD_TYPES)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["cx.h"], arche, default_skeleton(arche),
                             usage=usage_hints(facts, target, decls)).code
    assert not re.search(r"cx_destroy_all\(&cx_info\w*", code), code  # never the child in the parent's place


def test_a_releaser_of_the_parent_by_address_takes_the_child_it_frees_with_it() -> None:
    from agents.offline.synth_release_args import complete_release_calls

    api = parse_prototypes("""
typedef struct rs rs; typedef struct ri ri;
void rs_destroy(rs **pp, ri **info, ri **end_info);
""")
    code = ("  rs *rs2 = NULL;\n  ri *ri2 = NULL;\n  /* @LF:CALL */\n  rs_read(rs2, ri2);\n"
            "  lf_cleanup: ;\n  if (ri2 != NULL) free(ri2);\n  if (rs2 != NULL) rs_destroy(rs2);\n")
    with using(read_types(CHILD_TYPES)):
        out = complete_release_calls(code, api)
    assert "if (rs2 != NULL) rs_destroy(&rs2, &ri2, NULL);" in out, out
    assert "free(ri2)" not in out, out  # the call frees it: a second release would be a double free
