"""Which sentences of a function's documentation speak of the function itself, and affirm.

Part of reading release facts (:mod:`fuzzkit.header_releasers`): one comment often documents
several prototypes, and a sentence saying not to do something is no instruction to do it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from fuzzkit.api import FunctionDecl

_RESULT_OF = re.compile(r"\breturned\s+by\s+\[?([A-Za-z_]\w*)|\b([A-Za-z_]\w*)\s*\([^()]*\)\]?\s+"
                        r"(?:interface\s+|function\s+)?(?:returns|will\s+return)\b", re.I)


def own_sentences(api: Sequence[FunctionDecl], docs: Mapping[str, str]) -> dict[str, str]:
    """Each function's documentation without the sentences about what another function returns.

    One comment often documents several prototypes (a parser attaches it to the first): "The
    string returned by q_text() is the statement's. The string returned by q_text_copy() must be
    passed to q_free()." The second sentence is about ``q_text_copy`` only; read as ``q_text``'s,
    it made harnesses free a borrowed string.
    """
    names = {d.name for d in api}
    out: dict[str, str] = {}
    for name, doc in docs.items():
        if not any(m.group(1) or m.group(2) for m in _RESULT_OF.finditer(doc)):
            out[name] = doc
            continue
        kept = []
        for sentence in re.split(r"(?<=[.!?])\s+", doc):
            about = {m.group(1) or m.group(2) for m in _RESULT_OF.finditer(sentence)} & names
            if not about or name in about or re.search(rf"\b{re.escape(name)}\b", sentence):
                kept.append(sentence)
        out[name] = " ".join(kept)
    return out


# "You normally do not need to call x_put() on what x_get() returns": a sentence saying not to.
_NEGATED = re.compile(r"\b(not|don'?t|doesn'?t|never|no need|without)\b", re.I)


# "The U and V planes need NOT be passed to img_free(), unlike the returned Y one": what the
# sentence contrasts with is what the call does apply to.
_UNLIKE = re.compile(r"\b(?P<call>[A-Za-z_]\w*\s*\(\s*\)).*?,?\s+unlike\s+(?P<other>[^.;!?,]+)", re.I)


def affirmed(doc: str) -> str:
    """The documentation without its sentences that say not to do something.

    A negated sentence that contrasts with something else ("..., unlike the returned one") keeps
    the contrast as an affirmed clause: "the returned one: img_free()".
    """
    kept = []
    for sentence in re.split(r"(?<=[.;!?])\s+", doc):
        if not _NEGATED.search(sentence):
            kept.append(sentence)
        elif (m := _UNLIKE.search(sentence)) and not _NEGATED.search(m.group("other")):
            kept.append(f"{m.group('other').strip()}: {m.group('call')}.")
    return " ".join(kept)
