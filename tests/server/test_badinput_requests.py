"""Bad HTTP requests to `aborist serve`, on a real uvicorn on loopback: a body that never
finishes arriving gets 408 within the body timeout (it used to hold the connection, and a
worker's attention, for as long as the client liked), and a run filter naming no label,
audit mode or status is a 400 rather than an empty page that reads as "no such runs"."""

from __future__ import annotations

import json
import socket
import time
from dataclasses import replace

import pytest

from aborist.server import create_app
from tests.server.conftest import Served
from tests.server.live import live_server


def _read_response(sock: socket.socket, limit_s: float) -> bytes:
    sock.settimeout(limit_s)
    out = b""
    while b"\r\n\r\n" not in out or not out.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        out += chunk
    return out


def test_a_request_body_that_stops_arriving_is_refused_with_408(served: Served) -> None:
    app = create_app(replace(served.config, body_timeout_s=0.5))
    with live_server(app) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            started = time.monotonic()
            sock.sendall(
                b"POST /api/v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                b'{"quest'
            )
            reply = _read_response(sock, limit_s=10)
            elapsed = time.monotonic() - started
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), reply
    assert json.loads(body) == {
        "error": "timeout",
        "detail": "the request body did not arrive within 0.5 s",
    }
    assert 0.4 < elapsed < 5


@pytest.mark.parametrize("trickle", [False, True])
def test_the_408_closes_the_connection_within_the_body_timeout(
    served: Served, trickle: bool
) -> None:
    """The 408 was written on time but the connection stayed open: until uvicorn's
    keep-alive timer closed it 5 s later (a 30 s body timeout read as ~35 s by a client
    waiting for the end of the response), and for ever while the client kept sending a
    byte now and then (each byte cancelled that timer)."""
    from tests.server.test_connections import _watch

    app = create_app(replace(served.config, body_timeout_s=1.0, header_timeout_s=30))
    with live_server(app) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                b"POST /api/v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
            )
            out = _watch(sock, trickle=b" " * 200 if trickle else b"", gap=0.2, limit_s=8)
    assert out.status == b"HTTP/1.1 408 Request Timeout", out
    assert b"\r\nconnection: close\r\n" in out.data.lower(), out
    assert out.closed_after is not None and 0.9 < out.closed_after < 2.0, out


def test_a_body_that_arrives_in_time_is_answered(served: Served) -> None:
    app = create_app(replace(served.config, body_timeout_s=5))
    with live_server(app) as base:
        port = int(base.rsplit(":", 1)[1])
        body = json.dumps({"answer": "Bees dance.", "evidence": ["Bees dance."]}).encode()
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                b"POST /api/v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            )
            for i in range(0, len(body), 10):  # in pieces, well within the timeout
                sock.sendall(body[i : i + 10])
                time.sleep(0.01)
            reply = _read_response(sock, limit_s=10)
    head, _, payload = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), reply
    assert json.loads(payload)["label"] == "VERIFIED"


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("label=xx", "label must be one of VERIFIED, SUPPORTED, PARTIAL, UNSUPPORTED; found 'xx'"),
        ("audit_mode=LOOSE", "audit_mode must be one of STRICT, HYBRID, UNGROUNDED"),
        ("status=done", "status must be one of started, completed, cached, failed"),
    ],
)
def test_a_run_filter_naming_nothing_is_a_400(served: Served, query: str, detail: str) -> None:
    r = served.client.get(f"/api/v1/runs?{query}")
    assert r.status_code == 400
    assert r.json()["error"] == "bad_request" and r.json()["detail"].startswith(detail)


def test_run_filters_still_match_in_any_case(served: Served) -> None:
    served.client.post("/api/v1/query", json={"question": "How long is the Silverrun River?"})
    for query in ("label=verified", "label=VERIFIED", "audit_mode=strict", "status=completed"):
        r = served.client.get(f"/api/v1/runs?{query}")
        assert r.status_code == 200 and len(r.json()["runs"]) == 1, (query, r.text)


def test_serve_on_a_port_in_use_is_one_line_before_any_banner(ledger_url: str) -> None:
    """It printed "aborist serve: http://…" and then uvicorn's "[Errno 98] … address
    already in use" log line, exit 3."""
    from click.testing import CliRunner

    from cli.main import cli

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", "--port", str(port), "--db", ledger_url])
    assert result.exit_code == 1, result.output
    assert result.stderr == f"Error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
