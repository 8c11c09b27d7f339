"""A settings record nothing constructs: what zero leaves undefined is set before it is used.

Invented session library: ``ss_create(&session, &policy)`` rejects a policy whose stream kind is
``ss_kind_undefined`` (zero, in a nested record), whose cipher settings were never given their
defaults (the API has ``ss_crypto_set_rtp_default(ss_crypto_t *)`` and an ``rtcp`` one), or whose
key is NULL. The policy has no
constructor or initializer of its own, so it was zeroed and the target was never reached.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
int ss_init(void);
int ss_create(ss_ctx_t **session, const ss_policy_t *policy);
void ss_crypto_set_rtp_default(ss_crypto_t *p);
void ss_crypto_set_rtcp_default(ss_crypto_t *p);
int ss_unprotect(ss_ctx_t *ctx, void *packet, int *len);
int ss_dealloc(ss_ctx_t *session);
"""
TYPES = render_types("""```c
typedef struct ss_ctx ss_ctx_t;
struct ss_ctx;  /* opaque: only pointers, made by the API */
typedef enum ss_kind ss_kind_t;
enum ss_kind { ss_kind_undefined = 0, ss_kind_specific = 1, ss_kind_any_in = 2, ss_kind_any_out = 3 };
typedef struct ss_crypto ss_crypto_t;
struct ss_crypto { int cipher_type; int key_len; };
typedef struct ss_stream ss_stream_t;
struct ss_stream { ss_kind_t kind; unsigned int value; };
typedef struct ss_policy ss_policy_t;
struct ss_policy { ss_stream_t ssrc; ss_crypto_t rtp; ss_crypto_t rtcp; unsigned char *key; };
```
Release functions:
- ss_dealloc releases ss_ctx_t * (parameter type)
""")


def _draft() -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "ss_unprotect")
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["ss.h"], arche, default_skeleton(arche)).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_an_enum_whose_zero_is_undefined_gets_a_defined_member() -> None:
    body = _draft()
    assert re.search(r"(\w+)\.ssrc\.kind = \(ss_kind_t\)lf_take_pick\(", body), body
    assert re.search(r"static const int \w+\[\] = \{1, 2, 3\};", body), body


def test_a_sub_record_gets_the_apis_defaults_and_a_key_its_bytes() -> None:
    body = _draft()
    policy = re.search(r"ss_create\(&\w+, &(\w+)\)", body)
    assert policy, body
    name = policy.group(1)
    assert f"ss_crypto_set_rtp_default(&{name}.rtp);" in body, body
    assert f"ss_crypto_set_rtcp_default(&{name}.rtcp);" in body, body
    assert re.search(rf"{name}\.key = \(unsigned char \*\)key_bytes\w*;", body), body
    assert body.index(f"ss_crypto_set_rtp_default(&{name}.rtp);") < policy.start()
