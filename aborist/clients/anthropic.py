"""The Anthropic Messages API client (``--model anthropic``).

``POST {base_url}/messages`` with ``x-api-key`` and ``anthropic-version`` headers. The Messages
API takes the system prompt as a top-level ``system`` field rather than a message, requires
``max_tokens``, and answers with a list of content blocks; this module maps our chat messages
onto that shape and joins the answer's text blocks. Timeouts, retries (429, 5xx including
Anthropic's 529 "overloaded") and error messages are
:class:`aborist.clients.http.HTTPChatClient`'s.
"""

from __future__ import annotations

import os
from typing import Any

from aborist.clients.base import Messages
from aborist.clients.http import HTTPChatClient, Reply
from aborist.errors import InputError, ModelError
from aborist.settings import Settings, load_settings

__all__ = [
    "ANTHROPIC_VERSION",
    "DEFAULT_ANTHROPIC_BASE_URL",
    "DEFAULT_ANTHROPIC_MAX_TOKENS",
    "ENV_ANTHROPIC_API_KEY",
    "AnthropicClient",
]

DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com/v1"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_ANTHROPIC_MAX_TOKENS = 1024
ENV_ANTHROPIC_API_KEY = "ANTHROPIC_API_KEY"


class AnthropicClient(HTTPChatClient):
    """A Messages API client. ``max_tokens`` defaults to :data:`DEFAULT_ANTHROPIC_MAX_TOKENS`
    because the API requires it (and so the profile records it)."""

    kind = "anthropic"
    endpoint_path = "/messages"
    env_base_url = "the Anthropic base URL"
    env_model = "ABORIST_LLM_MODEL"
    env_api_key = f"ABORIST_LLM_API_KEY (or {ENV_ANTHROPIC_API_KEY})"
    missing_reply = "response had no text content block"

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        *,
        base_url: str = DEFAULT_ANTHROPIC_BASE_URL,
        max_tokens: int | None = DEFAULT_ANTHROPIC_MAX_TOKENS,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            base_url,
            model,
            api_key,
            max_tokens=DEFAULT_ANTHROPIC_MAX_TOKENS if max_tokens is None else max_tokens,
            **kwargs,
        )

    @classmethod
    def from_settings(cls, settings: Settings | None = None, **overrides: Any) -> AnthropicClient:
        """A client from ``ABORIST_LLM_MODEL`` and ``ABORIST_LLM_API_KEY`` (else
        ``ANTHROPIC_API_KEY``), with non-``None`` ``overrides`` on top. The base URL is
        Anthropic's unless overridden: ``ABORIST_LLM_BASE_URL`` names the OpenAI-shape server.
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        s = settings if settings is not None else load_settings()
        model = given.pop("model", None) or s.llm_model
        api_key = (
            given.pop("api_key", None) or s.llm_api_key or os.environ.get(ENV_ANTHROPIC_API_KEY)
        )
        if not model:
            raise ModelError("no model name configured: set ABORIST_LLM_MODEL (a Claude model)")
        if not api_key:
            raise ModelError(f"no API key configured: set {ENV_ANTHROPIC_API_KEY}")
        if given.get("base_url"):
            given.setdefault("base_url_source", "--base-url")
        return cls(model, api_key, **given)

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION}

    def _request_body(
        self, messages: Messages, *, temperature: float, max_tokens: int | None
    ) -> dict[str, Any]:
        system = [m["content"] for m in messages if m["role"] == "system"]
        turns = [m for m in messages if m["role"] != "system"]
        if not turns:
            raise InputError("the Messages API needs at least one user message")
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens if max_tokens is not None else DEFAULT_ANTHROPIC_MAX_TOKENS,
            "messages": turns,
            "temperature": temperature,
        }
        if system:
            body["system"] = "\n\n".join(system)
        return body

    def _parse_reply(self, data: Any) -> Reply | None:
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            return None
        texts = [
            b["text"]
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if not texts:
            return None
        model, stop, usage = data.get("model"), data.get("stop_reason"), data.get("usage")
        return (
            "".join(texts),
            model if isinstance(model, str) and model else None,
            stop if isinstance(stop, str) else None,
            usage if isinstance(usage, dict) else None,
        )
