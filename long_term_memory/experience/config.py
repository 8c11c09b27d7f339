"""The experience memory's one configuration file, validated with errors that name the key.

Defaults live in ``long_term_memory/experience.default.yaml``; a user file (YAML or TOML) needs
only the keys it changes. Unknown keys and out-of-range values are errors naming the key, the
value and the allowed range.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fuzzkit.paths import cache_dir
from fuzzkit.safe_yaml import MAX_BYTES, YamlLimitError, load_yaml_text

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "experience.default.yaml"
CONFIG_ENV = "LOGICFUZZ_EXPERIENCE_CONFIG"


class ExperienceConfigError(ValueError):
    """The experience configuration is unreadable or invalid; the message says what to change."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BankConfig(_Section):
    """Where the bank lives."""

    task: str = Field(default="fuzz-c", min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    directory: str = ""
    # postgresql://USER@HOST:PORT/DB puts the bank in that database (shared by many workers).
    store: str = ""


class EmbeddingConfig(_Section):
    """The embedding model."""

    model: str = Field(default="all-MiniLM-L6-v2", min_length=1)


class RetrievalConfig(_Section):
    """Top-k, similarity threshold and the Gatekeeper's candidate pool."""

    top_k: int = Field(default=1, ge=1, le=20)
    threshold: float = Field(default=0.5, ge=-1.0, le=1.0)
    candidates: int = Field(default=10, ge=1, le=200)
    # Actionable lessons whose scope fits the target are shown first and beyond top_k, this many more.
    scoped_extra: int = Field(default=2, ge=0, le=20)
    # Calls to leave out (avoid_call lessons) that fit the target have their own budget: each is one
    # line the next attempt applies by not adding a call, and one library teaches several.
    avoid_extra: int = Field(default=12, ge=0, le=40)


class IndexConfig(_Section):
    """When search switches from exact FAISS to a binary prefilter with exact rerank."""

    exact_max_items: int = Field(default=20000, ge=0)
    rerank: int = Field(default=128, ge=16, le=100000)
    # A PostgreSQL bank is ranked by the server when it has the pgvector extension: an exact
    # scan up to pgvector_exact_max_items items (about 2 us a row), then an HNSW index.
    pgvector: bool = True
    pgvector_exact_max_items: int = Field(default=2000, ge=0)


class DedupeConfig(_Section):
    """Near-duplicate merging."""

    threshold: float = Field(default=0.95, gt=0.0, le=1.0)


class ExtractionConfig(_Section):
    """Sampling of the extraction calls."""

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=1024, ge=64, le=32768)
    max_trajectory_chars: int = Field(default=6000, ge=500, le=200000)


class MattsConfig(_Section):
    """Memory-aware test-time scaling."""

    enabled: bool = False
    mode: Literal["parallel", "sequential"] = "parallel"
    n: int = Field(default=3, ge=1, le=16)
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    max_tokens: int = Field(default=4096, ge=64, le=65536)
    refine_rounds: int = Field(default=2, ge=1, le=10)


class GatekeeperConfig(_Section):
    """Every lifecycle threshold of the Candidate / Hit / Validation seed."""

    active_statuses: tuple[str, ...] = ("active",)
    min_freshness: float = Field(default=0.001, ge=0.0, le=1.0)
    freshness_half_life_days: float = Field(default=30.0, gt=0.0, le=36500.0)
    block_threshold: float = Field(default=3.0, gt=0.0, le=100.0)
    initial_trust: float = Field(default=0.5, ge=0.0, le=1.0)
    trust_pass: float = Field(default=0.05, ge=0.0, le=1.0)
    trust_partial: float = Field(default=0.02, ge=0.0, le=1.0)
    trust_fail: float = Field(default=0.10, ge=0.0, le=1.0)
    fail_step_partial: float = Field(default=0.5, ge=0.0, le=10.0)
    fail_step_fail: float = Field(default=1.0, gt=0.0, le=10.0)
    level2_passes: int = Field(default=3, ge=1, le=1000)
    level3_uses: int = Field(default=10, ge=1, le=100000)
    strong_level: int = Field(default=2, ge=1, le=3)
    skip_if_top1_score_ge: float = Field(default=0.90, ge=-1.0, le=1.0)
    # A blocked item is never shown, so never validated: after this many runs in its scope
    # (searches that matched it while it was blocked) it is shown once more on probation.
    probation_runs: int = Field(default=5, ge=1, le=100000)


class CandidateConfig(_Section):
    """When a run's lessons become a new record."""

    min_confidence: float = Field(default=0.45, ge=0.0, le=1.0)
    min_content_chars: int = Field(default=40, ge=0, le=2000)
    redact: bool = True
    strict_secret_block: bool = False


class OutcomeConfig(_Section):
    """What counts as a successful target."""

    success_min_lines_percent: float = Field(default=0.0, ge=0.0, le=100.0)


class ExperienceConfig(_Section):
    """The whole experience-memory configuration."""

    mode: Literal["baseline", "retrieve-extract", "retrieve-only"] = "retrieve-extract"
    bank: BankConfig = BankConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    index: IndexConfig = IndexConfig()
    dedupe: DedupeConfig = DedupeConfig()
    extraction: ExtractionConfig = ExtractionConfig()
    matts: MattsConfig = MattsConfig()
    gatekeeper: GatekeeperConfig = GatekeeperConfig()
    candidate: CandidateConfig = CandidateConfig()
    outcome: OutcomeConfig = OutcomeConfig()

    @model_validator(mode="after")
    def _consistent(self) -> ExperienceConfig:
        if self.retrieval.candidates < self.retrieval.top_k:
            raise ValueError(
                f"retrieval.candidates ({self.retrieval.candidates}) must be >= retrieval.top_k "
                f"({self.retrieval.top_k}): the Gatekeeper picks top_k out of the candidates"
            )
        if not self.gatekeeper.active_statuses:
            raise ValueError("gatekeeper.active_statuses must name at least one status ('active')")
        return self

    @classmethod
    def load(cls, path: Path | None = None) -> ExperienceConfig:
        """Defaults overlaid with ``path`` (or ``$LOGICFUZZ_EXPERIENCE_CONFIG``), validated.

        Raises:
            ExperienceConfigError: the file is missing, unparsable, or has a bad key or value.
        """
        data = _read(DEFAULT_CONFIG)
        chosen = (
            path
            if path is not None
            else (Path(os.environ[CONFIG_ENV]) if os.environ.get(CONFIG_ENV) else None)
        )
        if chosen is not None:
            data = _overlay(data, _read(chosen), "")
        return cls.from_mapping(data, str(chosen or DEFAULT_CONFIG))

    @classmethod
    def from_mapping(cls, data: dict[str, Any], source: str = "<mapping>") -> ExperienceConfig:
        """Validate a plain mapping (defaults fill missing keys).

        Raises:
            ExperienceConfigError: a key is unknown or a value is out of range.
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ExperienceConfigError(_explain(exc, source)) from None

    def with_overrides(self, **dotted: Any) -> ExperienceConfig:
        """A copy with ``section__key=value`` overrides, validated (``mode`` for the mode)."""
        data = self.model_dump()
        for key, value in dotted.items():
            *sections, last = key.split("__")
            node = data
            for section in sections:
                node = node.setdefault(section, {})
            node[last] = value
        return type(self).from_mapping(data, "overrides")

    def bank_directory(self) -> Path:
        """The configured bank directory, or ``<cache dir>/experience/<task>``."""
        if self.bank.directory:
            return Path(self.bank.directory).expanduser()
        return cache_dir() / "experience" / self.bank.task


def _read(path: Path) -> dict[str, Any]:
    what = f"experience config {path}"
    try:
        if Path(path).stat().st_size > MAX_BYTES:  # checked before reading: a 60 MB file took minutes
            raise ExperienceConfigError(f"{what} is over the {MAX_BYTES:,}-byte limit; keep only your keys")
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ExperienceConfigError(
            f"cannot read experience config {path}: {exc.strerror or exc}; pass an existing "
            f"YAML or TOML file (see {DEFAULT_CONFIG.name} for every key)"
        ) from None
    try:
        data = tomllib.loads(text) if str(path).endswith(".toml") else load_yaml_text(text, what)
    except tomllib.TOMLDecodeError as exc:
        raise ExperienceConfigError(f"experience config {path} is not valid: {exc}") from None
    except YamlLimitError as exc:  # invalid, or an alias bomb: refused before it is expanded
        raise ExperienceConfigError(str(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ExperienceConfigError(
            f"experience config {path} must be a mapping of sections, got {type(data).__name__}"
        )
    return data


def _overlay(base: dict[str, Any], top: dict[str, Any], prefix: str) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = _overlay(base[key], value, f"{prefix}{key}.")
        else:
            out[key] = value
    return out


def _range_of(loc: tuple[Any, ...]) -> str:
    model: Any = ExperienceConfig
    info = None
    for part in loc:
        fields = getattr(model, "model_fields", {})
        if part not in fields:
            return ""
        info = fields[part]
        model = info.annotation
    if info is None:
        return ""
    low = high = ""
    for bound in info.metadata:
        if isinstance(bound, Ge):
            low = f"{bound.ge} <= "
        elif isinstance(bound, Gt):
            low = f"{bound.gt} < "
        elif isinstance(bound, Le):
            high = f" <= {bound.le}"
        elif isinstance(bound, Lt):
            high = f" < {bound.lt}"
    return f"allowed: {low}value{high}" if low or high else ""


def _explain(exc: ValidationError, source: str) -> str:
    lines = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        key = ".".join(str(p) for p in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            lines.append(f"{key}: unknown key (check the spelling against {DEFAULT_CONFIG.name})")
            continue
        allowed = _range_of(loc)
        got = f" = {err['input']!r}" if "input" in err and not isinstance(err["input"], dict) else ""
        msg = err["msg"].removeprefix("Value error, ")
        lines.append(f"{key}{got}: {msg}" + (f" ({allowed})" if allowed else ""))
    return f"invalid experience config {source}:\n  " + "\n  ".join(lines)
