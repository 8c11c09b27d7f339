"""A library set up once before any use: ``acme_init(void)``.

Some libraries refuse every call until a library-wide initializer has run (a crypto kernel
registering its ciphers, a table built once): without it a constructor fails and the target is
never reached. Such a function takes nothing, returns a status or nothing, and its name is the
library's prefix and an init verb alone (``acme_init``, ``acme_initialize``,
``acme_global_init``; not ``acme_init_parser``, which sets up one object). The harness calls it
once, on its first input, before anything else.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from agents.offline import ckinds
from agents.offline.synth_finders import words
from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import words_of

if TYPE_CHECKING:
    from agents.offline.synth_api import ApiIndex
    from agents.offline.synth_plan import Planner

_INIT = words_of("init")
_SCOPE = {"global", "library", "lib", "all"}


def library_initializer(idx: ApiIndex) -> FunctionDecl | None:
    """The API's one library-wide initializer, or None."""
    counts = Counter(w for f in idx.api for w in set(words(f.name)))
    common = {w for w, n in counts.items() if n > len(idx.api) / 2}
    found = []
    for f in idx.api:
        rest = [w for w in words(f.name) if w not in common]
        ret = f.return_type
        status = ckinds.is_void(ret) or (not ckinds.is_pointer(ret) and (ckinds.is_integer(ret)
                                                                        or ckinds.is_enum_like(ret)))
        if not f.params and status and rest and set(rest) <= _INIT | _SCOPE and set(rest) & _INIT:
            found.append(f)
    return found[0] if len(found) == 1 else None


def initialize_once(pl: Planner) -> None:
    """Call the library's initializer on the harness's first input (see the module doc)."""
    fn = library_initializer(pl.idx)
    if fn is None or fn.name in pl.avoid or fn.name in pl.f.calls:
        return
    flag = pl.f.name("library_ready")
    pl.f.setup.insert(0, f"static int {flag} = 0;")
    pl.f.setup.insert(1, f"if (!{flag}) {{ {flag} = 1; (void){fn.name}(); }}")
    pl.f.calls.append(fn.name)
    pl.f.notes.append(f"{fn.name}() sets the library up: called once, on the first input")
