"""A model server on a real loopback socket that sends its status line and headers, or
its body, one byte at a time and never finishes: each byte comes well within httpx's read
timeout, so only a deadline on the whole exchange ends it (aborist/clients/deadline.py).
The client gives up with one ModelError, and ``aborist query`` exits 1 with one line."""

from __future__ import annotations

import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aborist.clients.deadline import bound_client
from aborist.clients.openai import OpenAICompatibleClient
from aborist.errors import ModelError

REPO_ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [{"role": "user", "content": "How long is the Silverrun River?"}]
ANSWER = json.dumps({"choices": [{"message": {"content": "The river is long. [E1]"}}]})
#: How long a test waits for a call that should give up after about a second: a ceiling
#: for a hang, not a timing claim.
CEILING_S = 120


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
         if line.lower().startswith(b"content-length:")),
        0,
    )  # fmt: skip
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head


@pytest.fixture
def trickler() -> Iterator[str]:
    """Base URL of a server whose first path part names what it does: ``headers`` (the
    status line, then a header a byte every 10 ms, forever), ``body`` (whole headers,
    then the body a byte every 10 ms, forever) or ``ok`` (an answer at once)."""
    stop = threading.Event()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            conn: socket.socket = self.request
            head = _read_request(conn)
            mode = head.split(b" ", 2)[1].strip(b"/").split(b"/")[0] if head else b""
            try:
                if mode == b"ok":
                    body = ANSWER.encode()
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))  # fmt: skip
                    return
                if mode == b"headers":
                    prefix, drip = b"HTTP/1.1 200 OK\r\nX-Padding: ", b"a"
                else:
                    prefix, drip = b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n", b" "
                conn.sendall(prefix)
                while not stop.is_set():
                    conn.sendall(drip)
                    time.sleep(0.01)
            except OSError:  # the client hung up: what it should do
                pass

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


def _complete_in_thread(client: OpenAICompatibleClient) -> BaseException | Any:
    """``client.complete`` on a thread joined with a generous ceiling: a hang fails the
    test instead of stopping the suite."""
    out: list[Any] = []

    def go() -> None:
        try:
            out.append(client.complete(MESSAGES))
        except BaseException as e:  # handed to the test
            out.append(e)

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(CEILING_S)
    assert not thread.is_alive(), "the client is still waiting for a server that never ends"
    return out[0]


@pytest.mark.parametrize("mode", ["headers", "body"])
def test_a_response_trickling_forever_is_given_up_on(trickler: str, mode: str) -> None:
    client = OpenAICompatibleClient(
        f"{trickler}/{mode}/v1", "m", timeout=0.5, max_attempts=2, sleep=lambda s: None
    )
    with client:
        got = _complete_in_thread(client)
    assert isinstance(got, ModelError), got
    assert str(got) == (
        f"model server {trickler}/{mode}/v1/chat/completions: timed out after 0.5s waiting "
        "for the response; gave up after 2 attempts"
    )


def test_a_prompt_server_still_answers_through_the_deadline(trickler: str) -> None:
    with OpenAICompatibleClient(f"{trickler}/ok/v1", "m", timeout=5) as client:
        assert client.complete(MESSAGES).text == "The river is long. [E1]"
        assert client.complete(MESSAGES).text == "The river is long. [E1]"  # kept alive


def test_the_deadline_reaches_the_proxy_transports_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx mounts one transport per proxy from the environment; each is bound (and a
    second binding changes nothing). This also fails if httpx or httpcore rename what
    bound_client reaches for."""
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with OpenAICompatibleClient("http://model.example/v1", "m") as client:
        http = client._http
        assert len([t for t in http._mounts.values() if t is not None]) == 2
        assert bound_client(http) == 3  # the default transport and the two proxies


def test_the_cli_exits_with_one_line_when_the_headers_never_end(
    trickler: str, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rivers.md").write_text(
        "# Rivers\n\nThe Silverrun River is 412 kilometres long.\n", encoding="utf-8"
    )
    env = {**os.environ, "ABORIST_HOME": str(tmp_path / "home"),
           "PYTHONPATH": str(REPO_ROOT)}  # fmt: skip
    for name in ("ABORIST_DB_URL", "ABORIST_SHARD_DIR", "ABORIST_LLM_BASE_URL"):
        env.pop(name, None)

    def aborist(*args: str) -> subprocess.CompletedProcess[str]:
        code = "import sys; from cli.entry import aborist; sys.exit(aborist())"
        return subprocess.run(
            [sys.executable, "-c", code, *args], env=env, cwd=tmp_path,
            capture_output=True, text=True, timeout=CEILING_S,
        )  # fmt: skip

    assert aborist("ingest", str(docs), "--shard", "geo").returncode == 0
    endpoint = f"{trickler}/headers/v1"
    done = aborist("query", "How long is the Silverrun River?", "--base-url", endpoint,
                   "--llm-model", "m", "--llm-timeout", "0.5")  # fmt: skip
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line == (
        f"Error: model server {trickler}/headers/v1/chat/completions: timed out after 0.5s "
        "waiting for the response; gave up after 3 attempts"
    )
    runs = json.loads(aborist("runs", "--json").stdout)
    assert [(r["status"], r["failed_stage"]) for r in runs["runs"]] == [("failed", "model")]
