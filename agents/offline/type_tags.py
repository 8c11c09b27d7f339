"""Tag-only record names in generated code: ``x_ttl v;`` becomes ``struct x_ttl v;``."""

from __future__ import annotations

import re

from agents.offline.type_table import active


def with_tags(code: str) -> str:
    """Put the ``struct``/``union`` tag before each tag-only record name the code uses bare.

    ``x_ttl v;`` for a ``struct x_ttl`` that has no typedef of that name does not compile; the
    Types section says which names are tags only. Preprocessor lines, string literals and
    comments are left alone.
    """
    table = active()
    tags = {name: t for name in table.records if (t := table.tag_only(name))}
    if not tags:
        return code
    bare = re.compile(r"(?<![\w.>\"])(?<!struct )(?<!union )(?<!enum )\b("
                      + "|".join(map(re.escape, tags)) + r")\b(?![\w.(\"])")
    skip = re.compile(r'"(?:\\.|[^"\\\n])*"|/\*.*?\*/|//[^\n]*|^[ \t]*#[^\n]*', re.S | re.M)
    out, pos = [], 0
    for m in skip.finditer(code):
        out.append(bare.sub(lambda b: tags[b.group(1)], code[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(bare.sub(lambda b: tags[b.group(1)], code[pos:]))
    return "".join(out)
