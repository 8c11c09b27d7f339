"""Secret detection for memory candidates: what a bank stores must not carry credentials.

Lessons are distilled from trajectories that include build logs, harness code and model output,
any of which may quote an environment variable or a URL with a password. Each pattern has a
name; :func:`find_secrets` reports the names found, :func:`redact` replaces each match with
``[REDACTED:<name>]``. Patterns are specific (prefixes, lengths, structure) so C code such as
``token = next_token(p)`` is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A generic "key = value" only counts when the value looks like a credential: quoted, or an
# unquoted run of at least 8 characters mixing letters and digits that is not a function call.
_ASSIGN_KEYS = (
    r"(?:api[_-]?key|apikey|api[_-]?secret|secret[_-]?key|client[_-]?secret|"
    r"access[_-]?token|auth[_-]?token|refresh[_-]?token|private[_-]?key|passwd|"
    r"password|passphrase|secret|token)"
)
_ASSIGN = (
    rf"(?i)(?<![a-z0-9]){_ASSIGN_KEYS}\b[\"']?\s*[:=]\s*(?:\"[^\"\s]{{6,}}\"|'[^'\s]{{6,}}'|"
    r"(?=[A-Za-z0-9_./+=-]*[0-9])(?=[A-Za-z0-9_./+=-]*[A-Za-z])[A-Za-z0-9_./+=-]{8,}"
    r"(?![A-Za-z0-9_./+=(\[-]))"
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
        r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?"
        r"[A-Za-z0-9/+=]{40}\b",
    ),
    ("aws_session_token", r"(?i)\baws_?session_?token\b[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{100,}"),
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
    ("url_password", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@\"']+:[^\s@/\"']+@[^\s/\"']+"),
    ("bearer_token", r"(?i)\bauthorization\s*:\s*bearer\s+[A-Za-z0-9._~+/-]{12,}=*"),
    ("basic_auth_header", r"(?i)\bauthorization\s*:\s*basic\s+[A-Za-z0-9+/]{8,}=*"),
    ("azure_storage_key", r"(?i)\bAccountKey=[A-Za-z0-9+/]{40,}={0,2}"),
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
    ("generic_assignment", _ASSIGN),
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
        text, count = regex.subn(f"[REDACTED:{name}]", text)
        if count:
            found.append(name)
    return Redaction(text, tuple(sorted(set(found))))
