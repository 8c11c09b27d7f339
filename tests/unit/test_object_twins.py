"""A call that crashed on an object teaches about the calls that work that object the same way.

A cipher context built without its key crashes every mode of the cipher, each with its own
signature (``zz_cipher_crypt_ecb(ctx, mode, in, out)``, ``zz_cipher_crypt_cbc(ctx, mode, len, iv,
in, out)``, ...). Functions of one object and one result type whose names differ only in the last
word are one family: a crash of one drops its siblings' blocks from the same change, keeps them
on the tabu list, and an ``avoid_call`` lesson leaves them out. The API below is invented.
"""

from __future__ import annotations

from pathlib import Path

from agent_graph.context import Context
from agent_graph.memory.local_memory import failed_directions
from agents.offline import type_table
from agents.offline.cdecl import parse_prototypes
from agents.offline.lesson_apply import ActionableLesson, avoided_calls
from fuzzkit.api_twins import object_twins, twins
from long_term_memory.experience.lessons import parse_action, parse_scope
from nodes.memory_manager import revert_failed
from tests.unit.test_crashed_block import state

API = parse_prototypes("""
void zz_cipher_init(zz_cipher_context *ctx);
int zz_cipher_setkey_enc(zz_cipher_context *ctx, const unsigned char *key, unsigned int bits);
int zz_cipher_crypt_ecb(zz_cipher_context *ctx, int mode, const unsigned char input[16],
                        unsigned char output[16]);
int zz_cipher_crypt_cbc(zz_cipher_context *ctx, int mode, size_t length, unsigned char iv[16],
                        const unsigned char *input, unsigned char *output);
int zz_cipher_crypt_ctr(zz_cipher_context *ctx, size_t length, size_t *nc_off, unsigned char nonce[16],
                        unsigned char block[16], const unsigned char *input, unsigned char *output);
void zz_cipher_crypt_wipe(zz_cipher_context *ctx);
int zz_other_crypt_cbc(zz_other_context *ctx, int mode, size_t length, unsigned char iv[16],
                       const unsigned char *input, unsigned char *output);
int zz_picture_rescale(zz_picture *pic, int width, int height);
int zz_picture_crop(zz_picture *pic, int left, int top, int width, int height);
int zz_text_crypt_cbc(const char *text, int mode);
int zz_conn_set_hs_own_cert(zz_conn *conn, zz_cert *cert, zz_key *key);
int zz_conn_set_hs_ca_chain(zz_conn *conn, zz_cert *chain, zz_crl *crl);
int zz_conn_set_hostname(zz_conn *conn, const char *hostname);
int zz_conn_set_client_transport_id(zz_conn *conn, const unsigned char *info, size_t len);
int zz_text_crypt_ecb(const char *text, int mode);
""")
NAMES = {f.name: f for f in API}


def test_one_object_one_result_names_but_for_the_last_word() -> None:
    assert object_twins("zz_cipher_crypt_cbc", API, {}) == ["zz_cipher_crypt_ecb", "zz_cipher_crypt_ctr"]
    # a void wipe has another result; setkey another stem; another object is another family
    assert "zz_cipher_crypt_wipe" not in object_twins("zz_cipher_crypt_ecb", API, {})
    assert object_twins("zz_cipher_setkey_enc", API, {}) == []
    assert object_twins("zz_other_crypt_cbc", API, {}) == []
    # a one-word stem is a whole module (every picture call), no family
    assert object_twins("zz_picture_rescale", API, {}) == []
    # no object: a string is no object a call can leave unset
    assert object_twins("zz_text_crypt_cbc", API, {}) == []
    assert twins("zz_cipher_crypt_ctr", API, {}) == ["zz_cipher_crypt_ecb", "zz_cipher_crypt_cbc"]
    # three words in common when the last two differ (calls of one phase of a connection);
    # two are not enough then (every setter of the connection would be one family)
    assert object_twins("zz_conn_set_hs_own_cert", API, {}) == ["zz_conn_set_hs_ca_chain"]
    assert object_twins("zz_conn_set_hostname", API, {}) == []


HARNESS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:CALL */
  rc = zz_decode(data, size);
  /* LF improve: call zz_cipher_crypt_cbc on a new zz_cipher_context */
  {
    zz_cipher_context c1;
    zz_cipher_init(&c1);
    zz_cipher_crypt_cbc(&c1, 0, size, iv, data, out);
  }
  /* LF improve: call zz_picture_crop on a new zz_picture */
  {
    zz_picture p;
    zz_picture_crop(&p, 0, 0, 1, 1);
  }
  /* LF improve: call zz_cipher_crypt_ctr on a new zz_cipher_context */
  {
    zz_cipher_context c2;
    zz_cipher_init(&c2);
    zz_cipher_crypt_ctr(&c2, size, &off, nonce, block, data, out);
  }
  /* @LF:CLEANUP */
  return 0;
}
"""
DIRECTIONS = ["call zz_cipher_crypt_cbc on a new zz_cipher_context",
              "call zz_picture_crop on a new zz_picture",
              "call zz_cipher_crypt_ctr on a new zz_cipher_context"]


def test_a_crash_on_the_object_drops_the_sibling_modes_of_the_same_change(tmp_path: Path) -> None:
    crashed = {**state(tmp_path, 8), "harness_code": HARNESS, "counters": {"harness_versions": 2},
               "api": [f.to_dict() for f in API], "header_facts": {},
               "last_change": {"kind": "improve", "version": 2, "directions": DIRECTIONS}}
    update = revert_failed(crashed, Context())  # type: ignore[arg-type]
    code = update["harness_code"]
    assert "zz_cipher_crypt" not in code and "zz_picture_crop(&p" in code
    assert update["counters"]["dropped_blocks"] == 2
    assert update["last_change"]["directions"] == ["call zz_picture_crop on a new zz_picture"]
    assert failed_directions(update["local_memory"]) == [DIRECTIONS[0]]


def test_an_avoid_call_lesson_leaves_out_the_objects_other_modes() -> None:
    lesson = ActionableLesson("MEM-0000cafe", "Calling zz_cipher_crypt_cbc crashed",
                              parse_scope({"name": "zz_cipher_crypt_cbc"}),
                              parse_action("avoid_call(zz_cipher_crypt_cbc)"))
    with type_table.using(type_table.read_types("")):
        avoided = avoided_calls([lesson], NAMES["zz_picture_rescale"], API)
    assert sorted(avoided) == ["zz_cipher_crypt_cbc", "zz_cipher_crypt_ctr", "zz_cipher_crypt_ecb"]
