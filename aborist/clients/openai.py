"""The OpenAI-shape chat client.

Talks to any ``POST {base_url}/chat/completions`` endpoint: vLLM, Ollama, the llama.cpp
server, OpenAI. Configuration comes from ``ABORIST_LLM_BASE_URL`` (e.g.
``http://127.0.0.1:8000/v1``), ``ABORIST_LLM_MODEL`` and ``ABORIST_LLM_API_KEY`` (else
``OPENAI_API_KEY``) through :meth:`OpenAICompatibleClient.from_settings`. Timeouts, retries
and error messages are :class:`aborist.clients.http.HTTPChatClient`'s.
"""

from __future__ import annotations

import os
from typing import Any

from aborist.clients.base import Messages
from aborist.clients.http import (
    DEFAULT_BACKOFF_BASE,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_TIMEOUT,
    MAX_RETRY_AFTER,
    HTTPChatClient,
    Reply,
    redact_urls,
)
from aborist.errors import ModelError
from aborist.settings import Settings, load_settings, source_name

__all__ = [
    "DEFAULT_BACKOFF_BASE",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_TIMEOUT",
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_MODEL",
    "ENV_OPENAI_API_KEY",
    "MAX_RETRY_AFTER",
    "OpenAICompatibleClient",
]

ENV_BASE_URL = "ABORIST_LLM_BASE_URL"
ENV_MODEL = "ABORIST_LLM_MODEL"
ENV_API_KEY = "ABORIST_LLM_API_KEY"
ENV_OPENAI_API_KEY = "OPENAI_API_KEY"


class OpenAICompatibleClient(HTTPChatClient):
    """A ``/v1/chat/completions`` client with explicit timeouts and a retry layer.

    ``OpenAICompatibleClient(base_url, model, api_key=None, *, timeout=DEFAULT_TIMEOUT,
    max_attempts=3, backoff_base=0.5, transport=None, sleep=time.sleep, temperature=0.0,
    max_tokens=None)``; ``base_url`` is the part before ``/chat/completions``.
    """

    kind = "openai-compatible"
    endpoint_path = "/chat/completions"
    env_base_url = ENV_BASE_URL
    env_model = ENV_MODEL
    env_api_key = f"{ENV_API_KEY} (or {ENV_OPENAI_API_KEY})"
    missing_reply = "response had no choices[0].message.content"

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, **overrides: Any
    ) -> OpenAICompatibleClient:
        """A client configured from settings, with non-``None`` ``overrides`` (flags) on top.

        ``base_url``, ``model`` and ``api_key`` override ``ABORIST_LLM_BASE_URL``,
        ``ABORIST_LLM_MODEL`` and ``ABORIST_LLM_API_KEY``; the key falls back to
        ``OPENAI_API_KEY``. Every other override is passed to the constructor.
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        s = settings if settings is not None else load_settings()
        flag_url = given.pop("base_url", None)
        base_url = flag_url or s.llm_base_url
        source = "--base-url" if flag_url else source_name(s, "llm_base_url")
        model = given.pop("model", None) or s.llm_model
        api_key = given.pop("api_key", None) or s.llm_api_key or os.environ.get(ENV_OPENAI_API_KEY)
        if not base_url:
            raise ModelError(
                f"no model endpoint configured: set {ENV_BASE_URL} "
                "(for example http://127.0.0.1:8000/v1)"
            )
        if not model:
            raise ModelError(
                f"no model name configured: set {ENV_MODEL} to a model the server at "
                f"{redact_urls(base_url)} serves"
            )
        return cls(base_url, model, api_key or None, base_url_source=source, **given)

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"}

    def _status_hint(self, status: int) -> str:
        if status == 404:
            return f"; check {ENV_BASE_URL} (it usually ends in /v1) and {ENV_MODEL}"
        return super()._status_hint(status)

    def _request_body(
        self, messages: Messages, *, temperature: float, max_tokens: int | None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        return body

    def _parse_reply(self, data: Any) -> Reply | None:
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (TypeError, KeyError, IndexError):
            return None
        if not isinstance(content, str):
            return None
        finish = choice.get("finish_reason")
        usage = data.get("usage")
        model = data.get("model")
        return (
            content,
            model if isinstance(model, str) and model else None,
            finish if isinstance(finish, str) else None,
            usage if isinstance(usage, dict) else None,
        )
