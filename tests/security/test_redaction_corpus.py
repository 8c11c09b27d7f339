"""Redaction recall and precision on the secrets corpus; redaction never breaks a field limit."""

from __future__ import annotations

import pytest

from benchkit.security.secrets_corpus import ORDINARY, SECRETS, measure, r, secret_lines
from long_term_memory.experience import Gatekeeper, MemoryItem
from long_term_memory.experience.models import MAX_CONTENT, MAX_DESCRIPTION, MAX_TITLE
from long_term_memory.experience.redaction import redact, redact_within
from tests.unit.test_experience_support import config, outcome

ISSUE_MISSES = (
    "aws SecretAccessKey in JSON",
    "redis URL, password only",
    "Authorization Bearer as a dict",
    "Azure Service Bus SharedAccessKey",
    "Set-Cookie session id",
    "password without digits",
)


def test_the_corpus_is_as_large_as_promised() -> None:
    labels = [label for label, _, _ in SECRETS]
    assert len(SECRETS) >= 60 and len(set(labels)) == len(labels)
    assert set(ISSUE_MISSES) <= set(labels)
    assert len(ORDINARY) >= 20
    assert any("crash-" in line for line in ORDINARY)


def test_recall_is_at_least_95_percent() -> None:
    result = measure()
    assert result["caught"] / result["secrets"] >= 0.95, result["missed"]


@pytest.mark.parametrize("label", ISSUE_MISSES)
def test_the_six_secrets_the_issue_found_missed_are_caught(label: str) -> None:
    secret, line = next((s, line) for name, s, line in secret_lines() if name == label)
    text = redact(line).text
    assert secret not in text and secret[:8] not in text and "[REDACTED:" in text


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_lines_are_left_alone(line: str) -> None:
    assert redact(line).text == line
    assert redact(line).found == ()


def test_redacting_twice_changes_nothing() -> None:
    for _, _, line in secret_lines():
        once = redact(line).text
        assert redact(once).text == once


@pytest.mark.parametrize("limit", [12, 20, 40, MAX_TITLE, MAX_DESCRIPTION])
def test_redact_within_never_grows_past_the_limit_or_leaves_half_a_marker(limit: int) -> None:
    for _, secret, line in secret_lines():
        text = redact_within("\n".join([line] * 3), limit).text
        assert len(text) <= limit
        tail = text[text.rfind("[REDACTED:"):] if "[REDACTED:" in text else ""
        assert not tail or "]" in tail
        assert secret[:8] not in text


def test_admit_never_fails_when_markers_are_longer_than_the_secrets() -> None:
    """Short keys at the field limits: each marker is longer than the key it hides."""
    key = "AKIA" + r("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 16, 3)  # 20 characters, marker 28
    title = (key + " ") * (MAX_TITLE // 21)
    description = (key + " ") * (MAX_DESCRIPTION // 21)
    content = "Call acme_parse(buf, len) then acme_free(doc); " + (key + " ") * ((MAX_CONTENT - 60) // 21)
    leaky = MemoryItem(title=title.strip(), description=description.strip(), content=content.strip())
    assert len(redact(leaky.content).text) > MAX_CONTENT  # the case that used to raise
    gk = Gatekeeper(config())
    decision = gk.evaluate([], [], outcome())
    admitted = gk.admit(decision, outcome(), [leaky], query="q", trajectory="t", task_type="fuzz-c")
    assert admitted.candidate is not None, admitted.skip_reasons
    stored = admitted.candidate.memory_items[0]
    assert len(stored.title) <= MAX_TITLE and len(stored.description) <= MAX_DESCRIPTION
    assert len(stored.content) <= MAX_CONTENT
    assert key not in admitted.candidate.model_dump_json()
    assert admitted.redactions == ["aws_access_key_id"]
