"""Secrets as they appear in logs, configs and trajectories, and ordinary lines that are not.

Recall is measured on the sensitive part only (the password, not the URL around it): a secret
counts as caught when no 8-character piece of it survives :func:`redact`. An ordinary line is
a false positive when redaction changes it at all. Fake secrets are assembled at run time from
pieces, so no credential-shaped literal sits in the repository. :func:`measure` is what
``bench/hostile.py`` and ``tests/security/test_redaction_corpus.py`` report.
"""

from __future__ import annotations

import time
from typing import Any

from long_term_memory.experience.redaction import redact


def r(alphabet: str, n: int, seed: int = 7) -> str:
    """A deterministic pseudo-random string of ``n`` characters from ``alphabet``."""
    out, x = [], seed
    for _ in range(n):
        x = (x * 1103515245 + 12345) % (1 << 31)
        out.append(alphabet[x % len(alphabet)])
    return "".join(out)


AZ = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
az = AZ.lower()
DIG = "0123456789"
HEX = "0123456789abcdef"
ALNUM = AZ + az + DIG
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
WORDS = az  # passwords without digits

PEM_BODY = r(B64, 64, 11) + "\n" + r(B64, 64, 12)
JSON_PEM_BODY = r(B64, 64, 13) + "\\n" + r(B64, 40, 14)

# (label, secret, line): the line holds the secret where "{}" stands.
SECRETS: list[tuple[str, str, str]] = [
    # the six the issue found missed
    ("aws SecretAccessKey in JSON", r(B64, 40, 1), '{"AccessKeyId": "x", "SecretAccessKey": "{}"}'),
    ("redis URL, password only", r(ALNUM, 16, 2), "REDIS_URL=redis://:{}@cache.internal:6379/0"),
    ("Authorization Bearer as a dict", r(URLSAFE + ".", 40, 3),
     "headers = {\"Authorization\": \"Bearer {}\", \"Accept\": \"*/*\"}"),
    ("Azure Service Bus SharedAccessKey", r(B64, 43, 4) + "=",
     "Endpoint=sb://ns1.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
     "SharedAccessKey={}"),
    ("Set-Cookie session id", r(az + DIG, 32, 5), "Set-Cookie: sessionid={}; Path=/; HttpOnly"),
    ("password without digits", r(WORDS, 18, 6), "DB_PASSWORD={}"),
    # cloud keys
    ("aws access key id", "AKIA" + r(AZ + DIG, 16, 7), "export AWS_ACCESS_KEY_ID={}"),
    ("aws temporary key id", "ASIA" + r(AZ + DIG, 16, 8), "key id {} in the log"),
    ("aws secret in ini", r(B64, 40, 9), "aws_secret_access_key = {}"),
    ("aws secret in env", r(B64, 40, 10), "AWS_SECRET_ACCESS_KEY={}"),
    ("aws session token in JSON", r(B64, 160, 11), '"SessionToken": "{}"'),
    ("google api key", "AIza" + r(URLSAFE, 35, 12), "maps key {}"),
    ("google oauth token", "ya29." + r(URLSAFE, 60, 13), "token {} expires"),
    ("google oauth client secret", "GOCSPX-" + r(URLSAFE, 28, 14), "client_secret: {}"),
    ("gcp service account private key", JSON_PEM_BODY,
     '"private_key": "-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n"'),
    ("azure storage account key", r(B64, 86, 15) + "==",
     "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net"),
    ("azure SAS signature", r(ALNUM + "%", 44, 16), "https://a.blob.core.windows.net/c?sv=2022-11-02&sig={}"),
    ("digitalocean token", "dop_v1_" + r(HEX, 64, 17), "DO {}"),
    # source hosting and chat
    ("github classic PAT", "ghp_" + r(ALNUM, 36, 18), "git clone https://github.com/x/y # token {}"),
    ("github oauth token", "gho_" + r(ALNUM, 36, 19), "oauth {}"),
    ("github app token", "ghs_" + r(ALNUM, 36, 20), "GITHUB_TOKEN={}"),
    ("github fine-grained PAT", "github_pat_" + r(ALNUM + "_", 82, 21), "pat: {}"),
    ("github token in Authorization", "ghu_" + r(ALNUM, 36, 22), "Authorization: token {}"),
    ("gitlab PAT", "glpat-" + r(URLSAFE, 20, 23), "PRIVATE-TOKEN: {}"),
    ("gitlab runner token", "glrt-" + r(URLSAFE, 24, 24), "runner {}"),
    ("slack bot token", "xoxb-" + r(DIG, 12, 25) + "-" + r(DIG, 13, 26) + "-" + r(ALNUM, 24, 27),
     "SLACK_BOT_TOKEN={}"),
    ("slack webhook", r(ALNUM, 24, 28),
     "post to https://hooks.slack.com/services/T" + r(AZ, 8, 29) + "/B" + r(AZ, 8, 30) + "/{}"),
    ("discord bot token", "M" + r(ALNUM, 23, 31) + "." + r(URLSAFE, 6, 32) + "." + r(URLSAFE, 27, 33),
     "bot {}"),
    ("telegram bot token", r(DIG, 10, 34) + ":AA" + r(URLSAFE, 33, 35), "bot{}/sendMessage"),
    # AI and SaaS APIs
    ("openai project key", "sk-proj-" + r(URLSAFE, 64, 36), "OPENAI_API_KEY={}"),
    ("openai legacy key", "sk-" + r(ALNUM, 48, 37), "key {} set"),
    ("anthropic key", "sk-ant-api03-" + r(URLSAFE, 80, 38), "ANTHROPIC_API_KEY={}"),
    ("huggingface token", "hf_" + r(ALNUM, 34, 39), "HF_TOKEN={}"),
    ("stripe live key", "sk_live_" + r(ALNUM, 24, 40), "stripe {}"),
    ("stripe restricted key", "rk_live_" + r(ALNUM, 30, 41), "restricted {}"),
    ("sendgrid key", "SG." + r(URLSAFE, 22, 42) + "." + r(URLSAFE, 43, 43), "sendgrid {}"),
    ("twilio api key", "SK" + r(HEX, 32, 44), "twilio {}"),
    ("mailgun key", "key-" + r(ALNUM, 32, 45), "mailgun {}"),
    ("x-api-key header", r(ALNUM, 32, 46), "X-Api-Key: {}"),
    ("api key in JSON camelCase", r(ALNUM, 32, 47), '{"apiKey": "{}"}'),
    # package registries
    ("npm token", "npm_" + r(ALNUM, 36, 48), "//registry.example/:_authToken={}"),
    ("npm legacy auth", r(B64, 24, 49) + "=", "_auth={}"),
    ("pypi token", "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 70, 50), "password = {}"),
    ("docker config auth", r(B64, 28, 51), '{"auths": {"images.example": {"auth": "{}"}}}'),
    # tokens and keys
    ("JWT in a cookie", "eyJ" + r(URLSAFE, 20, 52) + ".eyJ" + r(URLSAFE, 40, 53) + "." + r(URLSAFE, 43, 54),
     "Cookie: session={}"),
    ("bearer header", r(URLSAFE + ".", 40, 55), "curl -H 'Authorization: Bearer {}' https://api.example"),
    ("basic auth header", r(B64, 24, 56) + "==", "Authorization: Basic {}"),
    ("bare Bearer in a log", r(URLSAFE, 32, 57) + "9", "sending request with Bearer {} to upstream"),
    ("RSA private key", PEM_BODY, "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----"),
    ("OpenSSH private key", r(B64, 70, 58),
     "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----"),
    ("EC private key, truncated", r(B64, 64, 59), "-----BEGIN EC PRIVATE KEY-----\n{}"),
    ("PGP private key block", r(B64, 64, 60),
     "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{}\n-----END PGP PRIVATE KEY BLOCK-----"),
    ("PuTTY private key", r(B64, 64, 61),
     "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\n{}\nPrivate-MAC: " + r(HEX, 64, 62)),
    ("age secret key", "AGE-SECRET-KEY-1" + r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58, 63), "{}"),
    # URLs with passwords
    ("basic-auth https URL", r(ALNUM, 12, 64), "remote https://deploy:{}@git.example.org/repo.git"),
    ("postgres URL", r(ALNUM, 14, 65), "DATABASE_URL=postgres://admin:{}@db.internal:5432/app"),
    ("mysql URL", r(ALNUM + "!", 12, 66), "mysql://root:{}@localhost:3306/test"),
    ("mongodb+srv URL", r(ALNUM, 16, 67), "mongodb+srv://app:{}@cluster0.abcde.mongodb.net/db?retryWrites=true"),
    ("amqp URL", r(az, 10, 68), "amqp://guest:{}@rabbit:5672/"),
    ("curl -u", r(ALNUM, 12, 69), "curl -u admin:{} https://ci.example/api"),
    ("netrc", r(ALNUM, 14, 70), "machine api.example.com login bot password {}"),
    # password= / secret: shapes
    ("password in env with digits", r(ALNUM, 16, 71), "PGPASSWORD={} psql -h db"),
    ("password in yaml, quoted", r(ALNUM + "!@#", 14, 72), 'password: "{}"'),
    ("password in yaml, plain words", r(WORDS, 14, 73), "  password: {}"),
    ("passwd in ini", r(WORDS, 12, 74), "passwd = {}"),
    ("secret in yaml", r(ALNUM, 20, 75), "secret: {}"),
    ("client secret in env", r(ALNUM, 30, 76), "CLIENT_SECRET={}"),
    ("password in JSON", r(ALNUM + "&", 12, 77), '{"user": "svc", "password": "{}"}'),
    ("passphrase with spaces", " ".join(r(WORDS, 6, s) for s in (78, 79, 80, 81)), 'passphrase: "{}"'),
    ("auth token in python", r(ALNUM, 20, 82), "auth_token = '{}'"),
    ("mysql root password env", r(WORDS + DIG, 16, 83), "MYSQL_ROOT_PASSWORD={}"),
    ("password on a command line", r(ALNUM, 12, 84), "mysql -u root -p{} -h 127.0.0.1 app"),
]

# Lines from compiler output, sanitizer reports, libFuzzer, harness code and lessons.
ORDINARY: list[str] = [
    "harness.c:12:5: error: use of undeclared identifier 'token'",
    "harness.c:31:22: warning: passing 'const uint8_t *' to parameter of type 'char *' discards qualifiers",
    "harness.c:8:10: fatal error: 'acme/parse.h' file not found",
    "note: passing argument to parameter 'password' here",
    "==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011 at pc "
    "0x55d0c0a8e2a0 bp 0x7ffd5e8c1a30 sp 0x7ffd5e8c1a28",
    "READ of size 1 at 0x602000000011 thread T0",
    "    #0 0x55d0c0a8e2a0 in acme_next_token /src/acme/lexer.c:88:12",
    "0x602000000011 is located 0 bytes to the right of 1-byte region [0x602000000010,0x602000000011)",
    "SUMMARY: AddressSanitizer: heap-buffer-overflow /src/acme/lexer.c:88:12 in acme_next_token",
    "#1024\tpulse  cov: 245 ft: 512 corp: 40/1234b lim: 4 exec/s: 512 rss: 33Mb",
    "#52311\tNEW    cov: 301 ft: 790 corp: 77/3021b lim: 48 exec/s: 2615 rss: 41Mb L: 23/48 MS: 2 "
    "CopyPart-ChangeByte-",
    "MS: 1 ChangeBit-; base unit: 5ba93c9db0cff93f52b521d7420e43f6eda2784f",
    "Test unit written to ./crash-da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "artifact_prefix='./'; Test unit written to ./leak-3f786850e387550fdab836ed7e6dc881de23001b",
    "corpus/seed_YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo0MTIz.bin",
    "INFO: Seed: 3918206239",
    "  const char *token = next_token(text);",
    "  size_t key_len = strlen(key); if (key_len > 64) return 0;",
    "  char *password = argv[1];",
    "  password = copy_password(ctx, data, size);",
    "  int rc = acme_set_key(ctx, key, key_len);",
    "  if (token == NULL || password == NULL) return 0;",
    "  secret = acme_derive_secret(ctx, salt, 16);",
    "  token_len = (size_t)data[0] % 32; key = (const char *)data + 1;",
    "static const char *kTokens[] = {\"true\", \"false\", \"null\"};",
    "  token: 0x602000000010 len=16",
    "error: password: incorrect",
    "Set the token type with acme_token_delete(&token) after each scan.",
    "sha256 of the corpus: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "line coverage 37.3% -> 41.2% after adding the print round trip",
    "see https://github.com/example/acme/issues/123 for the parser limits",
    "clang -g -O1 -fsanitize=fuzzer,address -I/src/acme/include harness.c libacme.a -o fuzzer",
    "/usr/bin/ld: undefined reference to `acme_secret_free'",
    "Authorization header parsing: pass the bearer string without the scheme",
    "The password callback receives (buf, size, rwflag, userdata); return the length.",
]


def _survives(secret: str, text: str) -> bool:
    """Some 8-character piece of ``secret`` (or all of a shorter one) is still in ``text``."""
    width = min(8, len(secret))
    return any(secret[i : i + width] in text for i in range(len(secret) - width + 1))


def secret_lines() -> list[tuple[str, str, str]]:
    """``(label, secret, line)`` with the secret placed in its line."""
    return [(label, secret, line.replace("{}", secret)) for label, secret, line in SECRETS]


def measure() -> dict[str, Any]:
    """Recall on :data:`SECRETS` and false positives on :data:`ORDINARY`."""
    started = time.perf_counter()
    missed = [label for label, secret, line in secret_lines() if _survives(secret, redact(line).text)]
    false_positives = [line for line in ORDINARY if redact(line).text != line]
    return {
        "secrets": len(SECRETS),
        "caught": len(SECRETS) - len(missed),
        "missed": missed,
        "recall": round((len(SECRETS) - len(missed)) / len(SECRETS), 4),
        "ordinary_lines": len(ORDINARY),
        "false_positives": false_positives,
        "seconds": round(time.perf_counter() - started, 3),
    }
