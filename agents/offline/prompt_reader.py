"""Reading a rendered prompt back into facts: what the offline model sees of a real prompt.

Everything here works on the text a real model would receive (headings, fences, bullets), so
whatever changes a prompt — session memory, knowledge, attempted directions — changes what the
offline model does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline.cdecl import parse_prototype
from agents.parsing import fenced_blocks
from fuzzkit.api import FunctionDecl

_HEADING = re.compile(r"^## (.+?)[ \t]*$", re.M)
_SUBHEADING = re.compile(r"^### (.+?)[ \t]*$", re.M)
_BULLET = re.compile(r"^- (?:\[(?P<tag>[^\]]*)\]\s*)?(?P<body>.*)$")


@dataclass
class PromptFacts:
    """The sections of one user turn, plus the role lines of the system prompt."""

    role: str = ""
    mode: str = ""
    sections: dict[str, str] = field(default_factory=dict)

    def text(self, name: str) -> str:
        """A section's text ('' when absent or '(none)')."""
        value = self.sections.get(name, "").strip()
        return "" if value in ("(none)", "(none yet)", "(not measured)") else value

    def code(self, name: str) -> str:
        """The first fenced block of a section."""
        blocks = fenced_blocks(self.sections.get(name, ""))
        return blocks[0][1] if blocks else ""

    def bullets(self, name: str) -> list[tuple[str, str]]:
        """``(tag, body)`` of each bullet of a section."""
        return bullets(self.text(name))

    def memory(self, subsection: str) -> list[tuple[str, str]]:
        """Bullets of one session-memory subsection (e.g. 'Known fixes')."""
        return bullets(self.memory_text(subsection))

    def memory_text(self, subsection: str) -> str:
        """The whole text of one session-memory subsection (its bullets and facts blocks)."""
        return _split(_SUBHEADING, self.sections.get("Session memory", "")).get(subsection, "")


def bullets(text: str) -> list[tuple[str, str]]:
    """``(tag, body)`` for each ``- [TAG] body`` line."""
    out = []
    for line in text.splitlines():
        match = _BULLET.match(line.strip())
        if match:
            out.append(((match.group("tag") or "").strip(), match.group("body").strip()))
    return out


def _split(pattern: re.Pattern[str], text: str) -> dict[str, str]:
    matches = list(pattern.finditer(text))
    out = {}
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        out[match.group(1)] = text[match.end():end].strip("\n")
    return out


def read_prompt(system: str, user: str) -> PromptFacts:
    """Split a prompt into its role, mode and sections."""
    role = re.search(r"^ROLE:\s*(\S+)", system, re.M)
    mode = re.search(r"^MODE:\s*(\S+)", user, re.M)
    # Headings inside code fences are code, not sections: blank the fences before splitting.
    masked = re.sub(r"```.*?(```|\Z)", lambda m: re.sub(r"[^\n]", " ", m.group(0)), user,
                    flags=re.S)
    sections = {}
    matches = list(_HEADING.finditer(masked))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(user)
        sections[match.group(1)] = user[match.end():end].strip("\n")
    return PromptFacts(role=role.group(1) if role else "", mode=mode.group(1) if mode else "",
                       sections=sections)


def identifiers(text: str) -> set[str]:
    """C identifiers mentioned in a text."""
    return set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", text))


def target_function(facts: PromptFacts) -> FunctionDecl:
    """The target's declaration, from the first line of the ``Target function`` section."""
    return parse_prototype(facts.text("Target function").splitlines()[0])
