"""An enum's option set leaves out the members the header marks as no value to pass.

Invented header: a character-set enum starts with a reserved ``_TX_NOT_FOUND`` and ends
with a member that counts the sets; passing either indexes past the library's table of sets
(a global-buffer-overflow the harness caused). A level enum whose last member is a real value
(``LVL_MAX = 9``) keeps it.
"""

from __future__ import annotations

from agents.offline.synth_choices import enum_values
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

TYPES = """```c
typedef enum tx_set tx_set;
typedef enum lvl lvl;
typedef enum kind kind;
enum tx_set { _TX_NOT_FOUND = 0, TX_SET_UTF8 = 1, TX_SET_LATIN = 2, TX_SET_CP = 3, _TX_NUM_PLUS_ONE = 4 };
enum lvl { LVL_MIN = 0, LVL_MID = 5, LVL_MAX = 9 };
enum kind { KIND_A = 0, KIND_B = 1, KIND_C = 2, KIND_COUNT = 3 };
```
"""


def test_reserved_and_counting_members_are_no_option() -> None:
    with using(read_types(render_types(TYPES))):
        assert enum_values("tx_set") == (1, 2, 3)
        assert enum_values("lvl") == (0, 5, 9)  # a last member that is a value stays
        assert enum_values("kind") == (0, 1, 2)
