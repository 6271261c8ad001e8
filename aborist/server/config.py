"""What one server instance is configured with, and the bind rule: loopback by default, a
public address only with a token (docs/serve.md, "Authentication")."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aborist.clients.base import ChatClient
from aborist.errors import AboristError

if TYPE_CHECKING:
    from aborist.server.tlog import LogSigning
    from ledger.tlog.witness import Witness

__all__ = [
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_HEADER_TIMEOUT_S",
    "DEFAULT_HOST",
    "DEFAULT_KEEP_ALIVE_S",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_HEAD_BYTES",
    "DEFAULT_PORT",
    "DEFAULT_SEND_TIMEOUT_S",
    "DEFAULT_SESSION_TTL_S",
    "LOG_KEY_ENV",
    "TOKEN_ENV",
    "WITNESS_KEY_ENV",
    "WITNESS_LOGS_ENV",
    "WITNESS_STATE_ENV",
    "BindRefusedError",
    "ServerConfig",
    "check_bind",
    "is_loopback",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8420
#: A request body larger than this is refused with 413 before it is read in full.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
#: A request body still arriving after this many seconds is refused with 408.
DEFAULT_BODY_TIMEOUT_S = 30.0
#: A request head (request line and headers) still arriving after this many seconds is
#: answered 408 and its connection closed; a connection that sends nothing is closed.
DEFAULT_HEADER_TIMEOUT_S = 10.0
#: A request head (request line, headers and the blank line ending them) larger than this
#: is answered 431 and its connection closed, whether it arrived in one read or in many.
DEFAULT_MAX_HEAD_BYTES = 16 * 1024
#: A connection whose unsent response has not shrunk for this many seconds (a client that
#: reads it slowly, or never) is closed, the rest of the response dropped.
DEFAULT_SEND_TIMEOUT_S = 30.0
#: An idle keep-alive connection is closed after this many seconds.
DEFAULT_KEEP_ALIVE_S = 5.0
#: Open connections per worker process; one more is refused with 503 when accepted.
DEFAULT_MAX_CONNECTIONS = 256
#: A page login lasts this long (seconds), unless signed out or revoked first.
DEFAULT_SESSION_TTL_S = 12 * 3600.0
#: The environment variable holding the API token (never logged, never recorded).
TOKEN_ENV = "ABORIST_API_TOKEN"
#: The key files of ``aborist serve``'s transparency-log side (docs/serve.md, "Checkpoints
#: and the witness"): paths only, never a key.
LOG_KEY_ENV = "ABORIST_LOG_KEY"
WITNESS_KEY_ENV = "ABORIST_WITNESS_KEY"
WITNESS_STATE_ENV = "ABORIST_WITNESS_STATE_DIR"
WITNESS_LOGS_ENV = "ABORIST_WITNESS_LOGS"
#: Host names that are loopback without a DNS lookup.
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
#: The shortest token accepted: a short one is guessable however it is compared.
MIN_TOKEN_LENGTH = 16


class BindRefusedError(AboristError):
    """A non-loopback address was asked for without a token, or the token is too short."""


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and the loopback host names; False for anything else,
    including ``0.0.0.0`` and ``::`` (every interface)."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse a public bind without a token, and any token too short to resist guessing."""
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise BindRefusedError(
            f"the API token must be at least {MIN_TOKEN_LENGTH} characters; found {len(token)}"
        )
    if token is None and not is_loopback(host):
        raise BindRefusedError(
            f"refusing to listen on {host}, which is not a loopback address, without a token: "
            f"set {TOKEN_ENV} or pass --token (docs/serve.md, 'Authentication')"
        )


def _extractive() -> ChatClient:
    from aborist.clients.extractive import ExtractiveClient

    return ExtractiveClient()


@dataclass(frozen=True)
class ServerConfig:
    """``ledger_url`` and ``shards_dir`` as the CLI resolves them (:mod:`aborist.settings`);
    ``client_factory`` makes the answerer for one request (a new client per request, so
    no connection state is shared between requests); ``token`` switches authentication on."""

    ledger_url: str
    shards_dir: Path
    client_factory: Callable[[], ChatClient] = field(default=_extractive)
    token: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    #: Seconds a request body may take to arrive in full (408 after): a client that
    #: sends its headers and then a byte now and then would otherwise hold a worker.
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S
    #: Seconds a request head may take to arrive in full, from the connection's opening
    #: or the head's first byte (408 and closed after; :mod:`aborist.server.connections`).
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    #: Bytes a request head may have (431 and closed above; the same module).
    max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES
    #: Seconds a connection's unsent response may go without shrinking (closed after;
    #: the same module).
    send_timeout_s: float = DEFAULT_SEND_TIMEOUT_S
    #: Seconds an idle keep-alive connection stays open (uvicorn's ``timeout_keep_alive``).
    keep_alive_s: float = DEFAULT_KEEP_ALIVE_S
    #: Open connections per worker; a connection beyond it gets 503 and is closed
    #: (None: no limit).
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS
    #: Seconds a page login lasts at most (:mod:`aborist.server.sessions`).
    session_ttl_s: float = DEFAULT_SESSION_TTL_S
    #: Where page sessions are shared between worker processes (None: in memory).
    sessions_dir: Path | None = None
    #: Where replay jobs are shared between worker processes (None: in memory).
    replay_jobs_dir: Path | None = None
    #: Host headers accepted when no token is configured (a DNS-rebinding page sends its
    #: own host name, so it is refused); with a token, every host is accepted.
    allowed_hosts: frozenset[str] = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
    #: The log key that signs ``GET /api/v1/checkpoint`` (None: served unsigned).
    log_signing: LogSigning | None = field(default=None, repr=False)
    #: A witness mounted at ``/witness`` (None: no witness routes).
    witness: Witness | None = field(default=None, repr=False)
