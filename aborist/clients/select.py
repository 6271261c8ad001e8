"""Choosing the answerer: the offline extractive default, an OpenAI-compatible server, or
Anthropic's Messages API.

``--model extractive`` (the default when ``ABORIST_LLM_BASE_URL`` is unset) needs nothing
else; ``--model openai`` reads the endpoint, model and key from flags or the environment
(see :class:`aborist.clients.openai.OpenAICompatibleClient`); ``--model anthropic`` reads
the model and key (``ANTHROPIC_API_KEY`` as a fallback) and talks to Anthropic's base URL
unless ``--base-url`` names another (:class:`aborist.clients.anthropic.AnthropicClient`).
"""

from __future__ import annotations

import math

from aborist.clients.base import ChatClient
from aborist.clients.extractive import ExtractiveClient
from aborist.errors import InputError
from aborist.settings import Settings, source_name

__all__ = ["MODEL_KINDS", "llm_timeout", "select_client", "settings_timeout"]

MODEL_KINDS = ("extractive", "openai", "anthropic")


def llm_timeout(value: str | None, source: str = "ABORIST_LLM_TIMEOUT") -> float | None:
    """``ABORIST_LLM_TIMEOUT`` as seconds to wait for each model answer (None: unset);
    ``source`` names where the value came from (:func:`aborist.settings.source_name`)."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise InputError(f"{source} must be a positive number of seconds, not {value!r}")
    return seconds


def settings_timeout(settings: Settings) -> float | None:
    """:func:`llm_timeout` of ``settings.llm_timeout``, a bad value named by its source."""
    return llm_timeout(settings.llm_timeout, source_name(settings, "llm_timeout"))


def select_client(
    kind: str | None,
    settings: Settings,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
) -> ChatClient:
    """``kind`` None means: openai when an endpoint is configured, else extractive.
    ``timeout`` (seconds; else ``ABORIST_LLM_TIMEOUT``; else the client's default) bounds
    the wait for each answer."""
    if kind is None:
        kind = "openai" if (base_url or settings.llm_base_url) else "extractive"
    if kind == "extractive":
        return ExtractiveClient()
    if kind == "openai":
        from aborist.clients.openai import OpenAICompatibleClient

        return OpenAICompatibleClient.from_settings(
            settings, base_url=base_url, model=model, api_key=api_key,
            timeout=timeout if timeout is not None else settings_timeout(settings),
        )  # fmt: skip
    if kind == "anthropic":
        from aborist.clients.anthropic import AnthropicClient

        return AnthropicClient.from_settings(
            settings, base_url=base_url, model=model, api_key=api_key,
            timeout=timeout if timeout is not None else settings_timeout(settings),
        )  # fmt: skip
    raise InputError(f"model must be one of {', '.join(MODEL_KINDS)}, not {kind!r}")
