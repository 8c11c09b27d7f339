"""Secret detection for memory candidates: what a bank stores must not carry credentials.

Lessons are distilled from trajectories that include build logs, harness code and model output,
any of which may quote an environment variable or a URL with a password. Each pattern has a
name; :func:`find_secrets` reports the names found, :func:`redact` replaces each match with
``[REDACTED:<name>]`` (only the value, when a pattern names it as its ``secret`` group), and
:func:`redact_within` then cuts the text back to a field's limit, since a marker can be longer
than the secret it hides. Patterns are specific (prefixes, lengths, structure) so C code such as
``token = next_token(p)``, sanitizer addresses and ``crash-<sha1>`` names are left alone; every
repetition is bounded, so a long line costs linear time (``benchkit/security/secrets_corpus.py``
measures recall and false positives).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# A generic "key = value" only counts when the value looks like a credential: quoted, or an
# unquoted run of 8 to 512 characters mixing letters and digits that is neither a function call
# nor a hex address (``token: 0x6020...`` in a sanitizer line). Lengths are bounded so no
# pattern rescans a long line from every key it holds.
_ASSIGN_KEYS = (
    r"(?:api[_-]?key|apikey|api[_-]?secret|secret[_-]?key|client[_-]?secret|"
    r"access[_-]?token|auth[_-]?token|refresh[_-]?token|private[_-]?key|passwd|"
    r"password|passphrase|secret|token)"
)
_VALUE = r"[A-Za-z0-9_./+=-]"
_MIXED = rf"(?!0x[0-9a-fA-F]+\b)(?={_VALUE}{{0,512}}[0-9])(?={_VALUE}{{0,512}}[A-Za-z]){_VALUE}{{8,512}}+"
_ASSIGN = (
    rf"(?i)(?<![a-z0-9]){_ASSIGN_KEYS}\b[\"']?\s*[:=]\s*"
    rf"(?:\"(?!\[REDACTED)[^\"\s]{{6,}}\"|'(?!\[REDACTED)[^'\s]{{6,}}'|"
    rf"{_MIXED}(?![(\[]))"
)
# Password-like keys with any prefix (PGPASSWORD, DB_PASSWORD, userPassword). Besides the
# shapes above, a value without digits counts when it ends its line, as in env, ini and YAML
# files, and is not a status word ("password: incorrect"); a C assignment ends in ``;``.
_STATUS_WORDS = (
    r"(?:incorrect|invalid|required|missing|expired|mismatch|wrong|changed|reset|updated|"
    r"none|null|nil|true|false|empty|unset|hidden|redacted|undefined|optional|string|bytes)\b"
)
_PASSWORD = (
    r"(?im)\b[A-Za-z0-9_]*(?:pass(?:word|wd|phrase)|secret|pwd)[\"']?[ \t]*[:=][ \t]*"
    r"(?P<secret>\"(?!\[REDACTED)[^\"\n]{6,512}\"|'(?!\[REDACTED)[^'\n]{6,512}'|"
    rf"{_MIXED}(?![(\[])|"
    rf"(?!{_STATUS_WORDS})(?![$%<{{\[])[^\s\"'`,;()\[\]{{}}<>=]{{6,512}}+(?=[ \t]*(?:$|\#)))"
)

PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "private_key_block",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    ("aws_access_key_id", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    (
        "aws_secret_access_key",
        r"(?i)\b(?:aws_?)?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?"
        r"[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])",
    ),
    (
        "aws_session_token",
        r"(?i)\b(?:aws_?)?session_?token\b[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{100,}",
    ),
    ("github_pat", r"\bghp_[A-Za-z0-9]{36}\b"),
    ("github_oauth", r"\bgho_[A-Za-z0-9]{36}\b"),
    ("github_app_token", r"\bgh[us]_[A-Za-z0-9]{36}\b"),
    ("github_refresh_token", r"\bghr_[A-Za-z0-9]{36,76}\b"),
    ("github_fine_grained_pat", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    ("gitlab_pat", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("gitlab_runner_token", r"\bglrt-[A-Za-z0-9_-]{20,}"),
    ("gitlab_pipeline_trigger", r"\bglptt-[0-9a-f]{40}\b"),
    ("gitlab_deploy_token", r"\bgldt-[A-Za-z0-9_-]{20,}"),
    ("slack_token", r"\bxox[abposr]-(?:[0-9]+-)+[A-Za-z0-9]{10,}"),
    ("slack_app_token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{32,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}"),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("google_oauth_secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}"),
    ("google_oauth_token", r"\bya29\.[0-9A-Za-z_-]{20,}"),
    ("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,}"),
    ("twilio_api_key", r"\bSK[0-9a-fA-F]{32}\b"),
    ("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ("mailgun_key", r"\bkey-[0-9a-zA-Z]{32}\b"),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{34,}\b"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    # The scheme is bounded: an unbounded one rescans a long dotted run from every boundary.
    ("url_password", r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,31}://[^\s:/@\"']*:[^\s@/\"']+@[^\s/\"']+"),
    (
        "bearer_token",
        r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token)\s+[A-Za-z0-9._~+/-]{12,}=*",
    ),
    ("basic_auth_header", r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+[A-Za-z0-9+/]{8,}=*"),
    ("bearer_token", r"(?i)\bbearer\s+(?=[A-Za-z0-9._~+/-]{0,512}[0-9])[A-Za-z0-9._~+/-]{16,512}+=*"),
    ("azure_storage_key", r"(?i)\bAccountKey=[A-Za-z0-9+/]{40,}={0,2}"),
    ("azure_shared_access_key", r"(?i)\bSharedAccessKey=[A-Za-z0-9+/]{20,}={0,2}"),
    ("azure_shared_access_key", r"(?i)\bSharedAccessSignature\s+[^\s\"';]{16,}"),
    ("azure_sas_signature", r"(?i)[?&]sig=[A-Za-z0-9%+/]{30,}={0,2}"),
    ("discord_bot_token", r"\b[MN][A-Za-z0-9]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b"),
    (
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/"
        r"[A-Za-z0-9_-]{20,}",
    ),
    ("telegram_bot_token", r"(?<![0-9])\d{8,10}:AA[0-9A-Za-z_-]{33}(?![0-9A-Za-z_-])"),
    ("shopify_token", r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
    ("digitalocean_token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    ("square_token", r"\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}"),
    ("databricks_token", r"\bdapi[a-f0-9]{32}\b"),
    ("postman_key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    ("grafana_token", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b"),
    ("linear_key", r"\blin_api_[A-Za-z0-9]{40}\b"),
    ("age_secret_key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"),
    ("netrc_password", r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+\S+"),
    ("putty_private_key", r"(?i)\bPrivate-Lines:[ \t]*\d+[ \t]*\r?\n[A-Za-z0-9+/=\r\n]{16,}"),
    ("registry_auth", r"(?i)(?<![A-Za-z0-9])_auth[ \t]*=[ \t]*[A-Za-z0-9+/]{12,}={0,2}"),
    ("registry_auth", r"(?i)[\"']auth[\"'][ \t]*:[ \t]*[\"'][A-Za-z0-9+/]{12,}={0,2}[\"']"),
    (
        "http_cookie",
        r"(?i)\b(?:set-)?cookie[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<secret>[A-Za-z0-9_.!#$%&*+^|~-]{1,64}=[^\s;,\"'\[]{6,}"
        r"(?:;[ \t]*[A-Za-z0-9_.!#$%&*+^|~-]{1,64}(?:=[^\s;,\"'\[]*)?)*)",
    ),
    ("cli_password", r"(?<!\S)(?:-u|--user)[ \t=]+[^\s:'\"]{1,64}:(?P<secret>[^\s'\"]{4,})"),
    ("cli_password", r"(?i)\bmysql(?:dump|admin)?\b[^\n]{0,200}?[ \t]-p(?P<secret>[^\s'\"-][^\s'\"]{2,})"),
    ("generic_assignment", _ASSIGN),
    ("password_assignment", _PASSWORD),
)

_COMPILED = tuple((name, re.compile(pattern)) for name, pattern in PATTERNS)


@dataclass(frozen=True)
class Redaction:
    """The redacted text and the names of the patterns that matched."""

    text: str
    found: tuple[str, ...]


def find_secrets(text: str) -> list[str]:
    """Names of the secret patterns present in ``text`` (sorted, each once)."""
    return sorted({name for name, regex in _COMPILED if regex.search(text)})


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` with ``[REDACTED:<pattern name>]``.

    Patterns run most specific first, so an OpenAI key inside ``api_key=...`` is reported as
    ``openai_key``, and a redaction marker is never matched again.
    """
    found: list[str] = []
    for name, regex in _COMPILED:
        text, count = regex.subn(_marker(name), text)
        if count:
            found.append(name)
    return Redaction(text, tuple(sorted(set(found))))


def _marker(name: str) -> Callable[[re.Match[str]], str]:
    """The replacement: the whole match, or only its ``secret`` group when it has one."""

    def replace(match: re.Match[str]) -> str:
        if "secret" not in match.re.groupindex or match.start("secret") < 0:
            return f"[REDACTED:{name}]"
        whole, start, end = match.group(), match.start("secret"), match.end("secret")
        return whole[: start - match.start()] + f"[REDACTED:{name}]" + whole[end - match.start() :]

    return replace


def redact_within(text: str, limit: int) -> Redaction:
    """:func:`redact`, then cut to ``limit`` characters (markers are longer than some secrets).

    A cut never leaves part of a marker behind; the text ends with ``…`` when it was cut.
    """
    result = redact(text)
    if len(result.text) <= limit:
        return result
    cut = result.text[: max(0, limit - 1)]
    partial = cut.rfind("[REDACTED:")
    if partial >= 0 and "]" not in cut[partial:]:
        cut = cut[:partial]
    return Redaction(cut.rstrip() + "…", result.found)
