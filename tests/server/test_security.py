"""The guard: the bind rule, the bearer token on /api, the pages' login, the Host check,
cross-origin forms, the security headers, and the token kept out of logs and the ledger."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from click.testing import CliRunner

from aborist.server.config import BindRefusedError, check_bind, is_loopback
from aborist.server.security import SESSION_COOKIE
from cli.main import cli
from ledger.store import Ledger
from tests.server.conftest import TOKEN, Client, Served

Q = "How long is the Silverrun River?"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"])
def test_loopback_needs_no_token(host: str) -> None:
    assert is_loopback(host)
    check_bind(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.org", ""])
def test_public_bind_without_token_is_refused(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(BindRefusedError, match="not a loopback address"):
        check_bind(host, None)
    check_bind(host, TOKEN)


def test_short_token_is_refused() -> None:
    with pytest.raises(BindRefusedError, match="at least 16"):
        check_bind("127.0.0.1", "short")


def test_serve_refuses_public_bind_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ABORIST_API_TOKEN", raising=False)
    r = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"])
    assert r.exit_code == 2
    assert "not a loopback address" in r.output and "Traceback" not in r.output


def test_api_needs_the_bearer_token(guarded: Served) -> None:
    c = guarded.client
    assert c.get("/api/v1/health").status_code == 200  # liveness stays open
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": TOKEN},
                    {"authorization": f"Basic {TOKEN}"}):  # fmt: skip
        r = c.get("/api/v1/runs", headers=headers)
        assert r.status_code == 401 and r.json()["error"] == "unauthorized"
        assert r.headers["www-authenticate"] == "Bearer"
    ok = c.get("/api/v1/runs", headers={"authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200
    # a page's login cookie is not an API credential
    assert c.post("/login", data={"token": TOKEN}).status_code == 303
    assert SESSION_COOKIE in c.cookies
    assert c.get("/api/v1/runs").status_code == 401


def test_pages_need_a_login(guarded: Served) -> None:
    c = guarded.client
    r = c.get("/runs")
    assert r.status_code == 303 and r.headers["location"] == "/login?next=/runs"
    assert c.get("/login").status_code == 200
    bad = c.post("/login", data={"token": "wrong", "next": "/runs"})
    assert bad.status_code == 401 and SESSION_COOKIE not in c.cookies
    good = c.post("/login", data={"token": TOKEN, "next": "/runs"})
    assert good.status_code == 303 and good.headers["location"] == "/runs"
    cookie = good.headers["set-cookie"]
    assert TOKEN not in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert c.get("/runs").status_code == 200
    away = c.post("/login", data={"token": TOKEN, "next": "//evil.example/"})
    assert away.headers["location"] == "/"  # no open redirect


def test_host_check_without_a_token(served: Served) -> None:
    rebound = Client(served.client.app, base_url="http://evil.example")
    r = rebound.get("/api/v1/health")
    assert r.status_code == 400 and r.json()["error"] == "bad_host"
    assert rebound.get("/").status_code == 400
    ok = Client(served.client.app, base_url="http://localhost:8420")
    assert ok.get("/api/v1/health").status_code == 200


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8420@evil.example", "localhost:abc", "[::1]@evil.example", "[::1]:80x"]
)
def test_a_host_header_with_more_than_a_port_after_the_name_is_refused(
    served: Served, host: str
) -> None:
    r = served.client.get("/api/v1/health", headers={"host": host})
    assert r.status_code == 400 and r.json()["error"] == "bad_host"
    for fine in ("127.0.0.1:8420", "[::1]:8420", "localhost"):
        assert served.client.get("/api/v1/health", headers={"host": fine}).status_code == 200


def test_cross_origin_form_is_refused(served: Served) -> None:
    c = served.client
    r = c.post("/ask", data={"question": Q}, headers={"origin": "http://evil.example"})
    assert r.status_code == 403
    r = c.post("/ledger/replay", headers={"referer": "http://evil.example/page"})
    assert r.status_code == 403
    same = c.post("/ask", data={"question": Q}, headers={"origin": "http://127.0.0.1"})
    assert same.status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example"},
        {"referer": "http://evil.example/page"},
        {"sec-fetch-site": "cross-site"},
        {"origin": "null"},
    ],
)
def test_a_cross_site_request_to_the_api_changes_nothing(
    served: Served, headers: dict[str, str]
) -> None:
    """Without a token, a page on another site could make the visitor's browser post a
    question to the loopback server (a simple request needs no preflight; FastAPI before
    0.132 reads a body with no content type as JSON): a run recorded
    in the append-only ledger and a model called by someone else's page."""
    c = served.client
    with Ledger.open(served.url) as lg:
        before = lg.head()[0]
    posts: list[tuple[str, dict[str, Any]]] = [
        ("/api/v1/query", {"json": {"question": Q}}),
        ("/api/v1/verify", {"json": {"answer": "x", "evidence": ["x"]}}),
        ("/api/v1/sessions/revoke", {}),
        ("/witness/add-checkpoint", {"content": b"x"}),
    ]
    for path, kw in posts:
        r = c.post(path, headers=headers, **kw)
        assert r.status_code == 403, (path, r.text)
        assert r.json() == {"error": "cross_origin",
                            "detail": "a request from another site's page is refused"}  # fmt: skip
    with Ledger.open(served.url) as lg:
        assert lg.head()[0] == before
    assert c.get("/api/v1/runs", headers=headers).status_code == 200  # reading is not refused
    same = c.post("/api/v1/query", json={"question": Q}, headers={"origin": "http://127.0.0.1"})
    assert same.status_code == 200  # nor this server's own origin, nor a client that names none
    assert c.post("/api/v1/query", json={"question": Q}).status_code == 200


def test_security_headers(served: Served) -> None:
    page = served.client.get("/")
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert "form-action 'self'" in csp and "frame-ancestors 'none'" in csp
    api = served.client.get("/api/v1/health")
    for r in (page, api):
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-frame-options"] == "DENY"
    assert served.client.get("/docs").status_code == 404  # no CDN-loaded API explorer


def test_token_is_never_logged_or_recorded(
    guarded: Served, caplog: pytest.LogCaptureFixture, pipeline_ledger: Ledger
) -> None:
    caplog.set_level(logging.DEBUG)
    c = guarded.client
    auth = {"authorization": f"Bearer {TOKEN}"}
    r = c.post("/api/v1/query", json={"question": Q}, headers=auth)
    assert r.status_code == 200
    c.post("/login", data={"token": TOKEN})
    c.post("/ask", data={"question": Q})
    c.get("/api/v1/runs", headers={"authorization": "Bearer " + TOKEN[:-1]})
    assert TOKEN not in caplog.text
    for ev in pipeline_ledger.iter_events():
        assert TOKEN not in ev.payload
    blobs = pipeline_ledger.fetch("SELECT bytes FROM blobs")
    assert blobs and all(TOKEN.encode() not in bytes(b[0]) for b in blobs)
