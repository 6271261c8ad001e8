"""OpenAICompatibleClient and AnthropicClient against a real HTTP server on 127.0.0.1
.

The server is the stdlib ``ThreadingHTTPServer`` on an ephemeral port, started per test and
scripted per request: reply with a status and body, hang past the client's read timeout, or
drop the connection without answering. Backoff delays go to a recording ``sleep`` so the
tests never wait for them; only the deliberate read timeouts (0.3 s) cost wall time.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from aborist.clients.anthropic import (
    ANTHROPIC_VERSION,
    DEFAULT_ANTHROPIC_MAX_TOKENS,
    AnthropicClient,
)
from aborist.clients.base import ChatResult
from aborist.clients.openai import MAX_RETRY_AFTER, OpenAICompatibleClient
from aborist.errors import ModelError

MESSAGES = [
    {"role": "system", "content": "Answer from the evidence."},
    {"role": "user", "content": "What is a list?"},
]
READ_TIMEOUT = 0.3
SHORT_TIMEOUT = httpx.Timeout(connect=2.0, read=READ_TIMEOUT, write=2.0, pool=2.0)


def completion(content: str = "Lists are mutable. [E1]", **extra: Any) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "model": "served-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
        **extra,
    }


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes | dict[str, Any] = field(default_factory=completion)
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Hang:
    seconds: float = 5.0


@dataclass(frozen=True)
class Drop:
    """Close the connection without sending any response."""


Action = Reply | Hang | Drop


@dataclass(frozen=True)
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that time out leave broken pipes behind; that is the point of the test."""


class ScriptedServer:
    """Answers each request with the next scripted action; records what it received."""

    def __init__(self) -> None:
        self.script: list[Action] = []
        self.seen: list[Seen] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                action = server._record(self.path, dict(self.headers.items()), body)
                if isinstance(action, Drop):
                    self.close_connection = True
                    return
                if isinstance(action, Hang):
                    server.release.wait(action.seconds)
                    action = Reply()
                try:
                    self._send(action)
                except OSError:  # the client gave up waiting
                    self.close_connection = True

            def _send(self, reply: Reply) -> None:
                raw = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    def _record(self, path: str, headers: dict[str, str], body: bytes) -> Action:
        with self._lock:
            self.seen.append(Seen(path, {k.lower(): v for k, v in headers.items()}, body))
            if self.script:
                return self.script.pop(0)
        return Reply(418, {"error": {"message": "test script exhausted"}})

    def then(self, *actions: Action) -> ScriptedServer:
        self.script.extend(actions)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer()
    try:
        yield srv
    finally:
        srv.close()


class Sleeps(list[float]):
    """A recording stand-in for time.sleep."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def make_client(sleeps: Sleeps) -> Iterator[Any]:
    made: list[OpenAICompatibleClient] = []

    def make(base_url: str, **kwargs: Any) -> OpenAICompatibleClient:
        kwargs.setdefault("model", "test-model")
        kwargs.setdefault("timeout", SHORT_TIMEOUT)
        kwargs.setdefault("sleep", sleeps)
        client = OpenAICompatibleClient(base_url, **kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def test_success_sends_openai_shape_request(server: ScriptedServer, make_client: Any) -> None:
    server.then(Reply())
    client = make_client(server.base_url, api_key="sk-test-123")
    result = client.complete(MESSAGES)
    assert result == ChatResult(
        text="Lists are mutable. [E1]",
        model="served-model",
        finish_reason="stop",
        usage={"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
        raw=completion(),
        attempts=1,
    )
    (seen,) = server.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer sk-test-123"
    assert seen.headers["content-type"] == "application/json"
    assert seen.json() == {"model": "test-model", "messages": MESSAGES, "temperature": 0.0}


def test_no_key_no_authorization_and_max_tokens_sent(
    server: ScriptedServer, make_client: Any
) -> None:
    server.then(Reply(), Reply())
    client = make_client(server.base_url + "/", max_tokens=256)
    client.complete(MESSAGES)
    client.complete(MESSAGES, temperature=0.7, max_tokens=32)
    assert [s.path for s in server.seen] == ["/v1/chat/completions"] * 2
    assert all("authorization" not in s.headers for s in server.seen)
    assert [(s.json()["temperature"], s.json()["max_tokens"]) for s in server.seen] == [
        (0.0, 256),
        (0.7, 32),
    ]


def test_503_twice_then_success_backs_off_exponentially(
    server: ScriptedServer, make_client: Any, sleeps: Sleeps
) -> None:
    server.then(Reply(503, {"error": "loading"}), Reply(503, b"busy"), Reply())
    result = make_client(server.base_url).complete(MESSAGES)
    assert result.attempts == 3
    assert result.text == "Lists are mutable. [E1]"
    assert sleeps == [0.5, 1.0]
    assert len(server.seen) == 3


def test_503_every_time_gives_model_error_after_three_attempts(
    server: ScriptedServer, make_client: Any, sleeps: Sleeps
) -> None:
    server.then(*[Reply(503, {"error": {"message": "model is loading"}})] * 3)
    client = make_client(server.base_url)
    with pytest.raises(ModelError) as info:
        client.complete(MESSAGES)
    message = str(info.value)
    assert message == (
        f"model server {server.base_url}/chat/completions: HTTP 503 Service Unavailable "
        "(model is loading); gave up after 3 attempts"
    )
    assert "\n" not in message
    assert sleeps == [0.5, 1.0]
    assert len(server.seen) == 3


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [("2", 2.0), ("0.25", 0.25), ("999", MAX_RETRY_AFTER), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.5)],
)
def test_429_respects_numeric_retry_after_up_to_cap(
    server: ScriptedServer, make_client: Any, sleeps: Sleeps, retry_after: str, expected: float
) -> None:
    server.then(Reply(429, {"error": "slow down"}, (("Retry-After", retry_after),)), Reply())
    assert make_client(server.base_url).complete(MESSAGES).attempts == 2
    assert sleeps == [expected]


def test_401_is_not_retried_and_the_key_is_redacted(
    server: ScriptedServer, make_client: Any, sleeps: Sleeps
) -> None:
    server.then(Reply(401, {"error": {"message": "Incorrect API key provided: sk-secret-9"}}))
    client = make_client(server.base_url, api_key="sk-secret-9")
    with pytest.raises(ModelError) as info:
        client.complete(MESSAGES)
    message = str(info.value)
    assert "sk-secret-9" not in message
    assert "HTTP 401 Unauthorized (Incorrect API key provided: ***)" in message
    assert "ABORIST_LLM_API_KEY" in message
    assert len(server.seen) == 1
    assert sleeps == []


@pytest.mark.parametrize(("status", "hint"), [(400, "bad request body"), (404, "/v1")])
def test_other_4xx_fail_at_once(
    server: ScriptedServer, make_client: Any, sleeps: Sleeps, status: int, hint: str
) -> None:
    server.then(Reply(status, {"detail": "bad request body"}))
    with pytest.raises(ModelError, match=f"HTTP {status} ") as info:
        make_client(server.base_url).complete(MESSAGES)
    assert hint in str(info.value)
    assert len(server.seen) == 1
    assert sleeps == []


def test_malformed_json_is_a_model_error_without_retry(
    server: ScriptedServer, make_client: Any
) -> None:
    server.then(Reply(200, b'{"choices": [ {"message": '))
    with pytest.raises(ModelError, match="response was not JSON") as info:
        make_client(server.base_url).complete(MESSAGES)
    assert server.base_url in str(info.value)
    assert len(server.seen) == 1


@pytest.mark.parametrize(
    "body",
    [
        {"object": "chat.completion"},
        {"choices": []},
        {"choices": [{"message": {"role": "assistant", "content": None}}]},
        {"choices": [{"text": "legacy completion shape"}]},
        ["not", "an", "object"],
    ],
)
def test_200_without_content_is_a_model_error(
    server: ScriptedServer, make_client: Any, body: Any
) -> None:
    server.then(Reply(200, json.dumps(body).encode()))
    with pytest.raises(ModelError, match=r"response had no choices\[0\]\.message\.content"):
        make_client(server.base_url).complete(MESSAGES)
    assert len(server.seen) == 1


def test_hanging_server_times_out_three_times(
    server: ScriptedServer, make_client: Any, sleeps: Sleeps
) -> None:
    server.then(Hang(), Hang(), Hang())
    started = time.monotonic()
    with pytest.raises(ModelError) as info:
        make_client(server.base_url).complete(MESSAGES)
    elapsed = time.monotonic() - started
    assert str(info.value) == (
        f"model server {server.base_url}/chat/completions: timed out after 0.3s waiting "
        "for the response; gave up after 3 attempts"
    )
    assert len(server.seen) == 3
    assert sleeps == [0.5, 1.0]
    assert 3 * READ_TIMEOUT * 0.9 <= elapsed < 3.0


def test_hang_once_then_answer(server: ScriptedServer, make_client: Any, sleeps: Sleeps) -> None:
    server.then(Hang(), Reply())
    assert make_client(server.base_url).complete(MESSAGES).attempts == 2
    assert sleeps == [0.5]


def test_dropped_connection_is_retried_then_reported(
    server: ScriptedServer, make_client: Any, sleeps: Sleeps
) -> None:
    server.then(Drop(), Drop(), Drop())
    with pytest.raises(ModelError) as info:
        make_client(server.base_url).complete(MESSAGES)
    assert str(info.value).endswith(
        "server closed the connection without a response; gave up after 3 attempts"
    )
    assert len(server.seen) == 3
    assert sleeps == [0.5, 1.0]


def test_dropped_connection_once_then_answer(server: ScriptedServer, make_client: Any) -> None:
    server.then(Drop(), Reply())
    assert make_client(server.base_url).complete(MESSAGES).attempts == 2


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_refused_connection_after_three_attempts(make_client: Any, sleeps: Sleeps) -> None:
    base_url = f"http://127.0.0.1:{_unused_port()}/v1"
    with pytest.raises(ModelError) as info:
        make_client(base_url).complete(MESSAGES)
    assert str(info.value) == (
        f"model server {base_url}/chat/completions: connection refused; gave up after 3 attempts"
    )
    assert sleeps == [0.5, 1.0]


def test_credentials_in_base_url_never_shown(server: ScriptedServer, make_client: Any) -> None:
    server.then(Reply(500, b"oops"), Reply(500, b"oops"), Reply(500, b"oops"))
    port = server.base_url.split(":")[2].split("/")[0]
    client = make_client(f"http://alice:hunter2@127.0.0.1:{port}/v1")
    with pytest.raises(ModelError) as info:
        client.complete(MESSAGES)
    assert "hunter2" not in str(info.value)
    assert "hunter2" not in json.dumps(client.profile())
    assert client.profile()["base_url"] == server.base_url
    assert server.seen[0].headers["authorization"].startswith("Basic ")


# --- AnthropicClient against the same server ---------------------------------------------


def anthropic_message(*texts: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-served",
        "content": [{"type": "text", "text": t} for t in texts],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 20, "output_tokens": 6},
    }


@pytest.fixture
def make_anthropic(sleeps: Sleeps) -> Iterator[Any]:
    made: list[AnthropicClient] = []

    def make(base_url: str, **kwargs: Any) -> AnthropicClient:
        kwargs.setdefault("timeout", SHORT_TIMEOUT)
        kwargs.setdefault("sleep", sleeps)
        client = AnthropicClient("claude-test", "sk-ant-1", base_url=base_url, **kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def test_anthropic_messages_request_and_answer(server: ScriptedServer, make_anthropic: Any) -> None:
    server.then(Reply(200, anthropic_message("Lists are ", "mutable. [E1]")))
    result = make_anthropic(server.base_url).complete(MESSAGES)
    assert (result.text, result.model, result.finish_reason, result.usage, result.attempts) == (
        "Lists are mutable. [E1]",
        "claude-served",
        "end_turn",
        {"input_tokens": 20, "output_tokens": 6},
        1,
    )
    (seen,) = server.seen
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == "sk-ant-1"
    assert seen.headers["anthropic-version"] == ANTHROPIC_VERSION
    assert "authorization" not in seen.headers
    assert seen.json() == {
        "model": "claude-test",
        "max_tokens": DEFAULT_ANTHROPIC_MAX_TOKENS,
        "system": "Answer from the evidence.",
        "messages": [{"role": "user", "content": "What is a list?"}],
        "temperature": 0.0,
    }


def test_anthropic_overloaded_529_is_retried(
    server: ScriptedServer, make_anthropic: Any, sleeps: Sleeps
) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    server.then(Reply(529, overloaded), Reply(529, overloaded), Reply(200, anthropic_message("x")))
    assert make_anthropic(server.base_url).complete(MESSAGES).attempts == 3
    assert sleeps == [0.5, 1.0]


def test_anthropic_400_fails_at_once_with_the_server_reason(
    server: ScriptedServer, make_anthropic: Any, sleeps: Sleeps
) -> None:
    bad = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "bad key sk-ant-1"},
    }
    server.then(Reply(400, bad))
    with pytest.raises(ModelError) as info:
        make_anthropic(server.base_url).complete(MESSAGES)
    assert str(info.value) == (
        f"model server {server.base_url}/messages: HTTP 400 Bad Request (bad key ***)"
    )
    assert sleeps == []


@pytest.mark.parametrize(
    "body",
    [
        {"type": "message", "content": []},
        {"type": "message", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
        {"type": "message"},
    ],
)
def test_anthropic_reply_without_text_is_a_model_error(
    server: ScriptedServer, make_anthropic: Any, body: dict[str, Any]
) -> None:
    server.then(Reply(200, body))
    with pytest.raises(ModelError, match="response had no text content block"):
        make_anthropic(server.base_url).complete(MESSAGES)


# -- how long to wait: ABORIST_LLM_TIMEOUT / --llm-timeout -------------------------------


def test_seconds_timeout_bounds_the_answer_and_keeps_short_connects() -> None:
    from aborist.clients.http import DEFAULT_TIMEOUT, seconds_timeout

    long = seconds_timeout(300)
    assert (long.connect, long.read, long.write, long.pool) == (
        DEFAULT_TIMEOUT.connect, 300, DEFAULT_TIMEOUT.write, DEFAULT_TIMEOUT.pool
    )  # fmt: skip
    short = seconds_timeout(0.2)
    assert (short.connect, short.read, short.write, short.pool) == (0.2, 0.2, 0.2, 0.2)


@pytest.mark.parametrize("raw", ["abc", "0", "-1", "inf", "nan", "1e999"])
def test_a_bad_llm_timeout_is_an_input_error(raw: str) -> None:
    from aborist.clients.select import llm_timeout
    from aborist.errors import InputError

    with pytest.raises(InputError, match="ABORIST_LLM_TIMEOUT must be a positive number"):
        llm_timeout(raw)


def test_select_client_takes_the_timeout_from_the_flag_else_the_variable() -> None:
    from aborist.clients.select import llm_timeout, select_client
    from aborist.settings import Settings

    assert llm_timeout(None) is None and llm_timeout("2.5") == 2.5
    settings = Settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="m", llm_timeout="7")
    with select_client(None, settings) as from_env:
        assert from_env.timeout.read == 7  # type: ignore[attr-defined]
    with select_client(None, settings, timeout=0.5) as from_flag:
        assert from_flag.timeout.read == 0.5  # type: ignore[attr-defined]
    with select_client(None, Settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="m")) as d:
        assert d.timeout.read == 120  # type: ignore[attr-defined]


def test_cli_llm_timeout_ends_a_stalled_answer(
    server: ScriptedServer, ledger_url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that never answers: with --llm-timeout 0.3 the run fails after three short
    attempts (and the 0.5 + 1 s of backoff between them), not after 3 x 120 s."""
    from click.testing import CliRunner

    from cli.main import cli

    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    doc = tmp_path / "doc.md"
    doc.write_text("# Rivers\n\nThe Silverrun River is 412 kilometres long.\n", encoding="utf-8")
    server.then(Hang(), Hang(), Hang())
    args = ["ask", str(doc), "How long is the Silverrun River?", "--db", ledger_url,
            "--model", "openai", "--base-url", server.base_url, "--llm-model", "m"]  # fmt: skip
    started = time.monotonic()
    result = CliRunner().invoke(cli, [*args, "--llm-timeout", "0.3"])
    elapsed = time.monotonic() - started
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "timed out after 0.3s waiting for the response; gave up after 3 attempts" in (
        result.stderr
    )
    assert elapsed < 4.5 and len(server.seen) == 3
    monkeypatch.setenv("ABORIST_LLM_TIMEOUT", "soon")
    bad = CliRunner().invoke(cli, args)
    assert bad.exit_code == 1 and "Traceback" not in bad.output
    assert bad.stderr.strip() == (
        "Error: ABORIST_LLM_TIMEOUT must be a positive number of seconds, not 'soon'"
    )


def test_a_url_secret_is_neither_recorded_nor_shown(
    server: ScriptedServer, ledger_url: str, tmp_path: Any
) -> None:
    """A base URL carrying a token in its query string (and user info) still reaches the
    server whole, but the model profile in qa.run_started, the qa.run_failed message and
    the error line name only scheme, host, port and path."""
    from click.testing import CliRunner

    from cli.main import cli
    from ledger.store import Ledger

    doc = tmp_path / "doc.md"
    doc.write_text("# Rivers\n\nThe Silverrun River is 412 kilometres long.\n", encoding="utf-8")
    secret = "s3cr3t-t0ken"
    port = server.base_url.split(":")[2].split("/")[0]
    url = f"http://bob:pw-{secret}@127.0.0.1:{port}/v1?token={secret}#frag-{secret}"
    refused = Reply(400, {"error": {"message": "bad request"}})
    server.then(refused, refused)
    args = ["ask", str(doc), "How long is the Silverrun River?", "--db", ledger_url,
            "--model", "openai", "--base-url", url, "--llm-model", "m"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert secret not in result.output and f"127.0.0.1:{port}/v1/chat/completions" in result.stderr
    assert f"token={secret}" in server.seen[0].path  # the request itself keeps the query
    with Ledger.open(ledger_url) as lg:
        events = lg.read()
    started = [e for e in events if e.type == "qa.run_started"]
    failed = [e for e in events if e.type == "qa.run_failed"]
    assert started and failed
    assert started[0].data["model_profile"]["base_url"] == f"http://127.0.0.1:{port}/v1"
    assert all(secret not in e.payload for e in events)
    assert "bob" not in failed[0].payload


def test_public_url_and_redaction() -> None:
    from aborist.clients.http import public_url, redact_urls

    assert str(public_url(httpx.URL("https://u:p@h.example:8443/v1/?k=1#f"))) == (
        "https://h.example:8443/v1/"
    )
    assert redact_urls("failed (ConnectError: https://u:p@h:1/v1?token=x) at once") == (
        "failed (ConnectError: https://h:1/v1) at once"
    )
