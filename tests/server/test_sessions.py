"""Page logins are sessions the server holds, on a real server on loopback (docs/serve.md,
"Authentication"): signing out forgets the session, so a kept or copied cookie opens
nothing; "sign out everywhere" and ``POST /api/v1/sessions/revoke`` forget them all; a
session expires; a restart forgets them; workers share them. The cookie used to be an
HMAC of the token: one value for every login, valid until the token changed."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import httpx

from aborist.server import create_app
from aborist.server.security import SESSION_COOKIE
from tests.server.conftest import TOKEN, Dom, Served, assert_inert
from tests.server.live import live_server, serve_process

BEARER = {"authorization": f"Bearer {TOKEN}"}


@contextmanager
def _server(served: Served, **changes: Any) -> Iterator[str]:
    with live_server(create_app(replace(served.config, **changes))) as base:
        yield base


@contextmanager
def _login(base: str) -> Iterator[httpx.Client]:
    """A browser that signed in (a fresh connection pool, its own cookie jar)."""
    with httpx.Client(base_url=base, timeout=30) as c:
        r = c.post("/login", data={"token": TOKEN, "next": "/runs"})
        assert r.status_code == 303 and r.headers["location"] == "/runs", r.text
        assert c.get("/runs").status_code == 200
        yield c


def _with_cookie(base: str, value: str) -> httpx.Client:
    """Another browser holding a copy of that cookie."""
    return httpx.Client(base_url=base, timeout=30, cookies={SESSION_COOKIE: value})


def _refused(c: httpx.Client) -> bool:
    r = c.get("/runs")
    return r.status_code == 303 and r.headers["location"] == "/login?next=/runs"


def test_signing_out_revokes_the_session_for_every_copy_of_its_cookie(guarded: Served) -> None:
    with _server(guarded) as base, _login(base) as alice, _login(base) as bob:
        cookie = alice.cookies[SESSION_COOKIE]
        assert cookie != bob.cookies[SESSION_COOKIE]  # one session per login
        assert TOKEN not in cookie
        with _with_cookie(base, cookie) as thief:
            assert not _refused(thief)  # a copy works while the session lives
            r = alice.post("/logout", data={})
            assert r.status_code == 303 and r.headers["location"] == "/login"
            assert SESSION_COOKIE not in alice.cookies  # the browser is told to drop it
            assert _refused(thief)  # and the copy it kept is refused: server side
        with _with_cookie(base, cookie) as later:
            assert _refused(later)
        assert not _refused(bob)  # another login is not signed out


def test_sign_out_everywhere_revokes_every_session(guarded: Served) -> None:
    with _server(guarded) as base, _login(base) as alice, _login(base) as bob:
        r = alice.post("/logout", data={"everywhere": "1"})
        assert r.status_code == 303
        assert _refused(alice) and _refused(bob)
        with _login(base) as again:  # the token still signs in
            assert not _refused(again)


def test_the_api_revokes_every_session_and_the_token_still_works(guarded: Served) -> None:
    with (
        _server(guarded) as base,
        _login(base) as alice,
        _login(base) as bob,
        httpx.Client(base_url=base, timeout=30) as api,
    ):
        assert api.post("/api/v1/sessions/revoke").status_code == 401  # needs the token
        r = api.post("/api/v1/sessions/revoke", headers=BEARER)
        assert r.status_code == 200 and r.json() == {"revoked": 2}
        assert _refused(alice) and _refused(bob)
        assert api.get("/api/v1/runs", headers=BEARER).status_code == 200


def test_a_logout_from_another_site_is_refused(guarded: Served) -> None:
    with _server(guarded) as base, _login(base) as alice:
        r = alice.post("/logout", data={"everywhere": "1"},
                       headers={"origin": "http://evil.example"})  # fmt: skip
        assert r.status_code == 403
        assert not _refused(alice)


def test_a_session_expires(guarded: Served) -> None:
    with _server(guarded, session_ttl_s=1.0) as base, _login(base) as alice:
        time.sleep(1.2)
        assert _refused(alice)


def test_a_restart_forgets_the_sessions_and_the_old_token_hmac_opens_nothing(
    guarded: Served,
) -> None:
    with _server(guarded) as base, _login(base) as alice:
        cookie = alice.cookies[SESSION_COOKIE]
    legacy = hmac.new(TOKEN.encode(), b"aborist-session-v1", hashlib.sha256).hexdigest()
    with _server(guarded) as base:
        for value in (cookie, legacy):  # legacy: what the cookie used to be
            with _with_cookie(base, value) as c:
                assert _refused(c), value


def test_the_pages_offer_a_sign_out_only_with_a_token(guarded: Served, served: Served) -> None:
    with _server(guarded) as base, _login(base) as alice:
        form = assert_inert(alice.get("/runs").text).by_id("signout")
        assert (form.tag, form.attrs["action"], form.attrs["method"]) == ("form", "/logout", "post")
    with _server(served) as base, httpx.Client(base_url=base) as c:
        assert not [n for n in Dom(c.get("/runs").text).all if n.attrs.get("id") == "signout"]


def test_a_session_signed_out_on_one_worker_is_refused_by_every_worker(
    guarded: Served,
) -> None:
    env = {"ABORIST_DB_URL": guarded.url, "ABORIST_SHARD_DIR": str(guarded.shards),
           "ABORIST_API_TOKEN": TOKEN}  # fmt: skip
    with serve_process(env, workers=2) as base, _login(base) as alice:
        cookie = alice.cookies[SESSION_COOKIE]
        # each request on a new connection, so that both workers answer some of them
        for _ in range(10):
            with _with_cookie(base, cookie) as copy:
                assert not _refused(copy)
        assert alice.post("/logout", data={}).status_code == 303
        for _ in range(10):
            with _with_cookie(base, cookie) as copy:
                assert _refused(copy)
