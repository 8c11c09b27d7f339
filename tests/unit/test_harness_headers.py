"""The headers a harness includes: an umbrella's unguarded parts are left to it. Invented headers."""

from __future__ import annotations

from pathlib import Path

from fuzzkit.header_includes import harness_headers, unconditional_includes

GUARDED_UMBRELLA = """\
#ifndef ZQ_H
#define ZQ_H
#include <stddef.h>
#include "zq_types.h"
#include "parts/zq_io.h"
#ifdef ZQ_WITH_NET
#include "zq_net.h"
#endif
#if defined(__cplusplus)
extern "C" {
#endif
int zq_version(void);
#if defined(__cplusplus)
}
#endif
#endif
"""


def test_only_includes_outside_any_condition_count_the_include_guard_apart() -> None:
    assert unconditional_includes(GUARDED_UMBRELLA) == {"stddef.h", "zq_types.h", "zq_io.h"}
    bare = GUARDED_UMBRELLA.replace("#ifndef ZQ_H\n#define ZQ_H\n", "").rsplit("#endif", 1)[0]
    assert unconditional_includes(bare) == {"stddef.h", "zq_types.h", "zq_io.h"}
    other = "#if !defined(ZQ_H)\n#define ZQ_H\n#include \"zq_types.h\"\n#endif\n"
    assert unconditional_includes(other) == {"zq_types.h"}
    # a first #ifndef that is not a guard is a condition
    assert unconditional_includes("#ifndef ZQ_SMALL\n#include \"zq_big.h\"\n#endif\n") == set()


def test_the_umbrella_is_kept_and_the_parts_it_includes_are_not(tmp_path: Path) -> None:
    for name, text in {"zq.h": GUARDED_UMBRELLA, "zq_types.h": "typedef struct { int n; } zq_num;\n",
                       "zq_io.h": "int zq_read(zq_num *n);\n", "zq_net.h": "int zq_send(int fd);\n",
                       "zq_extra.h": "int zq_extra(void);\n"}.items():
        (tmp_path / name).write_text(text)
    listed = [tmp_path / n for n in ("zq.h", "zq_types.h", "zq_io.h", "zq_net.h", "zq_extra.h")]
    assert harness_headers(listed) == ["zq.h", "zq_net.h", "zq_extra.h"]
    # parts that include each other (both guarded): one of them stays
    (tmp_path / "a.h").write_text('#ifndef A_H\n#define A_H\n#include "b.h"\n#endif\n')
    (tmp_path / "b.h").write_text('#ifndef B_H\n#define B_H\n#include "a.h"\n#endif\n')
    assert harness_headers([tmp_path / "a.h", tmp_path / "b.h"]) == ["b.h"]
    # a header that cannot be read is kept
    assert harness_headers([tmp_path / "gone.h", tmp_path / "zq_extra.h"]) == ["gone.h", "zq_extra.h"]
