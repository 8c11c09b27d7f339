"""A read past a buffer the harness allocated, through a call handed a count that is not its length.

An invented setter ``tr_set_alpha(tr *p, const unsigned char *alpha, int num, ...)`` copies
``num`` bytes from ``alpha``. A harness that passes a copy of the payload as ``alpha`` and an
option drawn from the input as ``num`` makes it read past the copy: the harness broke the
contract (alpha holds num entries), and the crash is never reported as a library bug. The same
read when the harness passed the copy's own length is the library's.
"""

from __future__ import annotations

import json

from agents.crash_analyzer import report_text
from agents.offline.crash_roles import judge_feasibility
from agents.offline.prompt_reader import read_prompt

HARNESS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tr *p = NULL;
  char *text = NULL;
  int num = 0;
  lf_input_t lf_in = {data, size};
  num = (int)lf_take_int(&lf_in, 0, 255);
  size = lf_in.size;
  p = tr_create();
  text = lf_strndup(data, size);
  if (text == NULL) goto lf_cleanup;
  tr_set_alpha(p, (const unsigned char *)text, num, NULL);
  lf_cleanup: ;
  free(text);
  tr_free(p);
  return 0;
}
"""


def _verdict(harness: str) -> dict[str, object]:
    triage = report_text({"kind": "heap-buffer-overflow", "access": "READ of size 10",
                          "buffer_origin": "harness", "entry_function": "tr_set_alpha",
                          "region": "0 bytes to the right of 1-byte region"})
    prompt = (f"## Target function\nvoid tr_set_alpha(tr *p, const unsigned char *alpha, int num, "
              f"const void *color);\n\n## Crash triage\n{triage}\n## Stack\n#0 __asan_memcpy ?:?\n"
              f"#1 tr_set_alpha tr.c:40\n#2 LLVMFuzzerTestOneInput harness.c:11\n\n"
              f"## Current harness\n```c\n{harness}```\n")
    reply, _code = judge_feasibility(read_prompt("ROLE: crash_feasibility_analyzer", prompt))
    return json.loads(json.dumps(reply))


def test_a_count_drawn_apart_from_the_buffer_is_the_harnesss_misuse() -> None:
    found = _verdict(HARNESS)
    assert found["verdict"] == "harness_misuse", found
    assert "num" in str(found["reasoning"]) and "text" in str(found["reasoning"]), found


def test_the_buffers_own_length_as_the_count_leaves_the_read_to_the_library() -> None:
    found = _verdict(HARNESS.replace("text, num,", "text, size,"))
    assert found["verdict"] == "library_bug", found


def test_a_short_string_taken_from_the_input_with_a_count_drawn_apart_is_the_harnesss() -> None:
    # `pattern = lf_take_str(&lf_in, 16); c = lf_take_int(...)`: compile(pattern, c, ...) read past
    # the string's end (a regex compiler's false alarm, three targets at once)
    taken = HARNESS.replace("text = lf_strndup(data, size);", "text = lf_take_str(&lf_in, 16);")
    found = _verdict(taken)
    assert found["verdict"] == "harness_misuse", found
