"""One type however a file spells it, and the calls the library makes on an object before the target.

The invented reader's prototypes take ``rd_structrp`` (a restrict pointer typedef); its test
declares ``rd_structp``. Both stand for ``struct rd_def *``: the object protocol is found for
the target's parameter and spelled as the test spells it (what a harness declares). The test
reads the header (``rd_read_info(p, info)``) before ``rd_start_image(p)``: the calls on objects
alone before the target come back as ``before`` (not the maker, the feeder, the releaser).
"""

from __future__ import annotations

from agents.offline.usage import usage_before
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.usage_models import Arg, CallSite, Step, TargetProtocol, UsageFacts, UsageFunction, UsageIndex
from fuzzkit.usage_protocols import canonical_key, target_usage

CANONICAL = {"rd_structrp": "struct rd_def *restrict", "rd_structp": "struct rd_def *"}
API = [FunctionDecl("rd_create", "rd_structp", ()),
       FunctionDecl("rd_read_header", "int", (Param("p", "rd_structrp"),)),
       FunctionDecl("rd_start_image", "void", (Param("p", "rd_structrp"),)),
       FunctionDecl("rd_destroy", "void", (Param("pp", "rd_structp *"),))]


def _index() -> UsageIndex:
    p = Arg(text="p", kind="object", var="p")
    return UsageIndex(functions=[UsageFunction(
        file="tests/t.c", name="t", origin="test", variables={"p": "rd_structp"},
        calls=[CallSite(function="rd_create", result="p", result_var="p"),
               CallSite(function="rd_read_header", args=[p]),  # not the target: no sequence of it
               CallSite(function="rd_destroy",
                        args=[Arg(text="&p", kind="object", var="p", address=True)])])])


def test_two_spellings_of_one_type_are_one_and_the_usages_spelling_is_kept() -> None:
    assert canonical_key("rd_structrp", CANONICAL) == canonical_key("rd_structp", CANONICAL)
    found = target_usage(_index(), API[2], API, CANONICAL).facts.objects
    assert [(o.type, o.release) for o in found] == [("rd_structp", "rd_destroy")]
    assert target_usage(_index(), API[2], API).facts.objects == []  # by spelling alone: not found


def test_the_calls_on_objects_alone_before_the_target_are_its_setup() -> None:
    obj, info = Arg(text="p", kind="object", var="p"), Arg(text="info", kind="object", var="info")
    steps = [Step(call="rd_create", result="p"),
             Step(call="rd_set_read_fn", args=[obj, Arg(text="&buf", kind="variable"),
                                               Arg(text="mem_read", kind="callback")]),
             Step(call="rd_read_info", args=[obj, info]),
             Step(call="rd_error", args=[obj, Arg(text='"bad"', kind="string")]),
             Step(call="rd_set_interlace", args=[obj]),
             Step(call="rd_start_image", args=[obj]),
             Step(call="rd_destroy", args=[obj])]
    facts = UsageFacts(targets=[TargetProtocol(function="rd_start_image", seen_in="t.c:t", sequence=steps)])
    assert usage_before(facts, API[2]) == ["rd_read_info", "rd_set_interlace"]
