"""Connection limits uvicorn does not enforce by itself (docs/serve.md, "Limits"): a
request head must arrive in full within the header timeout, the rest of a body no route
reads must arrive within it too, and a connection beyond the connection limit is refused
as soon as it is accepted.

uvicorn (h11) closes an idle keep-alive connection after ``timeout_keep_alive``, but only
once a response has been sent, and it cancels that timer on the first byte of the next
request: a client that connects and sends nothing, or sends its request line and headers
one byte at a time, held the connection (and a file descriptor) for as long as it liked.
:class:`GuardedH11Protocol` arms its own timer whenever the connection waits for bytes
no application is waiting for, and cancels it when they have arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from aborist.server.config import ServerConfig

__all__ = ["GuardedH11Protocol", "uvicorn_options"]

_HEAD_TIMEOUT_BODY = b"the request head did not arrive within %s s\n"
_REFUSED_BODY = b"too many connections; try again later\n"


def _plain(status: bytes, body: bytes, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """A whole HTTP/1.1 response that closes the connection, written outside h11 (which
    has no request to answer yet)."""
    lines = [b"HTTP/1.1 " + status]
    lines += [k + b": " + v for k, v in default_headers]
    lines += [
        b"content-type: text/plain; charset=utf-8",
        b"content-length: " + str(len(body)).encode("ascii"),
        b"connection: close",
    ]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header timeout and a connection limit.

    The timer runs while the connection waits for bytes from the client that no
    application is reading: the first request head (from the moment the connection is
    made), a later request head (from its first byte; before it, the idle keep-alive
    timer applies), and the rest of a request body after the response to it was sent
    (a 408, a 413, a route that never read it). When it fires the connection is closed,
    after a 408 if part of a head had arrived. It is cancelled when the head is complete
    or the body is in, and while a request is being answered.
    """

    def __init__(
        self,
        *args: Any,
        header_timeout: float,
        max_connections: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = header_timeout
        self.max_connections = max_connections
        self._wait_timer: asyncio.TimerHandle | None = None
        self._head_started = False  # a byte of the head being waited for has arrived
        self._fresh = True  # no request seen on this connection yet

    # the protocol interface

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self.max_connections is not None and len(self.connections) > self.max_connections:
            self._refuse_connection()
            return
        self._rearm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if data and self._awaiting_head():
            self._head_started = True
        super().data_received(data)
        if not self.transport.is_closing():
            self._rearm()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start the next (pipelined) request
        if not self.transport.is_closing():
            if self._awaiting_head() and self.conn.trailing_data[0]:
                self._head_started = True  # part of a pipelined head is buffered
            self._rearm()

    # the timer

    def _awaiting_head(self) -> bool:
        return self.conn.their_state is h11.IDLE and self.conn.our_state is h11.IDLE

    def _draining(self) -> bool:
        """The response is sent but the request's body is still arriving."""
        return self.conn.their_state is h11.SEND_BODY and self.conn.our_state in (
            h11.DONE,
            h11.MUST_CLOSE,
        )

    def _rearm(self) -> None:
        if self._awaiting_head():
            if self._fresh or self._head_started:
                self._arm()
            else:  # idle between requests: the keep-alive timer, and only it
                self._cancel()
                if self.timeout_keep_alive_task is None:  # uvicorn's was cancelled by a
                    self.timeout_keep_alive_task = self.loop.call_later(  # drained body
                        self.timeout_keep_alive, self.timeout_keep_alive_handler
                    )
            return
        self._fresh = False
        self._head_started = False
        if self._draining():
            self._arm()
        else:
            self._cancel()  # a request is being answered: the body timeout's business

    def _arm(self) -> None:
        if self._wait_timer is None:
            self._wait_timer = self.loop.call_later(self.header_timeout, self._expired)

    def _cancel(self) -> None:
        if self._wait_timer is not None:
            self._wait_timer.cancel()
            self._wait_timer = None

    def _expired(self) -> None:
        self._wait_timer = None
        if self.transport.is_closing():
            return
        if self._awaiting_head() and self._head_started:
            seconds = f"{self.header_timeout:g}".encode("ascii")
            self.transport.write(
                _plain(
                    b"408 Request Timeout",
                    _HEAD_TIMEOUT_BODY % seconds,
                    self.server_state.default_headers,
                )
            )
        self._close()

    def _refuse_connection(self) -> None:
        self.logger.warning("Exceeded connection limit (%d).", self.max_connections)
        self.transport.write(
            _plain(b"503 Service Unavailable", _REFUSED_BODY, self.server_state.default_headers)
        )
        self._close()

    def _close(self) -> None:
        with contextlib.suppress(h11.LocalProtocolError):  # mid-message: closed all the same
            self.conn.send(h11.ConnectionClosed())
        self.transport.close()


def uvicorn_options(config: ServerConfig) -> dict[str, Any]:
    """What ``aborist serve`` passes to uvicorn for ``config``: the guarded protocol (h11,
    whether or not httptools is installed), the idle keep-alive timeout, and the request
    limit (one above the connection limit, which the protocol enforces itself, so that
    uvicorn's own check, which counts the connection asking, refuses no request the
    connection limit let in)."""
    limit = config.max_connections
    return {
        "http": functools.partial(
            GuardedH11Protocol, header_timeout=config.header_timeout_s, max_connections=limit
        ),
        "timeout_keep_alive": config.keep_alive_s,
        "limit_concurrency": None if limit is None else limit + 1,
    }
