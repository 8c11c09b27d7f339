"""A call that hands back a new buffer through a ``T **`` per call is no stream fed in pieces.

Invented API: ``ss_base64_decode(SS *session, char **dest, unsigned *dest_len, const char *src,
unsigned src_len)`` decodes a whole text into a new buffer. Classed a stream processor (an
object first, bytes after), its harness called it once per piece of the input and released
only the last piece's buffer: a leak on every input with more than one piece. A feed on the
same object with no result of its own still goes piece by piece.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness

API = parse_prototypes("""
typedef struct SS SS;
SS *ss_init(void);
void ss_free(SS *s);
int ss_base64_decode(SS *session, char **dest, unsigned int *dest_len, const char *src, unsigned int src_len);
int ss_feed(SS *session, const char *src, unsigned int src_len);
""")


def _analysis(name: str) -> tuple[str, str]:
    target = next(d for d in API if d.name == name)
    analysis = analyze_function(target, API)
    code = write_harness(target, API, ["ss.h"], analysis.archetype, default_skeleton(analysis.archetype),
                         rules=analysis.rules).code
    return analysis.archetype, code


def test_a_decoder_handing_back_a_new_buffer_is_called_once_on_the_whole_input() -> None:
    archetype, code = _analysis("ss_base64_decode")
    assert archetype != "stream_processor"
    assert "lf_chunk" not in code
    whole = r"\(const char \*\)data, \(unsigned int\)size"
    call = re.search(rf"ss_base64_decode\(\w+, &(\w+), &\w+, {whole}\)", code)
    assert call, code
    assert re.search(rf"free\({call[1]}\)", code)


def test_a_feed_without_a_result_of_its_own_still_takes_pieces() -> None:
    archetype, _ = _analysis("ss_feed")
    assert archetype == "stream_processor"
