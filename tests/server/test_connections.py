"""Connection limits of `aborist serve`, on a real uvicorn on loopback (docs/serve.md,
"Limits"): a connection that sends nothing, or trickles its request head, is cut off
within the header timeout (uvicorn held it for ever); an idle keep-alive connection is
closed after the keep-alive timeout; a body nobody reads may not trickle for ever either;
connections beyond the limit are refused with 503; a normal request still works."""

from __future__ import annotations

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
    args = ["--header-timeout", "1", "--body-timeout", "1", "--max-connections", "8"]
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
        with _connect(port) as normal:
            normal.sendall(HEALTH_CLOSE)
            assert _watch(normal).status == b"HTTP/1.1 200 OK"
