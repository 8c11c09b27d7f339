"""A lesson's function is in the prompt's API list, even when the list is trimmed to the target.

A lesson learned on one target (``avoid_call(qq_html_parse_document)``) reaches another whose
trimmed API list leaves that function out; without its prototype neither a model nor the
offline engine can tell which calls the lesson rules out (its twins share its signature), and
the next improvement added a twin and crashed the same way.
"""

from __future__ import annotations

from agents.enhancer import Enhancer
from agents.offline.cdecl import parse_prototypes
from agents.offline.prompt_reader import read_prompt
from agents.offline.roles import enhance
from agents.sections import MAX_API, lesson_api, relevant_api
from long_term_memory.experience.inject import render_experience
from long_term_memory.experience.matches import InjectItem
from prompts import render

CORE = parse_prototypes("""
struct qq_uri *qq_uri_parse(const char *text);
void qq_uri_free(struct qq_uri *uri);
char *qq_uri_print(struct qq_uri *uri);
struct qq_ctx *qq_ctx_new(const char *buffer, int size);
void qq_ctx_free(struct qq_ctx *ctx);
int qq_parse_document(struct qq_ctx *ctx);
int qq_html_parse_document(struct qq_ctx *ctx);
""")
# Readers of the target's own result: closer to it than anything of the context's.
PADDING = parse_prototypes("\n".join(f"int qq_uri_get{i}(struct qq_uri *uri);" for i in range(MAX_API)))
AVOID = InjectItem("MEM-0000c0de", "rec-1", "Calling qq_html_parse_document crashed (leak)",
                   "Harnesses that could add it.", "Do not add it.", 0.9, 1, 0.6, True, "project qq",
                   {"scope": {"name": "qq_html_parse_document"},
                    "action": "avoid_call(qq_html_parse_document)",
                    "failure": "sanitizer:leak@qq_html_parse_document"})
HARNESS = ("#include \"qq.h\"\nint LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
           "  char *text = lf_strndup(data, size);\n  struct qq_uri *uri = NULL;\n"
           "  /* @LF:CALL */\n  uri = qq_uri_parse(text);\n  /* @LF:CLEANUP */\n"
           "  qq_uri_free(uri);\n  free(text);\n  return 0;\n}\n")


def state(api: list = CORE) -> dict:
    return {"target": CORE[0].to_dict(), "api": [f.to_dict() for f in api], "headers": ["qq.h"],
            "analysis": {"archetype": "stateless_parser"}, "session_memory": {},
            "harness_code": HARNESS,
            "run": {"coverage": {"lines": {"percent": 5.0}}}}


def test_the_functions_a_shown_lesson_names_join_the_api_list() -> None:
    experience = render_experience([AVOID])
    big = state([*CORE, *PADDING])
    assert "qq_html_parse_document" not in {d.name for d in relevant_api(big)}  # trimmed away
    assert [d.name for d in lesson_api(big, experience)] == ["qq_html_parse_document"]
    uncovered = "- int qq_parse_document(struct qq_ctx *ctx);"
    values = Enhancer.improve_variables(big, (), uncovered, "(none)", experience)
    assert "int qq_html_parse_document(struct qq_ctx *ctx);" in values["api_prototypes"]
    assert "qq_html_parse_document" not in Enhancer.improve_variables(
        big, (), uncovered, "(none)", "")["api_prototypes"]


def test_so_the_twin_it_rules_out_is_left_out() -> None:
    uncovered = "- int qq_parse_document(struct qq_ctx *ctx);"

    def improve(experience: str) -> dict:
        values = Enhancer.improve_variables(state(), (), uncovered, "(none)", experience)
        payload, _code = enhance(read_prompt(*render("enhancer_improve", values)))
        return payload

    assert "qq_parse_document" in improve("")["added_calls"]
    reply = improve(render_experience([AVOID]))
    assert "qq_parse_document" not in reply["added_calls"]
    assert any(d.startswith("applied [MEM-0000c0de] avoid_call(qq_html_parse_document): did not add "
                            "qq_parse_document") for d in reply["directions"])
