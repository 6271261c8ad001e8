"""Connection limits uvicorn does not enforce by itself (docs/serve.md, "Limits"): a
request head must arrive in full within the header timeout and be no larger than the head
limit, the rest of a body no route reads must arrive within the header timeout too, a
response must keep leaving within the send timeout, and a connection beyond the connection
limit is refused as soon as it is accepted.

uvicorn (h11) closes an idle keep-alive connection after ``timeout_keep_alive``, but only
once a response has been sent, and it cancels that timer on the first byte of the next
request: a client that connects and sends nothing, or sends its request line and headers
one byte at a time, held the connection (and a file descriptor) for as long as it liked.
:class:`GuardedH11Protocol` arms its own timer whenever the connection waits for bytes
no application is waiting for, and cancels it when they have arrived.

h11 bounds a request head only while it is incomplete (``max_incomplete_event_size``): a
head that arrived whole in one read was parsed and answered at any size the read allowed.
:class:`_HeadBoundedConnection` measures every head it parses.

A client that stops reading its response left the rest of it in the transport's buffer,
and the application waiting for that buffer to drain, for ever (closing the transport
waits for the buffer too). The protocol pauses the application as soon as any output is
unsent, and closes the connection when the unsent output has not shrunk for the send
timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket
import struct
import sys
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from aborist.server.config import DEFAULT_MAX_HEAD_BYTES, DEFAULT_SEND_TIMEOUT_S, ServerConfig

__all__ = ["GuardedH11Protocol", "uvicorn_options"]

_HEAD_TIMEOUT_BODY = b"the request head did not arrive within %s s\n"
_HEAD_TOO_LARGE_BODY = b"the request head exceeds %d bytes\n"
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


class _HeadBoundedConnection(h11.Connection):
    """h11's server side, refusing a request head larger than ``max_head`` bytes (from
    the request line to the blank line ending the headers, inclusive), whether it is still
    incomplete (h11's own ``max_incomplete_event_size``) or arrived whole in one read.

    Either way :meth:`next_event` raises ``RemoteProtocolError`` with status hint 431
    and :attr:`head_too_large` is set, so the protocol can say why."""

    def __init__(self, max_head: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_head)
        self.max_head = max_head
        self.head_too_large = False

    @property
    def buffered(self) -> int:
        """How many received bytes h11 has not parsed yet (h11's public ``trailing_data``:
        a copy of at most one read, taken only while a head is awaited)."""
        return len(self.trailing_data[0])

    def next_event(self) -> Any:
        if self.their_state is not h11.IDLE:
            return super().next_event()
        before = self.buffered
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as e:
            if e.error_status_hint == 431:  # "Receive buffer too long": an incomplete head
                self.head_too_large = True
            raise
        if isinstance(event, h11.Request) and before - self.buffered > self.max_head:
            self.head_too_large = True  # a whole head parsed from one read: the bytes it took
            raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
        return event


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header timeout, a head size limit, a send timeout
    and a connection limit.

    The timer runs while the connection waits for bytes from the client that no
    application is reading: the first request head (from the moment the connection is
    made), a later request head (from its first byte; before it, the idle keep-alive
    timer applies), and the rest of a request body after the response to it was sent
    (a 408, a 413, a route that never read it). When it fires the connection is closed,
    after a 408 if part of a head had arrived. It is cancelled when the head is complete
    or the body is in, and while a request is being answered. A pipelined head already
    buffered when the response before it is complete is waited for as a head that has
    started (uvicorn's keep-alive timer would close it without a word).

    A head over ``max_head`` bytes is answered 431 and the connection closed. A protocol
    error after the response was begun (a malformed chunk in a body no route read) closes
    the connection: there is no response left to say it in (uvicorn tried to send a 400
    and logged h11's refusal as a traceback).

    The transport's high-water mark is 0: the application is paused whenever any output
    is unsent, so a connection buffers at most one message of its response. While output
    is unsent, what is still to go — the transport's buffer and, on Linux, the kernel's
    send queue (``SIOCOUTQ``), so that every byte the client takes counts — is checked
    every ``min(1 s, send_timeout / 4)``; when it has not shrunk for ``send_timeout`` s,
    the connection is reset (``SO_LINGER`` 0: the kernel drops what it still holds).
    """

    def __init__(
        self,
        *args: Any,
        header_timeout: float,
        max_connections: int | None = None,
        max_head: int = DEFAULT_MAX_HEAD_BYTES,
        send_timeout: float = DEFAULT_SEND_TIMEOUT_S,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.conn: _HeadBoundedConnection = _HeadBoundedConnection(max_head)
        self.header_timeout = header_timeout
        self.max_connections = max_connections
        self.send_timeout = send_timeout
        self._wait_timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None
        self._unsent = 0  # the unsent output when it last shrank ...
        self._unsent_since = 0.0  # ... and when that was
        self._head_started = False  # a byte of the head being waited for has arrived
        self._fresh = True  # no request seen on this connection yet

    # the protocol interface

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        transport.set_write_buffer_limits(high=0)  # pause_writing on any unsent byte
        if self.max_connections is not None and len(self.connections) > self.max_connections:
            self._refuse_connection()
            return
        self._rearm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        self._stop_send_timer()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            self._unsent = self._to_send()
            self._unsent_since = self.loop.time()
            self._send_timer = self.loop.call_later(self._send_tick(), self._check_send)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._stop_send_timer()

    def data_received(self, data: bytes) -> None:
        if data and self._awaiting_head():
            self._head_started = True
        super().data_received(data)
        if not self.transport.is_closing():
            self._rearm()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start the next (pipelined) request
        if not self.transport.is_closing():
            if self._awaiting_head() and self.conn.buffered:
                self._head_started = True  # part of a pipelined head is buffered: it is
                self._unset_keepalive_if_required()  # a slow head, not an idle connection
            self._rearm()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 refused, unless the head was too large (431)
        or a response was already begun (nothing can be answered: the connection is
        closed)."""
        if self.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            self._close()
        elif self.conn.head_too_large:
            self.transport.write(
                _plain(
                    b"431 Request Header Fields Too Large",
                    _HEAD_TOO_LARGE_BODY % self.conn.max_head,
                    self.server_state.default_headers,
                )
            )
            self._close()
        else:
            super().send_400_response(msg)

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

    # the send timer

    def _send_tick(self) -> float:
        return min(1.0, self.send_timeout / 4)

    def _stop_send_timer(self) -> None:
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _to_send(self) -> int:
        """Bytes not yet taken by the client: the transport's buffer, and the kernel's send
        queue where the platform tells it (Linux ``SIOCOUTQ``)."""
        unsent = self.transport.get_write_buffer_size()
        sock = self.transport.get_extra_info("socket")
        if _OUTQ is not None and sock is not None:
            with contextlib.suppress(OSError, ValueError):
                raw = fcntl.ioctl(sock.fileno(), _OUTQ, b"\0\0\0\0")
                unsent += struct.unpack("i", raw)[0]
        return unsent

    def _abort(self) -> None:
        """Reset the connection: what the kernel still holds for the client is dropped."""
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError, ValueError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.transport.abort()

    def _check_send(self) -> None:
        self._send_timer = None
        if self.transport.get_write_buffer_size() == 0:
            return  # drained (resume_writing follows)
        unsent = self._to_send()
        now = self.loop.time()
        if unsent < self._unsent:  # the client took some: progress
            self._unsent, self._unsent_since = unsent, now
        left = self._unsent_since + self.send_timeout - now
        if left <= 0:
            self.logger.warning(
                "Closed a connection whose response did not move for %g s (%d bytes unsent).",
                self.send_timeout,
                unsent,
            )
            self._abort()
            return
        self._send_timer = self.loop.call_later(min(self._send_tick(), left), self._check_send)

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


if sys.platform == "linux":
    import fcntl
    import termios

    #: The ioctl that reads a TCP socket's unsent send queue (``SIOCOUTQ`` = ``TIOCOUTQ``).
    _OUTQ: int | None = termios.TIOCOUTQ
else:  # elsewhere only the server's own buffer counts
    _OUTQ = None


def uvicorn_options(config: ServerConfig) -> dict[str, Any]:
    """What ``aborist serve`` passes to uvicorn for ``config``: the guarded protocol (h11,
    whether or not httptools is installed) with its timeouts and limits, the idle
    keep-alive timeout, and the request limit (one above the connection limit, which the
    protocol enforces itself, so that uvicorn's own check, which counts the connection
    asking, refuses no request the connection limit let in)."""
    limit = config.max_connections
    return {
        "http": functools.partial(
            GuardedH11Protocol,
            header_timeout=config.header_timeout_s,
            max_connections=limit,
            max_head=config.max_head_bytes,
            send_timeout=config.send_timeout_s,
        ),
        "timeout_keep_alive": config.keep_alive_s,
        "limit_concurrency": None if limit is None else limit + 1,
    }
