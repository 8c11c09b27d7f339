"""The C library names a harness may use, each with the standard header that declares it.

The fixer adds the header when a compile error names one of them; the experience skill leaves
them out when it lists the library calls a harness makes. The table is the vocabulary's
(``fuzzkit/vocabulary.yaml``, ``libc.headers``).
"""

from __future__ import annotations

from fuzzkit.vocabulary import libc_headers

LIBC: dict[str, str] = libc_headers()
