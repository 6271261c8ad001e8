"""A hostile model server on 127.0.0.1: a body that trickles in a byte at a time, one that
never ends, a compressed bomb, JSON nested past the parser's recursion limit, an answer of
hundreds of thousands of characters. Each is one :class:`ModelError` within the timeout
(no hang, no traceback, no unbounded memory), and the run it happened in is recorded as
failed, never left half-written."""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from aborist.clients.http import MAX_RESPONSE_BYTES
from aborist.clients.openai import OpenAICompatibleClient
from aborist.errors import ModelError
from aborist.events import run_stream
from aborist.pipeline.query import query
from aborist.pipeline.recorded import load_run
from aborist.pipeline.run import MAX_ANSWER_CHARS
from ledger.store import Ledger
from ledger.verify import verify_ledger

MESSAGES = [{"role": "user", "content": "How long is the Silverrun River?"}]


def _answer(content: str) -> bytes:
    return json.dumps({"choices": [{"message": {"content": content}}]}).encode()


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """The client hanging up on a trickle leaves a broken pipe: expected here."""


@pytest.fixture
def hostile() -> Iterator[str]:
    """Base URL of a server whose path's first part names its misbehaviour."""
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, body: bytes, *headers: tuple[str, str]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            mode = self.path.strip("/").split("/")[0]
            if mode == "trickle":  # a byte every 20 ms: each read is quick, the body never done
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "1000000")
                self.end_headers()
                while not stop.is_set():
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.02)
            elif mode == "endless":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b"a" * 65536
                while not stop.is_set():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            elif mode == "bomb":  # 20 KiB on the wire, 20 MiB once decoded
                body = gzip.compress(b" " * (MAX_RESPONSE_BYTES + 4 * 1024 * 1024))
                self._send(body, ("Content-Encoding", "gzip"))
            elif mode == "deep":
                self._send(b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
            elif mode == "surrogate":  # json.dumps escapes it: "\\ud800"
                self._send(_answer("The Silverrun River is \ud800 long. [E1]"))
            elif mode == "long":
                self._send(_answer("The Silverrun River is long. [E1]\n" * 10_000))
            else:
                self._send(_answer("The Silverrun River is 212 km long. [E1]"))

    httpd = _Quiet(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


_OPEN: list[OpenAICompatibleClient] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _client(base: str, mode: str, timeout: float = 2.0) -> OpenAICompatibleClient:
    client = OpenAICompatibleClient(
        f"{base}/{mode}/v1", "m", timeout=timeout, max_attempts=2, sleep=lambda s: None
    )
    _OPEN.append(client)
    return client


def test_a_body_trickling_in_forever_times_out_within_the_read_timeout(hostile: str) -> None:
    """httpx's read timeout is per network read; the answer's is per attempt, whole."""
    client = _client(hostile, "trickle", timeout=0.5)
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"timed out after 0\.5s waiting for the response; "
                                         r"gave up after 2 attempts"):  # fmt: skip
        client.complete(MESSAGES)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("mode", ["endless", "bomb"])
def test_a_body_without_end_or_a_compressed_bomb_stops_at_the_size_limit(
    hostile: str, mode: str
) -> None:
    with pytest.raises(ModelError, match="response body larger than 16 MiB"):
        _client(hostile, mode, timeout=10).complete(MESSAGES)


def test_json_nested_past_the_recursion_limit_is_not_json(hostile: str) -> None:
    with pytest.raises(ModelError, match=r"response was not JSON \(HTTP 200"):
        _client(hostile, "deep").complete(MESSAGES)


def test_a_well_behaved_server_still_answers(hostile: str) -> None:
    reply = _client(hostile, "ok").complete(MESSAGES)
    assert reply.text == "The Silverrun River is 212 km long. [E1]"


def _only_run(ledger: Ledger) -> str:
    runs = {e.stream for e in ledger.iter_events() if e.stream.startswith("run:")}
    [stream] = runs
    return stream.removeprefix("run:")


def test_a_run_given_an_overlong_answer_fails_at_model_and_is_recorded(
    pipeline_ledger: Ledger, corpus: Any, hostile: str
) -> None:
    """An answer of 340,000 characters made the parse payload too large for the ledger:
    the PayloadError escaped with the run left incomplete after qa.model_answered."""
    client = _client(hostile, "long")
    with pytest.raises(ModelError, match=f"at most {MAX_ANSWER_CHARS:,} are verified"):
        query(MESSAGES[0]["content"], ledger=pipeline_ledger, client=client,
              shards_dir=corpus.shards_dir)  # fmt: skip
    rid = _only_run(pipeline_ledger)
    events = pipeline_ledger.read_stream(run_stream(rid))
    assert events[-1].type == "qa.run_failed"
    assert (events[-1].data["stage"], events[-1].data["error_type"]) == ("model", "ModelError")
    assert "qa.model_answered" not in [e.type for e in events]
    assert load_run(pipeline_ledger, rid).status == "failed"
    assert verify_ledger(pipeline_ledger).ok


def test_an_event_the_ledger_refuses_fails_the_run_instead_of_leaving_it_incomplete(
    pipeline_ledger: Ledger, corpus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever stage makes a payload past the ledger's bounds, the run ends failed."""
    from aborist.clients.base import StubClient
    from aborist.pipeline import run as run_module
    from ledger.errors import PayloadError

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PayloadError("payload is 9,000,000 bytes; at most 8,388,608")

    monkeypatch.setattr(run_module.tail, "parse", refuse)
    with pytest.raises(PayloadError):
        query(MESSAGES[0]["content"], ledger=pipeline_ledger,
              client=StubClient(default="The Silverrun River is long. [E1]"),
              shards_dir=corpus.shards_dir)  # fmt: skip
    rid = _only_run(pipeline_ledger)
    failed = pipeline_ledger.read_stream(run_stream(rid))[-1]
    assert failed.type == "qa.run_failed" and failed.data["error_type"] == "PayloadError"
    assert load_run(pipeline_ledger, rid).status == "failed"
    assert verify_ledger(pipeline_ledger).ok


def test_a_model_answer_with_a_lone_surrogate_fails_the_run_cleanly(
    pipeline_ledger: Ledger, corpus: Any, hostile: str
) -> None:
    """A JSON reply may escape a lone surrogate ("\\ud800"): such a string is no Unicode
    text and has no UTF-8 bytes, so it can be neither hashed nor stored. The run ends
    failed at the model stage with a ModelError naming it, not a codec traceback, and the
    ledger verifies."""
    with pytest.raises(ModelError, match="lone surrogate"):
        query(MESSAGES[0]["content"], ledger=pipeline_ledger,
              client=_client(hostile, "surrogate"), shards_dir=corpus.shards_dir)  # fmt: skip
    rid = _only_run(pipeline_ledger)
    failed = pipeline_ledger.read_stream(run_stream(rid))[-1]
    assert failed.type == "qa.run_failed"
    assert (failed.data["stage"], failed.data["error_type"]) == ("model", "ModelError")
    assert load_run(pipeline_ledger, rid).status == "failed"
    assert verify_ledger(pipeline_ledger).ok
