"""The model seam: ``provider:model`` strings to LangChain chat models.

``offline`` is the embedded deterministic model; ``openai:<name>`` is any OpenAI-compatible
endpoint through langchain-openai. Clients are built on first use, never at import time, so a
missing key is reported when a run needs the model and never stops ``langgraph dev``.

A provider also declares which native features its models may have: ``tools`` (tool calls) and
``structured`` (``response_format`` with a JSON schema). Servers differ, so support is assumed
until an endpoint rejects a feature; :class:`ModelFeatures` then remembers, for that endpoint
and model, to send plain prompts and read JSON from the text (see :mod:`agents.base`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel

from agent_graph.context import Context
from agents.offline.model import OfflineChatModel


class ModelConfigError(RuntimeError):
    """The model cannot be used as configured; the message says what to set."""


_CACHE: dict[tuple[Any, ...], BaseChatModel] = {}
_LOCK = threading.Lock()
Factory = Callable[[Context, float], BaseChatModel]
_PROVIDERS: dict[str, Factory] = {}
_NATIVE: dict[str, frozenset[str]] = {}
FEATURES = ("tools", "structured", "json_object")
# (model spec, base URL) -> features the endpoint rejected, for the life of the process.
_REJECTED: dict[tuple[str, str], dict[str, str]] = {}


def register_provider(name: str, factory: Factory, native: tuple[str, ...] = ()) -> None:
    """Make ``name:<model>`` specs resolve through ``factory`` (tests register scripted models).

    ``native`` names the features of :data:`FEATURES` its models may support natively.
    """
    unknown = set(native) - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown native features {sorted(unknown)}; known: {', '.join(FEATURES)}")
    with _LOCK:
        _PROVIDERS[name] = factory
        _NATIVE[name] = frozenset(native)
        for key in [k for k in _CACHE if str(k[0]).split(":", 1)[0] == name]:
            del _CACHE[key]


class ModelFeatures:
    """Which native features to use with one model at one endpoint, and what was rejected.

    ``rejected`` is shared by every :class:`ModelFeatures` of the same (spec, base URL) in the
    process, so one rejection is paid once, not once per agent call.
    """

    def __init__(self, spec: str, base_url: str = "", wanted: tuple[str, ...] = FEATURES) -> None:
        self.spec = spec
        self.key = (spec, base_url)
        native = _NATIVE.get(spec.split(":", 1)[0], frozenset())
        self._wanted = frozenset(wanted) & native

    @property
    def rejected(self) -> dict[str, str]:
        """Feature -> the endpoint's words when it refused it."""
        with _LOCK:
            return dict(_REJECTED.get(self.key, {}))

    def use(self, feature: str) -> bool:
        """Send ``feature`` natively (wanted, offered by the provider, never rejected here)."""
        return feature in self._wanted and feature not in self.rejected

    def reject(self, feature: str, reason: str) -> None:
        """Remember that this endpoint refused ``feature``; later calls go without it."""
        with _LOCK:
            _REJECTED.setdefault(self.key, {})[feature] = reason[:300]


def features_for(ctx: Context) -> ModelFeatures:
    """The native features a run's context allows for its model."""
    wanted = tuple(f for f, on in (("tools", ctx.native_tools), ("structured", ctx.structured_output),
                                   ("json_object", ctx.structured_output)) if on)
    base_url = ctx.base_url or os.environ.get("OPENAI_BASE_URL", "")
    return ModelFeatures(ctx.model, base_url, wanted)


def forget_rejections() -> None:
    """Forget every endpoint's rejected features (tests; a server that was upgraded)."""
    with _LOCK:
        _REJECTED.clear()


def model_name(spec: str) -> str:
    """The model part of a spec (``openai:gpt-4o`` → ``gpt-4o``; ``offline`` → ``offline``)."""
    return spec.split(":", 1)[1] if ":" in spec else spec


def get_chat_model(ctx: Context, temperature: float | None = None) -> BaseChatModel:
    """The chat model for a context, cached per configuration."""
    temp = ctx.temperature if temperature is None else temperature
    # A hash of the key's value (never the key) so a changed key gets a new client.
    secret = hashlib.sha256(os.environ.get(ctx.api_key_env, "").encode()).hexdigest()[:12]
    key = (ctx.model, ctx.base_url, ctx.api_key_env, secret, temp, ctx.max_output_tokens,
           ctx.request_timeout, ctx.max_retries)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _build(ctx, temp)
        return _CACHE[key]


def _build(ctx: Context, temperature: float) -> BaseChatModel:
    provider = ctx.model.split(":", 1)[0]
    if provider in _PROVIDERS:
        return _PROVIDERS[provider](ctx, temperature)
    raise ModelConfigError(
        f"unknown model {ctx.model!r}: use 'offline' or 'openai:<model-name>'"
        + (f" (registered providers: {', '.join(sorted(_PROVIDERS))})" if _PROVIDERS else "")
    )


def _offline(ctx: Context, temperature: float) -> BaseChatModel:
    return OfflineChatModel()


def _openai(ctx: Context, temperature: float) -> BaseChatModel:
    if not model_name(ctx.model) or ctx.model == "openai":
        raise ModelConfigError("model 'openai:' needs a model name, e.g. openai:gpt-4o-mini")
    key = os.environ.get(ctx.api_key_env, "")
    base_url = ctx.base_url or os.environ.get("OPENAI_BASE_URL", "")
    if not key:
        raise ModelConfigError(
            f"model {ctx.model} needs an API key: set the environment variable "
            f"{ctx.api_key_env} (any non-empty value for a local server that ignores keys), "
            "or run with --model offline"
        )
    from langchain_openai import ChatOpenAI

    kwargs: dict[str, Any] = {
        "model": model_name(ctx.model),
        "api_key": key,
        "temperature": temperature,
        "max_tokens": ctx.max_output_tokens,
        "timeout": ctx.request_timeout,
        "max_retries": ctx.max_retries,
    }
    if base_url:
        kwargs["base_url"] = base_url
    return ChatOpenAI(**kwargs)


register_provider("offline", _offline)
register_provider("openai", _openai, native=("tools", "structured", "json_object"))
