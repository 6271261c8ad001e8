"""The server's guard, one ASGI middleware in front of every route: request size limits,
the Host check, authentication, the cross-origin check on forms and on the API's
state-changing requests, and the security headers
(docs/serve.md, "Authentication" and "Limits").

The token is compared with :func:`hmac.compare_digest` (constant time). The pages' login
cookie names a session the server holds (:mod:`aborist.server.sessions`): one the server
has forgotten (signed out, revoked, expired, or from before a restart) is sent to the
login page again. The token itself is never in a cookie, a URL, a log line or the ledger.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote, urlsplit

from aborist.server.config import ServerConfig
from aborist.server.sessions import SessionStore

__all__ = ["PAGE_CSP", "REPORT_CSP", "SESSION_COOKIE", "Guard", "session_cookie", "token_matches"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SESSION_COOKIE = "aborist_session"
#: Pages: no script at all, styles and images from this server only, forms post here only.
PAGE_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
#: The audit report carries its CSS inline (it is also a standalone file): the report's own
#: policy, plus the page rules above.
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
_OPEN_PATHS = ("/api/v1/health", "/login", "/static/", "/favicon.ico")
_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def token_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8"))


def session_cookie(cookie_header: str) -> str | None:
    """The session cookie's value in a ``Cookie`` header (None: there is none)."""
    return _cookie(cookie_header, SESSION_COOKIE)


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in scope.get("headers", []):
        out.setdefault(k.decode("latin-1").lower(), v.decode("latin-1"))
    return out


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        k, _, v = part.strip().partition("=")
        if k == name:
            return v
    return None


def _is_api(path: str) -> bool:
    """The machine endpoints: the JSON API, and the witness (called by logs, not by
    browsers): a bearer token, JSON errors."""
    return path in ("/api", "/witness") or path.startswith(("/api/", "/witness/"))


class Guard:
    """See the module docstring. Wraps the whole application (FastAPI's own error
    handling included), so nothing reaches a route that these rules refuse."""

    def __init__(
        self, app: ASGIApp, config: ServerConfig, sessions: SessionStore | None = None
    ) -> None:
        self.app = app
        self.config = config
        self.sessions = sessions or SessionStore(config.sessions_dir, config.session_ttl_s)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        headers = _headers(scope)
        refusal = self._refuse(scope, path, headers)
        if refusal is not None:
            await refusal(send)
            return
        limit = self.config.max_body_bytes
        deadline = asyncio.get_running_loop().time() + self.config.body_timeout_s
        seen = 0
        too_large = False
        too_slow = False
        body_done = False
        started = False

        async def limited_receive() -> Message:
            # Past the limit, or past the deadline with the body still arriving, the app
            # is told the client went away (whatever it makes of that is dropped below)
            # and the client gets 413 or 408.
            nonlocal seen, too_large, too_slow, body_done
            if too_large or too_slow:
                return {"type": "http.disconnect"}
            if body_done:  # later receives wait for a disconnect: no deadline on those
                return await receive()
            left = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), timeout=max(left, 0.0))
            except TimeoutError:
                too_slow = True
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
                if seen > limit:
                    too_large = True
                    return {"type": "http.disconnect"}
            return message

        async def secured_send(message: Message) -> None:
            nonlocal started
            if too_large or too_slow:
                return
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = _with_security_headers(
                    list(message.get("headers", [])), api=_is_api(path)
                )
            await send(message)

        try:
            await self.app(scope, limited_receive, secured_send)
        except Exception:
            if not (too_large or too_slow):
                raise
        if too_large and not started:
            await _error(413, "too_large", f"the request body exceeds {limit} bytes", path)(send)
        elif too_slow and not started:
            # The rest of the body is still on its way: the connection cannot carry another
            # request, so it is closed with the answer (uvicorn kept it open until its
            # keep-alive timer fired, 5 s later, and for ever while the client trickled).
            seconds = f"{self.config.body_timeout_s:g}"
            await _error(408, "timeout", f"the request body did not arrive within {seconds} s",
                         path, close=True)(send)  # fmt: skip

    def _refuse(
        self, scope: Scope, path: str, headers: dict[str, str]
    ) -> Callable[[Send], Awaitable[None]] | None:
        cfg = self.config
        host = headers.get("host", "")
        if cfg.token is None and _host_name(host) not in cfg.allowed_hosts:
            return _error(400, "bad_host", "this server answers only to loopback host names", path)
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                return _error(400, "bad_request", "Content-Length is not a number", path)
            if int(length) > cfg.max_body_bytes:
                return _error(
                    413, "too_large", f"the request body exceeds {cfg.max_body_bytes} bytes", path
                )
        method = scope.get("method", "GET")
        if method in _UNSAFE and not _same_origin(headers):
            # A page elsewhere may send a simple request (no preflight) to a loopback
            # server with no token: to the API as well as to a form (FastAPI before 0.132
            # reads a body with no content type as JSON). Only browsers say where a
            # request came from, so no API client is refused by this.
            detail = ("a request from another site's page is refused" if _is_api(path)
                      else "a form may only be posted from this server")  # fmt: skip
            return _error(403, "cross_origin", detail, path)
        if cfg.token is None or path.startswith(_OPEN_PATHS) or path == "/login":
            return None
        if _is_api(path):
            auth = headers.get("authorization", "")
            scheme, _, given = auth.partition(" ")
            if scheme.lower() == "bearer" and token_matches(given.strip(), cfg.token):
                return None
            return _error(401, "unauthorized", "send Authorization: Bearer <token>", path)
        if self.sessions.valid(session_cookie(headers.get("cookie", ""))):
            return None
        return _redirect("/login?next=" + quote(path, safe="/"))


def _host_name(host: str) -> str:
    """``host[:port]`` without the port (``[::1]:8420`` -> ``[::1]``); a port that is not
    all digits is no port, so the whole header is the name and matches no allowed host
    (``127.0.0.1:8420@evil.example`` is not ``127.0.0.1``)."""
    if host.startswith("["):
        name, close, rest = host.partition("]")
        return name + close if close and (not rest or _PORT.fullmatch(rest)) else host
    name, colon, port = host.rpartition(":")
    return name if colon and _PORT.fullmatch(":" + port) else host


#: What may follow a host name in a Host header.
_PORT = re.compile(r":[0-9]{1,5}")


def _same_origin(headers: dict[str, str]) -> bool:
    """A browser names the page a form came from in Origin (or Referer); it must be this
    server; a modern browser also says so in Sec-Fetch-Site. A request with none of
    these (curl, a script) is not a cross-site form."""
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    source = headers.get("origin") or headers.get("referer")
    if not source or source == "null":
        return source is None
    return urlsplit(source).netloc == headers.get("host", "")


def _with_security_headers(headers: list[tuple[bytes, bytes]], *, api: bool) -> list[Any]:
    names = {k.lower() for k, _ in headers}
    extra = [
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"same-origin"),
        (b"x-frame-options", b"DENY"),
        (b"cache-control", b"no-store"),
    ]
    if b"content-security-policy" not in names:
        csp = "default-src 'none'; frame-ancestors 'none'" if api else PAGE_CSP
        extra.append((b"content-security-policy", csp.encode("ascii")))
    return headers + [(k, v) for k, v in extra if k not in names]


def _error(
    status: int, error: str, detail: str, path: str, *, close: bool = False
) -> Callable[[Send], Awaitable[None]]:
    if _is_api(path):
        body = json.dumps({"error": error, "detail": detail}).encode("utf-8")
        ctype = b"application/json"
    else:
        from aborist.server.layout import error_page

        body = error_page(status, detail).encode("utf-8")
        ctype = b"text/html; charset=utf-8"

    async def respond(send: Send) -> None:
        headers = _with_security_headers(
            [(b"content-type", ctype), (b"content-length", str(len(body)).encode())],
            api=_is_api(path),
        )
        if status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        if close:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return respond


def _redirect(location: str) -> Callable[[Send], Awaitable[None]]:
    async def respond(send: Send) -> None:
        headers = _with_security_headers(
            [(b"location", location.encode("latin-1")), (b"content-length", b"0")], api=False
        )
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    return respond
