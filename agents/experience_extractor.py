"""Experience extractor: distils 1-3 reusable lessons from a finished target's trajectory."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agents.base import Agent


class ExtractedItems(BaseModel):
    """The raw items; ``long_term_memory.experience.parse_memory_items`` validates them."""

    memory_items: list[Any] = Field(default_factory=list)


class ExperienceExtractor(Agent[ExtractedItems]):
    """One role, three templates: ``experience_success|failure|contrastive``."""

    name = "experience_extractor"
    template = "experience_success"
    output_model = ExtractedItems
