"""Connection limits of `aborist serve`, on a real uvicorn on loopback (docs/serve.md,
"Limits"): a connection that sends nothing, or trickles its request head, is cut off
within the header timeout (uvicorn held it for ever); an idle keep-alive connection is
closed after the keep-alive timeout; a body nobody reads may not trickle for ever either;
connections beyond the limit are refused with 503; a normal request still works."""

from __future__ import annotations

import logging
import re
import select
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import pytest

from aborist.server import create_app
from tests.server.conftest import Served
from tests.server.live import live_server, serve_process

HEALTH = b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
HEALTH_CLOSE = HEALTH.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")


@dataclass
class Outcome:
    data: bytes
    closed_after: float | None  # seconds until the server closed it; None: still open

    @property
    def status(self) -> bytes:
        return self.data.split(b"\r\n", 1)[0]


def _watch(
    sock: socket.socket, *, trickle: bytes = b"", gap: float = 0.1, limit_s: float = 6.0
) -> Outcome:
    """Read until the server closes ``sock`` (or ``limit_s`` passes), sending ``trickle``
    one byte every ``gap`` seconds meanwhile, as a slowloris client does."""
    started = time.monotonic()
    data = b""
    sent = 0
    next_send = started
    while (now := time.monotonic()) - started < limit_s:
        if sent < len(trickle) and now >= next_send:
            try:
                sock.sendall(trickle[sent : sent + 1])
            except OSError:  # reset: it was closed
                return Outcome(data, now - started)
            sent += 1
            next_send += gap
        readable, _, _ = select.select([sock], [], [], 0.02)
        if readable:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                return Outcome(data, time.monotonic() - started)
            if not chunk:
                return Outcome(data, time.monotonic() - started)
            data += chunk
    return Outcome(data, None)


def _read_one_response(sock: socket.socket) -> bytes:
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    sock.settimeout(None)
    return head


@contextmanager
def _server(served: Served, **changes: Any) -> Iterator[int]:
    app = create_app(replace(served.config, **changes))
    with live_server(app) as base:
        yield int(base.rsplit(":", 1)[1])


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def test_a_connection_that_sends_nothing_is_closed_within_the_header_timeout(
    served: Served,
) -> None:
    with _server(served, header_timeout_s=1.0) as port, _connect(port) as sock:
        out = _watch(sock)
    assert out.closed_after is not None, "the server held a silent connection"
    assert 0.8 < out.closed_after < 2.0, out
    assert out.data == b""  # nothing was asked: nothing to answer


def test_a_head_trickled_one_byte_at_a_time_is_cut_off_with_408(served: Served) -> None:
    slow = HEALTH.replace(b"\r\n\r\n", b"\r\nX-Pad: " + b"a" * 200 + b"\r\n\r\n")
    with _server(served, header_timeout_s=1.5) as port, _connect(port) as sock:
        sock.sendall(slow[:1])
        with _connect(port) as other:  # a normal request meanwhile is answered
            other.sendall(HEALTH)
            assert _read_one_response(other).startswith(b"HTTP/1.1 200")
        out = _watch(sock, trickle=slow[1:], gap=0.1)
    assert out.closed_after is not None, "the server held a slowloris client"
    assert out.closed_after < 2.5, out
    assert out.status == b"HTTP/1.1 408 Request Timeout", out
    assert b"connection: close" in out.data.lower()
    assert out.data.endswith(b"the request head did not arrive within 1.5 s\n")


def test_a_slow_head_on_a_kept_alive_connection_is_cut_off(served: Served) -> None:
    with _server(served, header_timeout_s=1.0, keep_alive_s=30) as port, _connect(port) as sock:
        sock.sendall(HEALTH)
        assert _read_one_response(sock).startswith(b"HTTP/1.1 200")
        out = _watch(sock, trickle=HEALTH, gap=0.2)  # the next head, slowly
    assert out.closed_after is not None and out.closed_after < 2.0, out
    assert out.status == b"HTTP/1.1 408 Request Timeout", out


def test_a_head_in_pieces_within_the_timeout_is_answered(served: Served) -> None:
    with _server(served, header_timeout_s=2.0) as port, _connect(port) as sock:
        for i in range(0, len(HEALTH), 8):
            sock.sendall(HEALTH[i : i + 8])
            time.sleep(0.05)
        assert _read_one_response(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(HEALTH)  # and the connection is kept for the next request
        assert _read_one_response(sock).startswith(b"HTTP/1.1 200")


def test_an_idle_keep_alive_connection_is_closed_after_the_keep_alive_timeout(
    served: Served,
) -> None:
    with _server(served, keep_alive_s=1, header_timeout_s=30) as port, _connect(port) as sock:
        sock.sendall(HEALTH)
        assert _read_one_response(sock).startswith(b"HTTP/1.1 200")
        out = _watch(sock)
    assert out.closed_after is not None and 0.8 < out.closed_after < 2.0, out
    assert out.data == b""


def test_a_body_no_route_reads_may_not_trickle_for_ever(served: Served) -> None:
    """The health route answers without reading the body it was sent; the body's rest
    then arrived one byte at a time, each byte cancelling uvicorn's keep-alive timer."""
    head = HEALTH.replace(b"\r\n\r\n", b"\r\nContent-Length: 100\r\n\r\n")
    with _server(served, header_timeout_s=1.0, keep_alive_s=30) as port, _connect(port) as sock:
        sock.sendall(head)
        assert _read_one_response(sock).startswith(b"HTTP/1.1 200")
        out = _watch(sock, trickle=b"x" * 100, gap=0.1)
    assert out.closed_after is not None and out.closed_after < 2.0, out


def test_connections_beyond_the_limit_are_refused_with_503(served: Served) -> None:
    with _server(served, max_connections=3, header_timeout_s=30) as port:
        held = [_connect(port) for _ in range(3)]
        try:
            for sock in held:  # each one answered, and kept open
                sock.sendall(HEALTH)
                assert _read_one_response(sock).startswith(b"HTTP/1.1 200")
            with _connect(port) as extra:
                out = _watch(extra, limit_s=3)
            assert out.status == b"HTTP/1.1 503 Service Unavailable", out
            assert out.closed_after is not None and out.closed_after < 1.0, out
            held.pop().close()
            deadline = time.monotonic() + 5
            while True:  # the server sees the close a moment later
                with _connect(port) as again:
                    again.sendall(HEALTH_CLOSE)
                    status = _watch(again, limit_s=3).status
                if status == b"HTTP/1.1 200 OK" or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert status == b"HTTP/1.1 200 OK"
        finally:
            for sock in held:
                sock.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_aborist_serve_sets_the_limits_in_every_worker(served: Served, workers: int) -> None:
    """The options reach uvicorn in the one process and in each worker process."""
    env = {"ABORIST_DB_URL": served.url, "ABORIST_SHARD_DIR": str(served.shards)}
    args = ["--header-timeout", "1", "--body-timeout", "1", "--max-connections", "8",
            "--max-head", "2048", "--send-timeout", "1"]  # fmt: skip
    with serve_process(env, workers=workers, args=args) as base:
        port = int(base.rsplit(":", 1)[1])
        with _connect(port) as silent:
            out = _watch(silent)
        assert out.closed_after is not None and out.closed_after < 2.0, out
        with _connect(port) as slow_body:
            slow_body.sendall(
                b"POST /api/v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
            )
            out = _watch(slow_body)
        assert out.status == b"HTTP/1.1 408 Request Timeout", out
        assert out.closed_after is not None and out.closed_after < 2.0, out
        with _connect(port) as large:
            large.sendall(_head_of(2049))
            assert _watch(large).status == b"HTTP/1.1 431 Request Header Fields Too Large"
        with _reader(port) as stalled:
            stalled.sendall(OPENAPI * 300)
            time.sleep(3.0)
            data, end = _drain(stalled)
        assert end in ("reset", "closed") and data.count(b"HTTP/1.1 200 OK") < 300, end
        with _connect(port) as normal:
            normal.sendall(HEALTH_CLOSE)
            assert _watch(normal).status == b"HTTP/1.1 200 OK"


# the head's size (a head that arrives whole in one read was not bounded)


def _head_of(size: int) -> bytes:
    """A health request whose head is exactly ``size`` bytes, the blank line included."""
    base = HEALTH_CLOSE.replace(b"\r\n\r\n", b"\r\nX-Pad: \r\n\r\n")
    pad = size - len(base)
    assert pad >= 0
    return base.replace(b"X-Pad: ", b"X-Pad: " + b"a" * pad)


@contextmanager
def _server_log() -> Iterator[list[logging.LogRecord]]:
    """The records uvicorn and asyncio log meanwhile (asyncio logs an exception raised in
    a protocol callback, with its traceback, as "Fatal error: protocol..."). Entered
    after the server is made: uvicorn's logging set-up drops the handlers it finds."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(logging.WARNING)
    loggers = [logging.getLogger(name) for name in ("asyncio", "uvicorn.error")]
    for lg in loggers:
        lg.addHandler(handler)
    try:
        yield records
    finally:
        for lg in loggers:
            lg.removeHandler(handler)


def _no_traceback(records: list[logging.LogRecord]) -> None:
    bad = [r.getMessage() for r in records if r.exc_info or r.levelno >= logging.ERROR]
    assert not bad, bad


@pytest.mark.parametrize("size", [20 * 1024, 64 * 1024, 200 * 1024])
def test_a_head_over_the_limit_sent_in_one_write_is_refused_with_431(
    served: Served, size: int
) -> None:
    """h11 bounds a head only while it is incomplete: 20 KiB and 64 KiB in one write
    were answered 200 (200 KiB took several reads and got uvicorn's 400)."""
    with _server(served) as port, _server_log() as log:
        with _connect(port) as sock:
            sock.sendall(_head_of(size))
            out = _watch(sock, limit_s=5)
        assert out.status == b"HTTP/1.1 431 Request Header Fields Too Large", out
        assert out.data.endswith(b"\r\n\r\nthe request head exceeds 16384 bytes\n"), out
        assert b"\r\nconnection: close\r\n" in out.data.lower()
        assert out.closed_after is not None and out.closed_after < 1.0, out
        with _connect(port) as normal:  # and the server serves the next client
            normal.sendall(HEALTH_CLOSE)
            assert _watch(normal).status == b"HTTP/1.1 200 OK"
    _no_traceback(log)


def test_the_head_limit_counts_every_byte_of_the_head_however_it_arrives(
    served: Served,
) -> None:
    """The limit is the head's size in bytes (request line to the blank line, inclusive):
    a head of exactly the limit is answered, one byte more is refused, in one write, in
    pieces, or as many small headers."""
    with _server(served, max_head_bytes=2048) as port:
        for head, status in ((_head_of(2048), b"200 OK"),
                             (_head_of(2049), b"431 Request Header Fields Too Large")):  # fmt: skip
            with _connect(port) as sock:
                sock.sendall(head)
                assert _watch(sock).status == b"HTTP/1.1 " + status
            with _connect(port) as sock:  # in pieces: several reads
                for i in range(0, len(head), 300):
                    sock.sendall(head[i : i + 300])
                    time.sleep(0.02)
                assert _watch(sock).status == b"HTTP/1.1 " + status
        many = HEALTH_CLOSE.replace(
            b"\r\n\r\n", b"\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(400)) + b"\r\n"
        )
        assert len(many) > 2048
        with _connect(port) as sock:
            sock.sendall(many)
            out = _watch(sock)
        assert out.status == b"HTTP/1.1 431 Request Header Fields Too Large", out
        assert out.data.endswith(b"the request head exceeds 2048 bytes\n")


def test_an_oversized_pipelined_head_is_refused_after_the_answer_before_it(
    served: Served,
) -> None:
    """A head parsed from the buffer when the response before it completes (not from a
    read) is measured too."""
    with _server(served, max_head_bytes=2048) as port, _connect(port) as sock:
        sock.sendall(HEALTH + _head_of(4096))
        out = _watch(sock)
    statuses = re.findall(rb"HTTP/1\.1 \d{3} [^\r]*", out.data)
    assert statuses == [b"HTTP/1.1 200 OK", b"HTTP/1.1 431 Request Header Fields Too Large"]
    assert out.closed_after is not None and out.closed_after < 1.0, out


# a pipelined partial head


def test_a_pipelined_partial_head_gets_408_at_the_header_timeout(served: Served) -> None:
    """The second head, incomplete, arrived with the first request: it sat in the buffer
    when the first response was sent and no byte arrived after, so uvicorn's keep-alive
    timer, shorter than the header timeout (5 s and 10 s by default), closed the
    connection without a 408."""
    partial = HEALTH[:20]
    with _server(served, header_timeout_s=2.0, keep_alive_s=1.0) as port, _connect(port) as sock:
        sock.sendall(HEALTH + partial)
        out = _watch(sock, limit_s=5)
    assert out.data.startswith(b"HTTP/1.1 200 OK"), out
    assert b"HTTP/1.1 408 Request Timeout" in out.data, out
    assert out.data.endswith(b"the request head did not arrive within 2 s\n"), out
    assert out.closed_after is not None and 1.8 < out.closed_after < 3.0, out


def test_a_pipelined_partial_head_completed_in_time_is_answered(served: Served) -> None:
    with _server(served, header_timeout_s=2.0, keep_alive_s=0.5) as port, _connect(port) as sock:
        sock.sendall(HEALTH + HEALTH_CLOSE[:20])
        time.sleep(1.0)  # past the keep-alive timeout: it is a head, not an idle connection
        sock.sendall(HEALTH_CLOSE[20:])
        out = _watch(sock, limit_s=5)
    assert out.data.count(b"HTTP/1.1 200 OK") == 2, out
    assert out.closed_after is not None and out.closed_after < 1.5, out


# a protocol error once the response has begun


def test_a_malformed_body_after_the_response_closes_without_a_traceback(
    served: Served,
) -> None:
    """The health route answers without reading its chunked body; a malformed chunk then
    made uvicorn try to send a 400 on a connection whose response was sent, and h11's
    refusal was logged as "Fatal error: protocol.data_received() call failed" with a
    traceback."""
    head = HEALTH.replace(b"\r\n\r\n", b"\r\nTransfer-Encoding: chunked\r\n\r\n")
    with _server(served) as port, _server_log() as log:
        for later in (b"zz\r\n\r\n", b"1" * 70000):  # not hex; a chunk-size line too long
            with _connect(port) as sock:
                sock.sendall(head)
                assert _read_one_response(sock).startswith(b"HTTP/1.1 200")
                sock.sendall(later)
                out = _watch(sock, limit_s=5)
            assert out.closed_after is not None and out.closed_after < 1.0, out
            assert out.data == b"", out  # nothing more: the response was already given
        with _connect(port) as normal:
            normal.sendall(HEALTH_CLOSE)
            assert _watch(normal).status == b"HTTP/1.1 200 OK"
    _no_traceback(log)


# a client that does not read its response


OPENAPI = b"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def _reader(port: int) -> socket.socket:
    """A client with a small receive buffer, so the server's output backs up soon."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    return sock


def _drain(sock: socket.socket, *, pause: float = 0.0, limit_s: float = 20.0) -> tuple[bytes, str]:
    """Read to the end (``pause`` s between reads of 4 KiB): the bytes and how it ended."""
    data = b""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:
            return data, "reset"
        except TimeoutError:
            return data, "open"
        if not chunk:
            return data, "closed"
        data += chunk
        time.sleep(pause)
    return data, "open"


def test_a_client_that_stops_reading_is_cut_off_after_the_send_timeout(
    served: Served,
) -> None:
    """300 pipelined requests for the OpenAPI schema (~5 MB, more than the kernel's
    buffers hold), none of it read: the server's output backed up and the connection
    stayed open for ever (the keep-alive timer never runs while a response is unsent,
    and closing waits for it)."""
    count = 300
    with _server(served, send_timeout_s=1.0, keep_alive_s=30) as port, _server_log() as log:
        with _reader(port) as sock:
            sock.sendall(OPENAPI * count)
            time.sleep(3.0)  # reads nothing for three send timeouts
            data, end = _drain(sock)
        assert end in ("reset", "closed"), end
        assert data.count(b"HTTP/1.1 200 OK") < count, "the whole output waited for the client"
        with _connect(port) as normal:
            normal.sendall(HEALTH_CLOSE)
            assert _watch(normal).status == b"HTTP/1.1 200 OK"
    assert any("did not move for 1 s" in r.getMessage() for r in log), log
    _no_traceback(log)


def test_a_client_that_reads_slowly_but_steadily_gets_everything(served: Served) -> None:
    """Progress is the unsent output shrinking: a client reading 4 KiB every 0.1 s takes
    far longer than the send timeout over the whole output, and is not cut off; nor is
    one that pauses for less than the send timeout."""
    count = 10
    with _server(served, send_timeout_s=1.0, keep_alive_s=30) as port, _reader(port) as sock:
        sock.sendall(
            OPENAPI * (count - 1) + OPENAPI.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")
        )
        time.sleep(0.6)
        started = time.monotonic()
        data, end = _drain(sock, pause=0.1, limit_s=60)
        took = time.monotonic() - started
    assert end == "closed", end
    assert data.count(b"HTTP/1.1 200 OK") == count
    assert took > 2.0, took  # the test measured what it claims: slower than the timeout


@contextmanager
def _one_response_server(served: Served, body: bytes, **changes: Any) -> Iterator[int]:
    """A server with ``aborist serve``'s connection options whose one route answers
    ``body`` in a single message (larger than the kernel's buffers, so the part the
    kernel holds matters)."""
    import threading

    import uvicorn

    from aborist.server.connections import uvicorn_options

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        length = str(len(body)).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", length)]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})

    options = uvicorn_options(replace(served.config, **changes))
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                            lifespan="off", **options)  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_a_steady_reader_of_one_large_response_is_not_cut_off(served: Served) -> None:
    """Progress counts what the client takes, not only the server's own buffer: an 8 MiB
    response read at about 300 KB/s with a 2 s send timeout. The server's buffer shrinks
    only when the kernel's send queue (megabytes on loopback) frees a large part, so the
    connection was cut off after 2 s although the client never stopped reading."""
    with (
        _one_response_server(served, b"x" * (8 << 20), send_timeout_s=2.0) as port,
        _server_log() as log,
    ):
        with _connect(port) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            got, started = 0, time.monotonic()
            while time.monotonic() - started < 7.0:  # three and a half send timeouts
                chunk = sock.recv(30_000)
                assert chunk, "the server closed a connection that was reading"
                got += len(chunk)
                time.sleep(0.1)
        assert got > 1_000_000  # it read all along
    assert not any("did not move" in r.getMessage() for r in log), [r.getMessage() for r in log]
    _no_traceback(log)
