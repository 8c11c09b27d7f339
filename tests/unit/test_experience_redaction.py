"""Secret redaction on a corpus of 40 credential shapes, and no false alarms on C harness code.

Fake secrets are assembled at run time from pieces, so no credential-shaped literal sits in the
repository (secret scanners would flag it).
"""

from __future__ import annotations

import pytest

from benchkit.security.secrets_corpus import ALNUM, AZ, B64, DIG, HEX, URLSAFE, r
from long_term_memory.experience import find_secrets, redact
from long_term_memory.experience.redaction import PATTERNS

CORPUS: list[tuple[str, str, str]] = [  # (pattern name, secret, the text around it: {} = secret)
    ("aws_access_key_id", "AKIA" + r(AZ + DIG, 16), "export AWS_ACCESS_KEY_ID={}"),
    ("aws_access_key_id", "ASIA" + r(AZ + DIG, 16, 3), "key id {} in the log"),
    ("aws_secret_access_key", r(B64, 40), "aws_secret_access_key = {}"),
    ("aws_session_token", r(B64, 120), "AWS_SESSION_TOKEN={}"),
    ("github_pat", "ghp_" + r(ALNUM, 36), "git clone https://github.com/x/y # token {}"),
    ("github_oauth", "gho_" + r(ALNUM, 36), "oauth {}"),
    ("github_app_token", "ghs_" + r(ALNUM, 36), "app token {}"),
    ("github_app_token", "ghu_" + r(ALNUM, 36, 5), "user-to-server {}"),
    ("github_refresh_token", "ghr_" + r(ALNUM, 76), "refresh {}"),
    ("github_fine_grained_pat", "github_pat_" + r(ALNUM + "_", 82), "pat: {}"),
    ("gitlab_pat", "glpat-" + r(URLSAFE, 20), "PRIVATE-TOKEN: {}"),
    ("gitlab_runner_token", "glrt-" + r(URLSAFE, 24), "runner {}"),
    ("gitlab_pipeline_trigger", "glptt-" + r(HEX, 40), "trigger {}"),
    ("gitlab_deploy_token", "gldt-" + r(URLSAFE, 20), "deploy {}"),
    ("slack_token", "xoxb-" + r(DIG, 12) + "-" + r(DIG, 13) + "-" + r(ALNUM, 24), "SLACK_BOT={}"),
    ("slack_token", "xoxp-" + r(DIG, 11) + "-" + r(DIG, 11) + "-" + r(ALNUM, 26, 9), "user {}"),
    ("slack_app_token", "xapp-1-A" + r(AZ + DIG, 10) + "-" + r(DIG, 13) + "-" + r(HEX, 64), "{}"),
    ("slack_webhook", "https://hooks.slack.com/services/T" + r(AZ, 8) + "/B" + r(AZ, 8) + "/" + r(ALNUM, 24),
     "post to {}"),
    ("openai_key", "sk-" + r(ALNUM, 48), "OPENAI_API_KEY={}"),
    ("openai_key", "sk-proj-" + r(URLSAFE, 64), "key {} set"),
    ("anthropic_key", "sk-ant-api03-" + r(URLSAFE, 80), "ANTHROPIC_API_KEY={}"),
    ("google_api_key", "AIza" + r(URLSAFE, 35), "maps key {}"),
    ("google_oauth_secret", "GOCSPX-" + r(URLSAFE, 28), "client secret {}"),
    ("google_oauth_token", "ya29." + r(URLSAFE, 60), "Bearer-ish {}"),
    ("stripe_key", "sk_live_" + r(ALNUM, 24), "stripe {}"),
    ("stripe_key", "rk_test_" + r(ALNUM, 30), "restricted {}"),
    ("twilio_api_key", "SK" + r(HEX, 32), "twilio {}"),
    ("sendgrid_key", "SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43), "sendgrid {}"),
    ("mailgun_key", "key-" + r(ALNUM, 32), "mailgun {}"),
    ("npm_token", "npm_" + r(ALNUM, 36), "//registry/:_authToken={}"),
    ("pypi_token", "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 70), "password = {}"),
    ("huggingface_token", "hf_" + r(ALNUM, 34), "HF_TOKEN={}"),
    ("jwt", "eyJ" + r(URLSAFE, 20) + ".eyJ" + r(URLSAFE, 40) + "." + r(URLSAFE, 43), "Cookie: session={}"),
    ("private_key_block", "-----BEGIN RSA PRIVATE KEY-----\n" + r(B64, 64) + "\n" + r(B64, 64)
     + "\n-----END RSA PRIVATE KEY-----", "key file:\n{}\nend"),
    ("private_key_block", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + r(B64, 70)
     + "\n-----END OPENSSH PRIVATE KEY-----", "{}"),
    ("private_key_block", "-----BEGIN PRIVATE KEY-----\n" + r(B64, 50), "truncated: {}"),
    ("url_password", "postgres://admin:" + r(ALNUM, 12) + "@db.internal:5432/app", "DATABASE_URL={}"),
    ("url_password", "https://user:" + r(ALNUM, 10, 2) + "@git.example.org/repo.git", "remote {}"),
    ("bearer_token", "Authorization: Bearer " + r(URLSAFE + ".", 40), "curl -H '{}'"),
    ("basic_auth_header", "Authorization: Basic " + r(B64, 24) + "==", "{}"),
    ("azure_storage_key", "AccountKey=" + r(B64, 86) + "==", "DefaultEndpointsProtocol=https;{}"),
    ("azure_sas_signature", "?sv=2022-11-02&sig=" + r(ALNUM + "%", 44), "https://a.blob.core.windows.net/c{}"),
    ("discord_bot_token", "M" + r(ALNUM, 23) + "." + r(URLSAFE, 6) + "." + r(URLSAFE, 27), "bot {}"),
    ("discord_webhook", "https://discord.com/api/webhooks/" + r(DIG, 18) + "/" + r(URLSAFE, 68), "{}"),
    ("telegram_bot_token", r(DIG, 10) + ":AA" + r(URLSAFE, 33), "bot{}/sendMessage"),
    ("shopify_token", "shpat_" + r(HEX, 32), "shopify {}"),
    ("digitalocean_token", "dop_v1_" + r(HEX, 64), "DO {}"),
    ("square_token", "sq0atp-" + r(URLSAFE, 22), "square {}"),
    ("databricks_token", "dapi" + r(HEX, 32), "databricks {}"),
    ("postman_key", "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34), "postman {}"),
    ("grafana_token", "glsa_" + r(ALNUM, 32) + "_" + r(HEX, 8), "grafana {}"),
    ("linear_key", "lin_api_" + r(ALNUM, 40), "linear {}"),
    ("age_secret_key", "AGE-SECRET-KEY-1" + r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58), "{}"),
    ("netrc_password", "machine api.example.com login bot password " + r(ALNUM, 14), "~/.netrc: {}"),
    ("generic_assignment", "api_key=" + r(ALNUM, 24), "config: {}"),
    ("generic_assignment", 'password: "' + r(ALNUM, 12) + '"', "settings {}"),
    ("generic_assignment", "CLIENT_SECRET=" + r(ALNUM, 30), "{}"),
    ("generic_assignment", "auth_token = '" + r(ALNUM, 20) + "'", "{}"),
]


def test_corpus_covers_at_least_thirty_distinct_patterns() -> None:
    names = {name for name, _, _ in CORPUS}
    assert len(names) >= 30 and len(CORPUS) >= 50
    assert names <= {name for name, _ in PATTERNS}


@pytest.mark.parametrize(("name", "secret", "context"), CORPUS,
                         ids=[f"{i}-{c[0]}" for i, c in enumerate(CORPUS)])
def test_each_secret_is_found_and_redacted(name: str, secret: str, context: str) -> None:
    text = context.format(secret)
    assert name in find_secrets(text)
    result = redact(text)
    assert name in result.found
    assert f"[REDACTED:{name}]" in result.text
    # Nothing long enough to be useful survives (short prefixes such as "sk-" may).
    body = secret.split("=", 1)[-1].split(":", 1)[-1].strip(" '\"")
    for start in range(0, max(1, len(body) - 12), 6):
        assert body[start:start + 12] not in result.text
    assert redact(result.text).text == result.text  # redacting twice changes nothing


HARNESS_CODE = r"""
#include <stdint.h>
#include <string.h>
#include "cJSON.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size); text[size] = '\0';
  const char *token = next_token(text);
  char *secret = yaml_parser_scan2(&parser);
  int password_len = 12; size_t key_len = size;
  unsigned char key[32] = {0}; uint32_t crc = crc32(0L, Z_NULL, 0);
  char *password = argv[1];
  const char *url = "http://example.com:8080/path?x=1";
  cJSON *item = cJSON_Parse(text); cJSON_Delete(item);
  archive_read_add_passphrase(a, passphrase);
  free(text); return 0;
}
"""
PROSE = [
    "Call inflateInit before inflate and inflateEnd after; check Z_STREAM_END.",
    "The harness crashed with heap-buffer-overflow in kv_parse: NUL-terminate the copy.",
    "use of undeclared identifier 'memcpy': add #include <string.h>",
    "Set the token type with yaml_token_delete(&token) after each scan.",
    "line coverage 37.3% -> 41.2% after adding cJSON_PrintUnformatted round trip",
    "sha256 of the corpus: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "api_key parameter of the library must be non-NULL; pass a fixed string",
    "see https://github.com/DaveGamble/cJSON/issues/123 for the parser limits",
]


def test_no_false_alarms_on_harness_code_and_lessons() -> None:
    assert find_secrets(HARNESS_CODE) == []
    assert redact(HARNESS_CODE).text == HARNESS_CODE
    for text in PROSE:
        assert find_secrets(text) == [], text
