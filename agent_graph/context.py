"""Runtime configuration of one graph run: model, budgets, memory mode, paths.

Passed as LangGraph's runtime context (``graph.invoke(state, context=Context(...))``), so Studio
shows it as the assistant's configuration. Environment variables ``LOGICFUZZ_<FIELD>`` fill in
defaults only: a value a caller passes explicitly is never overridden by the environment.
"""

from __future__ import annotations

import os
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from long_term_memory.memory_modes import MODES as MEMORY_MODES


@dataclass(kw_only=True)
class Context:
    """Everything a run is configured with; every field has a safe default."""

    model: str = field(
        default="offline",
        metadata={"description": "Model spec: 'offline' or 'openai:<model>' (any OpenAI-compatible API)."},
    )
    base_url: str = field(
        default="",
        metadata={"description": "Base URL of the OpenAI-compatible endpoint (default: OPENAI_BASE_URL)."},
    )
    api_key_env: str = field(
        default="OPENAI_API_KEY",
        metadata={"description": "Name of the environment variable holding the API key (never the key)."},
    )
    temperature: float = field(default=0.2, metadata={"description": "Sampling temperature."})
    max_output_tokens: int = field(default=4096, metadata={"description": "Max tokens per reply."})
    request_timeout: float = field(default=120.0, metadata={"description": "Seconds per model call."})
    max_retries: int = field(default=2, metadata={"description": "Retries on 429/5xx/timeouts."})
    fuzz_seconds: int = field(default=60, metadata={"description": "libFuzzer budget per run."})
    fuzz_seed: int = field(default=0, metadata={
        "description": "libFuzzer -seed of every run (0: a random one); a fixed seed makes runs comparable."})
    fuzz_runs: int = field(default=0, metadata={
        "description": "libFuzzer -runs of every run (0: none; fuzz_seconds ends it)."})
    rss_limit_mb: int = field(default=2048, metadata={"description": "libFuzzer -rss_limit_mb."})
    max_fix_rounds: int = field(
        default=5, metadata={"description": "Build/run fix rounds before giving up on a target."}
    )
    max_iterations: int = field(
        default=5, metadata={"description": "Coverage-optimization iterations (phase 2)."}
    )
    plateau_iterations: int = field(
        default=2, metadata={"description": "Stop after this many iterations without coverage gain."}
    )
    min_gain_percent: float = field(
        default=1.0,
        metadata={"description": "Line-coverage gain (points) that counts as real, not fuzzing noise."},
    )
    min_gain_share: float = field(
        default=0.08,
        metadata={"description": "Or this share of the best harness's line coverage, when smaller "
                                 "(at least a tenth of min_gain_percent): on a large library a harness "
                                 "covering a few percent gains hundreds of real lines below one point."},
    )
    max_node_visits: int = field(
        default=80, metadata={"description": "Hard guard on total node visits per target."}
    )
    consolidate_every: int = field(
        default=3, metadata={"description": "Consolidate session memory every N iterations."}
    )
    message_token_budget: int = field(
        default=100_000, metadata={"description": "Token budget of each agent's message history."}
    )
    seeds: bool = field(
        default=True,
        metadata={"description": "Run the sample files the library's sources ship (test and "
                                 "example data) once through each harness built: the sanitizers "
                                 "check it on valid input, and a target they reach counts as "
                                 "reached. Coverage figures stay the fuzzer's own."},
    )
    dictionary: bool = field(
        default=True,
        metadata={"description": "Fuzz with a dictionary of the string literals of the library's "
                                 "own sources (its keywords, tags and magic numbers)."},
    )
    usage: bool = field(
        default=True,
        metadata={"description": "Read how the library's own tests, examples, tools and "
                                 "documentation use its API (never its fuzz harnesses) and put "
                                 "it in the prompts as snippets and protocols."},
    )
    memory_mode: str = field(
        default="",
        metadata={"description": "Experience memory: baseline | retrieve-extract | retrieve-only "
                                 "(empty: the memory config file's mode)."},
    )
    local_memory_tokens: int = field(
        default=1500, metadata={"description": "Compress the local memory past this many tokens."}
    )
    history_compress_tokens: int = field(
        default=4000,
        metadata={"description": "Replace an agent's old turns by the code memory past this size."},
    )
    history_keep_last: int = field(
        default=4,
        metadata={"description": "Newest messages kept verbatim when a history is compressed "
                                 "(seed 004: the last 4)."},
    )
    history_summary: bool = field(
        default=True,
        metadata={"description": "Compressed histories get the code-memory summary in place of "
                                 "the old turns (false: the old turns are only dropped)."},
    )
    code_memory: bool = field(
        default=True, metadata={"description": "CodeMem summaries and history compression on/off."}
    )
    memory_config: str = field(
        default="", metadata={"description": "Experience-memory config file (default: the shipped one)."}
    )
    store: str = field(
        default="",
        metadata={"description": "postgresql://... : checkpoints, experience bank and model rate "
                                 "limit shared by every worker (empty: local files)."},
    )
    rate_limit_rpm: int = field(
        default=0, metadata={"description": "Model requests per minute per endpoint, all workers (0: none)."}
    )
    rate_limit_tpm: int = field(
        default=0, metadata={"description": "Model tokens per minute per endpoint, all workers (0: none)."}
    )
    defer_experience: bool = field(
        default=False,
        metadata={"description": "Leave the experience lifecycle to the caller (MaTTS attempts)."},
    )
    embedding_model: str = field(
        default="",
        metadata={"description": "sentence-transformers model (empty: the memory config file's)."},
    )
    native_tools: bool = field(
        default=True,
        metadata={"description": "Offer tools (knowledge search, read_code_mem) to models that call tools."},
    )
    structured_output: bool = field(
        default=True,
        metadata={"description": "Ask models that support it for schema-constrained JSON replies."},
    )
    max_tool_rounds: int = field(
        default=4, metadata={"description": "Tool-call rounds per agent reply before it must answer."}
    )
    fallback: str = field(
        default="offline",
        metadata={"description": "Model that does a step the run's model failed ('' for none): "
                                 "an unusable reply after retries, or no building harness after "
                                 "fallback_after_fix_rounds fix rounds."},
    )
    fallback_after_fix_rounds: int = field(
        default=2, metadata={"description": "Fix rounds without a building harness before the "
                                            "fallback model repairs it."}
    )
    toolchain: str = field(
        default="",
        metadata={"description": "Registered toolchain the nodes build, fuzz and measure with "
                                 "(empty: fuzzkit, the real clang/libFuzzer/llvm-cov)."},
    )
    debug: bool = field(default=False, metadata={"description": "Log full prompts and replies."})

    def __post_init__(self) -> None:
        sent = self.__dict__.pop("_sent", None)
        for f in fields(self):
            # Only what the caller did not send: Context(fuzz_seconds=60) stays 60 even when it
            # equals the default and LOGICFUZZ_FUZZ_SECONDS says otherwise.
            if f.default is MISSING or (f.name in sent if sent is not None
                                        else getattr(self, f.name) != f.default):
                continue
            raw = os.environ.get(f"LOGICFUZZ_{f.name.upper()}")
            if raw is not None:
                setattr(self, f.name, _coerce(raw, f.default, f.name))
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the bad field and the accepted values."""
        if self.memory_mode and self.memory_mode not in MEMORY_MODES:
            raise ValueError(
                f"memory_mode {self.memory_mode!r} is not one of {', '.join(MEMORY_MODES)}"
            )
        provider, _, name = self.model.partition(":")
        if not provider or (self.model != "offline" and not name):
            raise ValueError(
                f"model {self.model!r} is not a model spec: use 'offline' or 'openai:<model-name>'"
            )
        for name in ("fuzz_seconds", "fuzz_seed", "fuzz_runs", "max_fix_rounds", "max_iterations",
                     "plateau_iterations", "max_node_visits", "consolidate_every", "message_token_budget",
                     "max_tool_rounds", "rate_limit_rpm", "rate_limit_tpm"):
            least = 0 if name in ("fuzz_seed", "fuzz_runs", "max_iterations", "max_tool_rounds",
                                  "rate_limit_rpm", "rate_limit_tpm") else 1
            if getattr(self, name) < least:
                raise ValueError(f"{name} must be at least {least}, got {getattr(self, name)}")

    @classmethod
    def from_mapping(cls, data: dict[str, Any] | None) -> Context:
        """Build from a plain dict (Studio sends one), ignoring unknown keys."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (data or {}).items() if k in names})


def _coerce(raw: str, default: Any, name: str) -> Any:
    try:
        if isinstance(default, bool):
            return raw.strip().lower() in ("1", "true", "yes", "on")
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError as exc:
        raise ValueError(f"environment variable LOGICFUZZ_{name.upper()}={raw!r}: {exc}") from exc
    return raw


_dataclass_init = Context.__init__


def _init(self: Context, **sent: Any) -> None:
    """The dataclass ``__init__``, remembering which fields the caller sent (for the env rule)."""
    self.__dict__["_sent"] = frozenset(sent)
    _dataclass_init(self, **sent)


Context.__init__ = _init  # type: ignore[method-assign]
