"""Experience memory: a ReasoningBank with MaTTS and a Gatekeeper lifecycle.

Every finished target leaves distilled lessons; the Candidate / Hit / Validation lifecycle
decides which of them earn a place in a later prompt.

Before a target: ``bank.search`` (self-excluded, thresholded) → ``Gatekeeper.prepare_inject`` →
``render_experience`` into the prompt. After it: ``detect_used`` on the replies →
``Gatekeeper.evaluate`` on the measured :class:`Outcome` → extraction (``build_extraction_prompt``
→ model → ``parse_memory_items``) → ``Gatekeeper.admit`` → ``bank.apply``, audited in an
:class:`EventLog`. Importing this package loads no model and no FAISS.
"""

from long_term_memory.experience.bank import ExperienceBank
from long_term_memory.experience.config import ExperienceConfig, ExperienceConfigError
from long_term_memory.experience.embedder import HashingEmbedder, resolve_embedder
from long_term_memory.experience.events import EVENT_TYPES, EventLog, read_events
from long_term_memory.experience.extraction import (
    ExtractionLabelError,
    build_extraction_prompt,
    extraction_kind,
)
from long_term_memory.experience.gatekeeper import Gatekeeper, assess_confidence, record_kind
from long_term_memory.experience.inject import detect_used, memories_used, render_experience
from long_term_memory.experience.matches import InjectItem, Match
from long_term_memory.experience.matts import attempt_specs, best_attempt, refinement_prompt
from long_term_memory.experience.models import (
    GatekeeperDecision,
    HitRef,
    ItemStats,
    MemoryItem,
    MemoryRecord,
    Outcome,
    ValidationPlan,
)
from long_term_memory.experience.modes import mode_allows_retrieval, mode_allows_writes
from long_term_memory.experience.parsing import MemoryParseError, parse_memory_items
from long_term_memory.experience.redaction import find_secrets, redact, redact_within
from long_term_memory.experience.trajectory import (
    Trajectory,
    outcome_from_state,
    target_query,
    task_id_of,
    trajectory_from_state,
)
from long_term_memory.experience.writes import AddResult, ApplyResult, ReadOnlyBankError

__all__ = [
    "EVENT_TYPES",
    "AddResult",
    "ApplyResult",
    "EventLog",
    "ExperienceBank",
    "ExperienceConfig",
    "ExperienceConfigError",
    "ExtractionLabelError",
    "GatekeeperDecision",
    "Gatekeeper",
    "HashingEmbedder",
    "HitRef",
    "InjectItem",
    "ItemStats",
    "Match",
    "MemoryItem",
    "MemoryParseError",
    "MemoryRecord",
    "Outcome",
    "ReadOnlyBankError",
    "Trajectory",
    "ValidationPlan",
    "assess_confidence",
    "attempt_specs",
    "best_attempt",
    "build_extraction_prompt",
    "detect_used",
    "extraction_kind",
    "find_secrets",
    "memories_used",
    "mode_allows_retrieval",
    "mode_allows_writes",
    "outcome_from_state",
    "parse_memory_items",
    "read_events",
    "record_kind",
    "redact",
    "redact_within",
    "refinement_prompt",
    "render_experience",
    "resolve_embedder",
    "target_query",
    "task_id_of",
    "trajectory_from_state",
]
