"""A constructor argument made only from the object being constructed is passed as NULL.

``dj_ctx_t *dj_ctx_new(dj_alloc_t *alloc, int options, dj_global_t *global, ...)`` and
``dj_global_t *dj_make_global(dj_ctx_t *ctx)`` (an invented API, shaped like an image decoder's
embedded-stream context): a global context can only be made from a context, so a context's
constructor must accept none (NULL), or no context could ever exist. Building one for the
other recursed until the nesting limit, and no draft was written at all.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from fuzzkit.api import FunctionDecl, Param

CTX = Param("ctx", "dj_ctx_t *")
DATA_IN = FunctionDecl("dj_data_in", "int",
                       (CTX, Param("data", "const unsigned char *"), Param("size", "size_t")), "dj.h")
NEW = FunctionDecl("dj_ctx_new", "dj_ctx_t *",
                   (Param("options", "int"), Param("global", "dj_global_t *")), "dj.h")
API = [DATA_IN, NEW, FunctionDecl("dj_ctx_free", "void", (CTX,), "dj.h"),
       FunctionDecl("dj_make_global", "dj_global_t *", (CTX,), "dj.h"),
       FunctionDecl("dj_global_free", "void", (Param("global", "dj_global_t *"),), "dj.h")]


def test_the_context_is_made_without_a_global_context() -> None:
    analysis = analyze_function(DATA_IN, API)
    code = write_harness(DATA_IN, API, ["dj.h"], analysis.archetype, default_skeleton(analysis.archetype),
                         rules=analysis.rules).code
    assert "dj_make_global(" not in code
    new = next(line for line in code.splitlines() if "= dj_ctx_new(" in line)
    assert new.rstrip().endswith(", NULL);"), new
    assert code.index("dj_ctx_new(") < code.index("dj_data_in(")
