"""A leak repair never releases, at the harness's end, a variable declared inside one of its blocks.

cJSON's quick start: the leak came from a follow-up `result = cJSON_ParseWithOpts(...)` inside a
use block; releasing `result` before the function's `return 0;` named a variable out of scope, and
the harness never compiled again (5 fix rounds, target given up).
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from agents.offline.fixer_leak import release_results

API = parse_prototypes("jn *jn_parse_opts(const char *text, int strict);\nvoid jn_delete(jn *item);")
HARNESS = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  jn *top = NULL;
  top = jn_parse_opts((const char *)data, 0);
  if (top != NULL) {
    jn *result = NULL;
    result = jn_parse_opts((const char *)data, 1);
  }
  return 0;
}
"""


def test_only_the_function_level_result_is_released_at_the_end() -> None:
    code, added = release_results(HARNESS, API[0], API)
    assert "jn_delete(top)" in code, code
    assert "jn_delete(result)" not in code, code  # inside the block: out of scope at the end
    assert len(added) == 1 and "top" in added[0], added
