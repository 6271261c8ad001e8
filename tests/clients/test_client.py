"""ChatClient, StubClient, the model profile, and OpenAICompatibleClient over
``httpx.MockTransport`` and settings."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from aborist import prompts
from aborist.clients import base as client_module
from aborist.clients.anthropic import (
    DEFAULT_ANTHROPIC_BASE_URL,
    DEFAULT_ANTHROPIC_MAX_TOKENS,
    AnthropicClient,
)
from aborist.clients.base import (
    ChatClient,
    ChatResult,
    Messages,
    OpenAICompatibleClient,
    StubClient,
    messages_sha256,
)
from aborist.clients.openai import DEFAULT_TIMEOUT
from aborist.errors import InputError, ModelError
from aborist.settings import Settings
from ledger.canonical import canonical_json, sha256_hex


def _profile_hash(client: ChatClient) -> str:
    """The ``model_profile_hash`` dimension: sha256 of the canonical profile."""
    return sha256_hex(canonical_json(client.profile()))


REPO_ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [
    {"role": "system", "content": "Answer from the evidence."},
    {"role": "user", "content": "What is a list?"},
]
OK_BODY = {
    "model": "m",
    "choices": [{"message": {"role": "assistant", "content": "An answer. [E1]"}}],
}


# --- ChatClient and ChatResult ---------------------------------------------------------


def test_chat_client_is_abstract() -> None:
    with pytest.raises(TypeError):
        ChatClient()  # type: ignore[abstract]


def test_chat_result_is_frozen_and_json_able() -> None:
    result = ChatResult(text="a", model="m", finish_reason="stop", usage={"total_tokens": 3})
    with pytest.raises(AttributeError):
        result.text = "b"  # type: ignore[misc]
    assert json.loads(canonical_json(result.to_dict())) == {
        "text": "a",
        "model": "m",
        "finish_reason": "stop",
        "usage": {"total_tokens": 3},
        "raw": None,
        "attempts": 1,
    }


@pytest.mark.parametrize(
    ("messages", "fragment"),
    [
        ([], "no messages"),
        ([{"role": "wizard", "content": "x"}], "role must be one of"),
        ([{"role": "user"}], "content must be a string"),
        ([{"role": "user", "content": 3}], "content must be a string"),
    ],
)
def test_malformed_messages_are_input_errors(messages: Any, fragment: str) -> None:
    stub = StubClient(default="x")
    with pytest.raises(InputError, match=fragment):
        stub.complete(messages)
    assert stub.calls == []


def test_non_positive_max_tokens_rejected() -> None:
    with pytest.raises(InputError, match="max_tokens"):
        StubClient(max_tokens=0)


# --- StubClient -------------------------------------------------------------------------


def test_stub_matches_last_user_message_first() -> None:
    convo = [*MESSAGES, {"role": "assistant", "content": "?"}, {"role": "user", "content": "More"}]
    stub = StubClient({"What is a list?": "first", "More": "second"})
    assert stub.complete(MESSAGES).text == "first"
    assert stub.complete(convo).text == "second"
    assert stub.calls == [MESSAGES, convo]


def test_stub_matches_messages_sha256() -> None:
    other = [{"role": "user", "content": "What is a list?"}]
    stub = StubClient({messages_sha256(MESSAGES): "by hash"})
    assert stub.complete(MESSAGES).text == "by hash"
    with pytest.raises(ModelError):
        stub.complete(other)


def test_messages_sha256_is_canonical() -> None:
    reordered = [{"content": m["content"], "role": m["role"]} for m in MESSAGES]
    assert messages_sha256(reordered) == messages_sha256(MESSAGES)
    assert messages_sha256(MESSAGES[:1]) != messages_sha256(MESSAGES)


def test_stub_callable_and_default() -> None:
    def responder(messages: Messages) -> str | None:
        last = messages[-1]["content"]
        return last.upper() if last.startswith("shout") else None

    stub = StubClient(responder, default="fallback")
    assert stub.complete([{"role": "user", "content": "shout this"}]).text == "SHOUT THIS"
    assert stub.complete(MESSAGES).text == "fallback"


def test_stub_without_match_or_default_raises_model_error() -> None:
    stub = StubClient({"something else": "x"})
    with pytest.raises(ModelError, match="no canned answer for last user message 'What is a list"):
        stub.complete(MESSAGES)
    assert len(stub.calls) == 1


def test_stub_result_shape() -> None:
    result = StubClient(default="x", model="stub-9").complete(MESSAGES)
    assert result == ChatResult(text="x", model="stub-9", finish_reason="stop", attempts=1)


def test_stub_profile_tracks_its_answers() -> None:
    a = StubClient({"q": "a"})
    assert _profile_hash(a) == _profile_hash(StubClient({"q": "a"}))
    assert _profile_hash(a) != _profile_hash(StubClient({"q": "b"}))
    assert _profile_hash(a) != _profile_hash(StubClient({"q": "a"}, default="d"))
    assert StubClient(lambda m: None).profile()["responder"].endswith("<lambda>")


# --- the model profile ------------------------------------------------------------------


def _openai(**kwargs: Any) -> OpenAICompatibleClient:
    kwargs.setdefault("transport", httpx.MockTransport(lambda r: httpx.Response(200, json=OK_BODY)))
    return OpenAICompatibleClient(
        kwargs.pop("base_url", "http://127.0.0.1:8000/v1"), kwargs.pop("model", "m"), **kwargs
    )


def test_openai_profile_is_stable_and_has_no_secret() -> None:
    with (
        _openai(api_key="sk-abc") as a,
        _openai() as b,
        _openai(base_url="http://127.0.0.1:8000/v1/") as c,
    ):
        assert a.profile() == {
            "client": "openai-compatible",
            "base_url": "http://127.0.0.1:8000/v1",
            "model": "m",
            "temperature": 0.0,
            "max_tokens": None,
            "prompts": prompts.prompt_profile(),
        }
        assert "sk-abc" not in canonical_json(a.profile()).decode()
        assert _profile_hash(a) == _profile_hash(b) == _profile_hash(c)


@pytest.mark.parametrize(
    "change",
    [
        {"model": "other"},
        {"base_url": "http://10.0.0.2:8000/v1"},
        {"temperature": 0.2},
        {"max_tokens": 100},
    ],
)
def test_profile_changes_with_what_shapes_the_answer(change: dict[str, Any]) -> None:
    with _openai() as base, _openai(**change) as changed:
        assert _profile_hash(base) != _profile_hash(changed)


def test_profile_ignores_transport_settings() -> None:
    with _openai() as base, _openai(max_attempts=5, timeout=9.0, backoff_base=2.0) as tuned:
        assert _profile_hash(base) == _profile_hash(tuned)


def test_profile_changes_when_a_prompt_template_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    stub = StubClient(default="x")
    before = _profile_hash(stub)
    edited = prompts.PromptTemplate("quote", prompts.QUOTE_PROMPT_VERSION, "Be brief.")
    monkeypatch.setitem(prompts.TEMPLATES, "quote", edited)
    assert _profile_hash(stub) != before


# --- OpenAICompatibleClient over MockTransport -------------------------------------------


class Recorder:
    """A MockTransport handler that replays ``outcomes`` and keeps every request."""

    def __init__(self, *outcomes: httpx.Response | Exception) -> None:
        self.outcomes = list(outcomes)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def mock_client(sleeps: list[float]) -> Iterator[Any]:
    made: list[OpenAICompatibleClient] = []

    def make(recorder: Recorder, **kwargs: Any) -> OpenAICompatibleClient:
        kwargs.setdefault("sleep", sleeps.append)
        c = _openai(transport=httpx.MockTransport(recorder), **kwargs)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def test_mock_transport_request_shape(mock_client: Any) -> None:
    rec = Recorder(httpx.Response(200, json=OK_BODY))
    result = mock_client(rec, api_key="k", temperature=0.3).complete(MESSAGES)
    (request,) = rec.requests
    assert (request.method, str(request.url)) == (
        "POST",
        "http://127.0.0.1:8000/v1/chat/completions",
    )
    assert request.headers["authorization"] == "Bearer k"
    assert json.loads(request.content) == {"model": "m", "messages": MESSAGES, "temperature": 0.3}
    assert (result.text, result.model, result.finish_reason, result.usage) == (
        "An answer. [E1]",
        "m",
        None,
        None,
    )


def test_connect_timeout_then_read_error_then_success(
    mock_client: Any, sleeps: list[float]
) -> None:
    rec = Recorder(
        httpx.ConnectTimeout("slow connect"),
        httpx.ReadError("reset by peer"),
        httpx.Response(200, json=OK_BODY),
    )
    assert mock_client(rec).complete(MESSAGES).attempts == 3
    assert sleeps == [0.5, 1.0]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (httpx.ConnectTimeout("x"), "timed out after 5s connecting"),
        (httpx.WriteTimeout("x"), "timed out after 30s sending the request"),
        (httpx.PoolTimeout("x"), "timed out after 5s waiting for a free connection"),
        (httpx.ConnectError("[Errno -2] Name or service not known"), "could not connect ([Errno"),
        (httpx.ReadError("reset"), "connection failed (ReadError: reset)"),
    ],
)
def test_transport_errors_are_described(mock_client: Any, error: Exception, expected: str) -> None:
    rec = Recorder(error, error, error)
    with pytest.raises(ModelError) as info:
        mock_client(rec, timeout=DEFAULT_TIMEOUT).complete(MESSAGES)
    assert expected in str(info.value)
    assert str(info.value).endswith("gave up after 3 attempts")
    assert len(rec.requests) == 3


def test_unretryable_transport_error_fails_at_once(mock_client: Any, sleeps: list[float]) -> None:
    rec = Recorder(httpx.ProxyError("proxy said no"))
    with pytest.raises(ModelError, match=r"request failed \(ProxyError: proxy said no\)"):
        mock_client(rec).complete(MESSAGES)
    assert sleeps == []


def test_custom_attempts_and_backoff(mock_client: Any, sleeps: list[float]) -> None:
    rec = Recorder(*[httpx.Response(502)] * 4)
    with pytest.raises(ModelError, match="HTTP 502 Bad Gateway; gave up after 4 attempts"):
        mock_client(rec, max_attempts=4, backoff_base=0.1).complete(MESSAGES)
    assert sleeps == pytest.approx([0.1, 0.2, 0.4])


def test_single_attempt_does_not_sleep(mock_client: Any, sleeps: list[float]) -> None:
    rec = Recorder(httpx.Response(500))
    with pytest.raises(ModelError, match=r"gave up after 1 attempt$"):
        mock_client(rec, max_attempts=1).complete(MESSAGES)
    assert sleeps == []


@pytest.mark.parametrize(
    "base_url", ["ftp://127.0.0.1/v1", "127.0.0.1:8000/v1", "http://", "http://[::1"]
)
def test_bad_base_url_names_the_variable(base_url: str) -> None:
    with pytest.raises(ModelError, match="ABORIST_LLM_BASE_URL"):
        OpenAICompatibleClient(base_url, "m")


@pytest.mark.parametrize("kwargs", [{"model": " "}, {"max_attempts": 0}])
def test_bad_construction_arguments(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ModelError):
        OpenAICompatibleClient("http://127.0.0.1:8000/v1", **{"model": "m", **kwargs})


# --- from_settings ------------------------------------------------------------------------

ENV_VARS = ("ABORIST_LLM_BASE_URL", "ABORIST_LLM_MODEL", "ABORIST_LLM_API_KEY", "OPENAI_API_KEY")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _sent_auth(client: OpenAICompatibleClient) -> str | None:
    value = client._http.headers.get("authorization")
    return None if value is None else str(value)


def test_from_settings_reads_the_environment(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("ABORIST_LLM_BASE_URL", "http://127.0.0.1:9000/v1/")
    clean_env.setenv("ABORIST_LLM_MODEL", "hermes-3")
    clean_env.setenv("OPENAI_API_KEY", "sk-openai")
    with OpenAICompatibleClient.from_settings() as c:
        assert (c.base_url, c.model) == ("http://127.0.0.1:9000/v1", "hermes-3")
        assert _sent_auth(c) == "Bearer sk-openai"
    clean_env.setenv("ABORIST_LLM_API_KEY", "sk-aborist")
    with OpenAICompatibleClient.from_settings() as c:
        assert _sent_auth(c) == "Bearer sk-aborist"


def test_from_settings_overrides_win_and_none_means_unset(clean_env: pytest.MonkeyPatch) -> None:
    settings = Settings(llm_base_url="http://a:1/v1", llm_model="env-model", llm_api_key="k1")
    with OpenAICompatibleClient.from_settings(
        settings, base_url="http://b:2/v1", model=None, api_key="k2", max_attempts=5
    ) as c:
        assert (c.base_url, c.model, c.max_attempts) == ("http://b:2/v1", "env-model", 5)
        assert _sent_auth(c) == "Bearer k2"


def test_from_settings_without_key_sends_no_authorization(clean_env: pytest.MonkeyPatch) -> None:
    settings = Settings(llm_base_url="http://a:1/v1", llm_model="m")
    with OpenAICompatibleClient.from_settings(settings) as c:
        assert _sent_auth(c) is None


@pytest.mark.parametrize(
    ("settings", "variable"),
    [
        (Settings(llm_model="m"), "ABORIST_LLM_BASE_URL"),
        (Settings(llm_base_url="http://a:1/v1"), "ABORIST_LLM_MODEL"),
    ],
)
def test_from_settings_names_the_missing_variable(
    clean_env: pytest.MonkeyPatch, settings: Settings, variable: str
) -> None:
    with pytest.raises(ModelError, match=f"set {variable}"):
        OpenAICompatibleClient.from_settings(settings)


def test_client_module_reexports_openai_client() -> None:
    assert "OpenAICompatibleClient" in client_module.__all__
    assert client_module.OpenAICompatibleClient is OpenAICompatibleClient
    assert set(client_module.__all__) == {
        "ROLES",
        "ChatClient",
        "ChatResult",
        "Messages",
        "OpenAICompatibleClient",
        "StubClient",
        "messages_sha256",
    }


def test_every_client_module_imports_first_in_a_fresh_interpreter() -> None:
    """Regression: client.py once re-exported client_openai eagerly, a circular import."""
    script = (
        "import importlib, sys\n"
        "for name in ('aborist.clients.openai', 'aborist.clients.http',\n"
        "             'aborist.clients.anthropic', 'aborist.clients.base'):\n"
        "    for loaded in [m for m in sys.modules if m.startswith('aborist.clients.base')]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
        "from aborist.clients.base import OpenAICompatibleClient\n"
        "print(OpenAICompatibleClient.kind)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "openai-compatible"


# --- AnthropicClient (its HTTP behaviour is tested in test_client_http.py) ----------------


def test_anthropic_profile_and_defaults() -> None:
    with AnthropicClient("claude-x", "sk-ant-secret") as c:
        assert c.profile() == {
            "client": "anthropic",
            "base_url": DEFAULT_ANTHROPIC_BASE_URL,
            "model": "claude-x",
            "temperature": 0.0,
            "max_tokens": DEFAULT_ANTHROPIC_MAX_TOKENS,
            "prompts": prompts.prompt_profile(),
        }
        assert c.endpoint_display == DEFAULT_ANTHROPIC_BASE_URL + "/messages"
        assert "sk-ant-secret" not in canonical_json(c.profile()).decode()


def test_anthropic_needs_a_user_message() -> None:
    rec = Recorder()
    with (
        AnthropicClient("claude-x", "k", transport=httpx.MockTransport(rec)) as c,
        pytest.raises(InputError, match="at least one user message"),
    ):
        c.complete([{"role": "system", "content": "only a system prompt"}])
    assert rec.requests == []


def test_anthropic_from_settings(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelError, match="set ANTHROPIC_API_KEY"):
        AnthropicClient.from_settings(Settings(llm_model="claude-x"))
    with pytest.raises(ModelError, match="set ABORIST_LLM_MODEL"):
        AnthropicClient.from_settings(Settings())
    clean_env.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    settings = Settings(llm_model="claude-x", llm_base_url="http://127.0.0.1:8000/v1")
    with AnthropicClient.from_settings(settings, max_tokens=64) as c:
        assert (c.base_url, c.model, c.max_tokens) == (DEFAULT_ANTHROPIC_BASE_URL, "claude-x", 64)
        assert c._http.headers["x-api-key"] == "sk-ant-env"
