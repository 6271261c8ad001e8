"""One deadline for a whole HTTP exchange with the model server: connecting, sending the
request, the response's headers and its body.

httpx's timeouts are per network operation: a server that sends its status line and
headers a byte at a time, each byte within the read timeout, is never timed out (nor was
one trickling its body, which :meth:`aborist.clients.http.HTTPChatClient._post` already
bounded by checking the clock between chunks; the headers arrive before any chunk).
:func:`bound_client` puts every connection of an ``httpx.Client`` behind a network
backend that gives each read, write and connect at most the time left before the
deadline of the exchange in progress, set by :func:`deadline` around it; past the
deadline the next operation raises ``httpcore.ReadTimeout``, which httpx raises as
:class:`httpx.ReadTimeout`: the retry loop treats it as any timeout.
"""

from __future__ import annotations

import ssl
import time
import typing
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpcore
import httpx

__all__ = ["DEADLINE_PASSED", "bound_client", "deadline"]

DEADLINE_PASSED = "the whole exchange did not finish within its deadline"

_DEADLINE: ContextVar[float | None] = ContextVar("aborist_http_deadline", default=None)


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Every network operation of a bound client inside the block ends within ``seconds``
    from now, all of them together (None: no deadline)."""
    token = _DEADLINE.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(timeout: float | None) -> float | None:
    """``timeout`` cut to the time left before the deadline; past it, ReadTimeout."""
    end = _DEADLINE.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout(DEADLINE_PASSED)
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


_Options = Iterable[typing.Any] | None


class _Backend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: _Options = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, _left(timeout), local_address, socket_options)
        return _Stream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: _Options = None
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bound_client(client: httpx.Client) -> int:
    """Put the connection pools of ``client``'s network transports (the default one and
    any proxy mounts from the environment) behind the deadline backend; returns how many.
    A transport of another kind (a test's ``httpx.MockTransport``) is left as it is.

    httpx offers no public way to give its transport a network backend, so this reaches
    for ``HTTPTransport._pool`` and the pool's ``_network_backend`` (httpx 0.28, httpcore
    1.0); tests/clients/test_client_deadline.py fails if that stops working."""
    pools = [getattr(t, "_pool", None) for t in (client._transport, *client._mounts.values())]
    bound = 0
    for pool in pools:
        backend = getattr(pool, "_network_backend", None)
        if isinstance(backend, httpcore.NetworkBackend):
            if not isinstance(backend, _Backend):
                pool._network_backend = _Backend(backend)  # type: ignore[union-attr]
            bound += 1
    return bound
