"""The HTTP layer shared by the remote chat clients : 3× exponential backoff on 5xx,
429 and dropped connections.

Retries are this module's own loop, not ``httpx.HTTPTransport(retries=...)``: httpx retries
only failed connects, while a model server also needs retrying on 5xx, 429, read timeouts
and dropped connections. Up to ``max_attempts`` (3) attempts, waiting
``backoff_base * 2**(n-1)`` seconds after failed attempt ``n`` (0.5 s, then 1 s), or a numeric
``Retry-After`` capped at :data:`MAX_RETRY_AFTER`. Other 4xx answers, non-JSON bodies and
bodies without the answer text fail at once: repeating the request would not change them.

Every failure is one :class:`aborist.errors.ModelError`: ``model server <endpoint>: <what
happened>``, with the URL cut to scheme, host, port and path (no user, password, query
string or fragment: a ``?token=…`` would otherwise be kept forever in ``qa.run_failed``)
and the API key replaced by ``***`` wherever the server echoed it. The model profile
recorded in ``qa.run_started`` holds the same cut URL (:func:`public_url`).
"""

from __future__ import annotations

import re
import ssl
import time
from abc import abstractmethod
from collections.abc import Callable
from functools import cache
from typing import Any

import httpx

from aborist.clients.base import ChatClient, ChatResult, Messages
from aborist.clients.deadline import bound_client
from aborist.clients.deadline import deadline as bounded
from aborist.errors import ModelError

__all__ = [
    "DEFAULT_BACKOFF_BASE",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_TIMEOUT",
    "MAX_RESPONSE_BYTES",
    "MAX_RETRY_AFTER",
    "HTTPChatClient",
    "Reply",
    "public_url",
    "seconds_timeout",
]

#: Connecting to a local or LAN server is quick; generating a long answer is not.
DEFAULT_TIMEOUT = httpx.Timeout(connect=5.0, read=120.0, write=30.0, pool=5.0)
DEFAULT_MAX_ATTEMPTS = 3


def seconds_timeout(seconds: float) -> httpx.Timeout:
    """A timeout of ``seconds`` for the model's answer (``ABORIST_LLM_TIMEOUT``,
    ``--llm-timeout``): the read timeout, and the deadline of each attempt as a whole
    (connect, send, headers and body together; :meth:`HTTPChatClient._post`);
    connecting, sending and waiting for a pooled connection keep their (shorter)
    defaults unless ``seconds`` is shorter."""
    d = DEFAULT_TIMEOUT
    return httpx.Timeout(
        connect=min(d.connect or seconds, seconds),
        read=seconds,
        write=min(d.write or seconds, seconds),
        pool=min(d.pool or seconds, seconds),
    )


DEFAULT_BACKOFF_BASE = 0.5
MAX_RETRY_AFTER = 30.0
#: Largest response body read (decoded): a chat answer is kilobytes; a server streaming
#: without end, or a compressed bomb, would otherwise fill the memory.
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
_FRAMING = frozenset({"content-encoding", "content-length", "transfer-encoding"})

_DETAIL_CHARS = 160
_MAX_PORT = 65535


def public_url(url: httpx.URL) -> httpx.URL:
    """``url`` with only scheme, host, port and path: what may be recorded or shown.
    User info, the query string and the fragment can carry credentials."""
    return httpx.URL(scheme=url.scheme, host=url.host, port=url.port, path=url.path)


_URL_SECRETS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?:[^/?#@\s]*@)?(?P<rest>[^?#\s]*)"
                          r"(?:[?#][^\s'\")]*)?", re.IGNORECASE)  # fmt: skip


def redact_urls(text: str) -> str:
    """Every URL in ``text`` without user info, query string or fragment."""
    return _URL_SECRETS.sub(lambda m: m["scheme"] + m["rest"], text)


_NUMERIC = re.compile(r"\d+(?:\.\d+)?")


def _one_line(text: str, limit: int = _DETAIL_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _error_detail(response: httpx.Response) -> str:
    """The server's own explanation of an error status, if it gave one."""
    try:
        data = response.json()
    except ValueError:
        return _one_line(response.text)
    if isinstance(data, dict):
        err = data.get("error")
        for candidate in (
            err.get("message") if isinstance(err, dict) else err,
            data.get("message"),
            data.get("detail"),
        ):
            if isinstance(candidate, str) and candidate.strip():
                return _one_line(candidate)
    return _one_line(response.text)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    return min(float(value), MAX_RETRY_AFTER) if _NUMERIC.fullmatch(value) else None


@cache
def _shared_ssl_context() -> ssl.SSLContext:
    """One verified TLS context for every client: loading the CA bundle costs ~0.1 s each time."""
    return httpx.create_ssl_context()


Reply = tuple[str, str | None, str | None, dict[str, Any] | None]
"""What a response parser returns: text, model, finish reason, usage."""


class HTTPChatClient(ChatClient):
    """A chat client that POSTs JSON to ``{base_url}{endpoint_path}`` with retries.

    Subclasses say where (:attr:`endpoint_path`), how to authenticate (:meth:`_auth_headers`),
    what to send (:meth:`_request_body`) and how to read the answer (:meth:`_parse_reply`).
    ``transport`` replaces httpx's network transport (tests pass ``httpx.MockTransport``);
    ``sleep`` replaces :func:`time.sleep` between attempts (tests record the delays).
    """

    endpoint_path = "/"
    env_base_url = "the base URL"
    env_model = "the model name"
    env_api_key = "the API key"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        base_url_source: str | None = None,
    ) -> None:
        super().__init__(temperature=temperature, max_tokens=max_tokens)
        self._api_key = api_key or None
        base = self._parse_base_url(base_url, base_url_source or self.env_base_url)
        if not isinstance(model, str) or not model.strip():
            raise ModelError(f"the model name is empty: set {self.env_model}")
        if max_attempts < 1:
            raise ModelError(f"max_attempts must be at least 1; found {max_attempts}")
        self.model = model.strip()
        self.base_url = str(public_url(base))
        self.endpoint = base.copy_with(path=base.path.rstrip("/") + self.endpoint_path)
        self.endpoint_display = str(public_url(self.endpoint))
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else seconds_timeout(timeout)
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self._sleep = sleep
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers.update(self._auth_headers(self._api_key))
        self._http = httpx.Client(
            timeout=self.timeout,
            transport=transport,
            headers=headers,
            verify=_shared_ssl_context() if transport is None else True,
        )
        bound_client(self._http)  # one deadline for each whole exchange (_post)

    # --- what subclasses provide ---------------------------------------------------------

    @abstractmethod
    def _auth_headers(self, api_key: str) -> dict[str, str]: ...

    @abstractmethod
    def _request_body(
        self, messages: Messages, *, temperature: float, max_tokens: int | None
    ) -> dict[str, Any]: ...

    @abstractmethod
    def _parse_reply(self, data: Any) -> Reply | None:
        """The answer in a 2xx JSON body, or ``None`` when the body holds no answer text."""

    missing_reply = "response had no answer text"

    def _status_hint(self, status: int) -> str:
        if status in (401, 403):
            return f"; check {self.env_api_key}"
        if status == 404:
            return f"; check {self.env_base_url} and {self.env_model}"
        return ""

    # --- the shared machinery -------------------------------------------------------------

    @staticmethod
    def _parse_base_url(base_url: str, source: str) -> httpx.URL:
        """``base_url`` as a URL; ``source`` names where it came from (a flag, a variable
        or a config file's key) in the message when it is not an http(s) URL."""
        try:
            url = httpx.URL(base_url.strip().rstrip("/"))
        except (httpx.InvalidURL, TypeError, AttributeError) as e:
            shown = redact_urls(str(base_url))
            raise ModelError(f"{source} is not a URL ({e}): {shown!r}") from e
        if url.scheme not in ("http", "https") or not url.host:
            shown = str(public_url(url)) if url.host else redact_urls(base_url)
            raise ModelError(f"{source} must be an http(s) URL; found {shown!r}")
        if url.port is not None and not 1 <= url.port <= _MAX_PORT:
            # httpx keeps any number; the connection then failed as "connection refused"
            raise ModelError(
                f"{source} has an invalid port {url.port} (a port is 1 to {_MAX_PORT}); "
                f"found {str(public_url(url))!r}"
            )
        return url

    def _profile(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "model": self.model}

    def close(self) -> None:
        self._http.close()

    def _error(self, what: str) -> ModelError:
        message = redact_urls(f"model server {self.endpoint_display}: {what}")
        if self._api_key:
            message = message.replace(self._api_key, "***")
        return ModelError(message)

    def _describe_timeout(self, e: httpx.TimeoutException) -> str:
        phases: list[tuple[type[httpx.TimeoutException], float | None, str]] = [
            (httpx.ConnectTimeout, self.timeout.connect, "connecting"),
            (httpx.ReadTimeout, self.timeout.read, "waiting for the response"),
            (httpx.WriteTimeout, self.timeout.write, "sending the request"),
            (httpx.PoolTimeout, self.timeout.pool, "waiting for a free connection"),
        ]
        for kind, seconds, doing in phases:
            if isinstance(e, kind):
                return f"timed out after {seconds:g}s {doing}"
        return f"timed out ({e})"

    @staticmethod
    def _describe_transport(e: httpx.TransportError) -> str:
        text = str(e)
        if isinstance(e, httpx.ConnectError):
            if "refused" in text.lower():
                return "connection refused"
            return f"could not connect ({_one_line(text)})"
        if isinstance(e, httpx.RemoteProtocolError) and "without sending" in text:
            return "server closed the connection without a response"
        return f"connection failed ({type(e).__name__}: {_one_line(text)})"

    def _status_problem(self, response: httpx.Response) -> str:
        what = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
        detail = _error_detail(response)
        return what + (f" ({detail})" if detail else "")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        return float(self.backoff_base * 2 ** (attempt - 1))

    def _complete(
        self, messages: Messages, *, temperature: float, max_tokens: int | None
    ) -> ChatResult:
        body = self._request_body(messages, temperature=temperature, max_tokens=max_tokens)
        problem = "no attempt was made"
        for attempt in range(1, self.max_attempts + 1):
            retry_after: float | None = None
            try:
                response = self._post(body)
            except httpx.TimeoutException as e:
                problem = self._describe_timeout(e)
            except (httpx.NetworkError, httpx.RemoteProtocolError) as e:
                problem = self._describe_transport(e)
            except httpx.HTTPError as e:  # a bad URL, proxy or protocol: retrying won't help
                raise self._error(f"request failed ({type(e).__name__}: {e})") from e
            else:
                status = response.status_code
                if status == 429 or status >= 500:
                    problem = self._status_problem(response)
                    retry_after = _retry_after(response)
                elif not response.is_success:
                    problem = self._status_problem(response) + self._status_hint(status)
                    raise self._error(problem)
                else:
                    return self._result(response, attempt)
            if attempt < self.max_attempts:
                self._sleep(self._delay(attempt, retry_after))
        noun = "attempt" if self.max_attempts == 1 else "attempts"
        raise self._error(f"{problem}; gave up after {self.max_attempts} {noun}")

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        """POST ``body`` and read the response, bounded: at most
        :data:`MAX_RESPONSE_BYTES`, and the whole exchange (connecting, sending, the
        headers, the body) within the read timeout (httpx's timeouts are per network
        operation, so headers or a body trickling in a byte at a time never hit them;
        :mod:`aborist.clients.deadline`). Past the time, :class:`httpx.ReadTimeout`
        (retried like any timeout)."""
        limit = self.timeout.read
        with bounded(limit):
            return self._post_within(body, None if limit is None else time.monotonic() + limit)

    def _post_within(self, body: dict[str, Any], deadline: float | None) -> httpx.Response:
        """:meth:`_post` inside its deadline; the body's chunks are also checked against
        the clock here, for a transport the deadline backend does not reach (tests')."""
        with self._http.stream("POST", self.endpoint, json=body) as streamed:
            chunks: list[bytes] = []
            size = 0
            for chunk in streamed.iter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise self._error(
                        f"response body larger than {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB"
                    )
                if deadline is not None and time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the body was still arriving", request=streamed.request)
                chunks.append(chunk)
        # The bytes are decoded already: the new response must not decode them again.
        kept = [(k, v) for k, v in streamed.headers.multi_items() if k.lower() not in _FRAMING]
        return httpx.Response(
            streamed.status_code, headers=kept, content=b"".join(chunks), request=streamed.request
        )

    def _result(self, response: httpx.Response, attempts: int) -> ChatResult:
        try:
            data = response.json()
        except (ValueError, RecursionError):  # RecursionError: nested past the C parser's limit
            raise self._error(
                f"response was not JSON (HTTP {response.status_code}, body starts "
                f"{_one_line(response.text, 60)!r})"
            ) from None
        reply = self._parse_reply(data)
        if reply is None:
            raise self._error(
                f"{self.missing_reply} (body starts {_one_line(response.text, 80)!r})"
            )
        text, model, finish, usage = reply
        return ChatResult(
            text=text,
            model=model or self.model,
            finish_reason=finish,
            usage=usage,
            raw=data if isinstance(data, dict) else None,
            attempts=attempts,
        )
