"""LLM transport: the client interface every answerer implements (docs/pipeline.md).

Every client takes chat messages and returns a :class:`ChatResult`; every failure it
reports is one :class:`aborist.errors.ModelError` with a one-line message. Each client also
states its *model profile* (:meth:`ChatClient.profile`): the JSON-able description of
everything that shapes the answer — client kind, endpoint without credentials, model name,
sampling settings and the prompt templates (:func:`aborist.prompts.prompt_profile`). Its
canonical hash (as recorded in ``qa.run_started``) is the ``model_profile_hash`` dimension of
the cache key, so it never contains an API key or anything that changes between runs.

::

    ChatClient (ABC)
     ├── StubClient                 canned answers keyed on the input, for tests
     ├── (ExtractiveClient)         the offline default, built on the verifier's evidence
     └── HTTPChatClient (ABC)       timeouts, retries, error lines (client_http.py)
          ├── OpenAICompatibleClient  any /v1/chat/completions endpoint (client_openai.py)
          └── AnthropicClient         the Messages API (client_anthropic.py)

A new client implements ``_complete`` (messages are already checked; temperature and
max_tokens already resolved against the client's defaults) and ``_profile``, and sets
``kind``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from aborist.errors import InputError, ModelError
from aborist.prompts import prompt_profile
from ledger.canonical import canonical_json, sha256_hex

if TYPE_CHECKING:
    from aborist.clients.openai import OpenAICompatibleClient

__all__ = [
    "ROLES",
    "ChatClient",
    "ChatResult",
    "Messages",
    "OpenAICompatibleClient",
    "StubClient",
    "messages_sha256",
]

ROLES = ("system", "user", "assistant")

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class ChatResult:
    """One completed chat call.

    ``raw`` is the parsed response JSON (``None`` for clients without one); ``attempts`` is
    how many HTTP attempts the answer took (1 for local clients).
    """

    text: str
    model: str
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    raw: dict[str, Any] | None = None
    attempts: int = 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (for the ``model answered`` event)."""
        return {
            "text": self.text,
            "model": self.model,
            "finish_reason": self.finish_reason,
            "usage": self.usage,
            "raw": self.raw,
            "attempts": self.attempts,
        }


def messages_sha256(messages: Sequence[Mapping[str, str]]) -> str:
    """sha256 of the RFC 8785 canonical JSON of ``messages`` (a :class:`StubClient` key)."""
    return sha256_hex(canonical_json([dict(m) for m in messages]))


def check_messages(messages: Sequence[Mapping[str, str]]) -> Messages:
    """A plain copy of ``messages``, or :class:`InputError` if they are not chat messages."""
    if not messages:
        raise InputError("no messages to send to the model")
    clean: Messages = []
    for i, m in enumerate(messages):
        role, content = m.get("role"), m.get("content")
        if role not in ROLES:
            raise InputError(f"message {i}: role must be one of {', '.join(ROLES)}; found {role!r}")
        if not isinstance(content, str):
            raise InputError(f"message {i}: content must be a string")
        clean.append({"role": role, "content": content})
    return clean


class ChatClient(ABC):
    """A chat model. Subclasses implement :meth:`_complete` and :meth:`_profile`.

    ``temperature`` and ``max_tokens`` set here are the defaults :meth:`complete` uses and
    the values the profile records; a per-call override is for experiments and is not in
    the profile.
    """

    kind: str = "abstract"

    def __init__(self, *, temperature: float = 0.0, max_tokens: int | None = None) -> None:
        if max_tokens is not None and max_tokens < 1:
            raise InputError(f"max_tokens must be at least 1; found {max_tokens}")
        self.temperature = float(temperature)
        self.max_tokens = max_tokens

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResult:
        """Answer ``messages``. Raises :class:`ModelError` when the model fails."""
        return self._complete(
            check_messages(messages),
            temperature=self.temperature if temperature is None else float(temperature),
            max_tokens=self.max_tokens if max_tokens is None else max_tokens,
        )

    @abstractmethod
    def _complete(
        self, messages: Messages, *, temperature: float, max_tokens: int | None
    ) -> ChatResult: ...

    @abstractmethod
    def _profile(self) -> dict[str, Any]:
        """Client-specific profile fields (no secrets, nothing volatile)."""

    def profile(self) -> dict[str, Any]:
        """The model profile: client fields, sampling defaults and the prompt templates."""
        return {
            "client": self.kind,
            **self._profile(),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "prompts": prompt_profile(),
        }

    def close(self) -> None:
        """Release connections (a no-op for local clients)."""
        return None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


Responder = Callable[[Messages], str | None]


class StubClient(ChatClient):
    """Canned answers, for tests: a deterministic test fixture.

    ``responses`` is a mapping or a callable. A mapping is looked up first by the content of
    the last user message, then by :func:`messages_sha256` of all messages; a callable gets
    the messages and returns the answer or ``None``. With no match, ``default`` is the
    answer; without a default the call raises :class:`ModelError`. Every call's messages are
    kept in :attr:`calls`.
    """

    kind = "stub"

    def __init__(
        self,
        responses: Mapping[str, str] | Responder | None = None,
        default: str | None = None,
        *,
        model: str = "stub",
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(temperature=temperature, max_tokens=max_tokens)
        self.responses = responses if responses is not None else {}
        self.default = default
        self.model = model
        self.calls: list[Messages] = []

    def _lookup(self, messages: Messages) -> str | None:
        if callable(self.responses):
            return self.responses(messages)
        users = [m["content"] for m in messages if m["role"] == "user"]
        if users and users[-1] in self.responses:
            return self.responses[users[-1]]
        return self.responses.get(messages_sha256(messages))

    def _complete(
        self, messages: Messages, *, temperature: float, max_tokens: int | None
    ) -> ChatResult:
        self.calls.append(messages)
        text = self._lookup(messages)
        if text is None:
            text = self.default
        if text is None:
            users = [m["content"] for m in messages if m["role"] == "user"]
            last = users[-1][:60] if users else ""
            raise ModelError(
                f"stub model has no canned answer for last user message {last!r} "
                f"(messages sha256 {messages_sha256(messages)[:12]}…) and no default"
            )
        return ChatResult(text=text, model=self.model, finish_reason="stop")

    def _profile(self) -> dict[str, Any]:
        if callable(self.responses):
            fn = self.responses
            name = getattr(fn, "__qualname__", type(fn).__qualname__)
            answers: dict[str, Any] = {"responder": f"{fn.__module__}.{name}"}
        else:
            answers = {"responses_sha256": sha256_hex(canonical_json(dict(self.responses)))}
        return {"model": self.model, **answers, "default": self.default}


def __getattr__(name: str) -> Any:
    """Lazy re-export: ``client_openai`` imports this module, so it cannot load first."""
    if name == "OpenAICompatibleClient":
        from aborist.clients.openai import OpenAICompatibleClient

        return OpenAICompatibleClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
