"""Fixtures of the server tests: the ASGI app over a migrated ledger of each backend and
the two-document corpus, reached in process through httpx (Starlette's Client), and a
tiny DOM for the pages."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from aborist.clients.base import ChatClient
from aborist.clients.extractive import ExtractiveClient
from aborist.server import ServerConfig, create_app
from tests.conftest import Corpus
from tests.html_dom import Dom as Dom  # re-exported for the page tests
from tests.html_dom import Node as Node
from tests.load.conftest import town_corpus  # noqa: F401 (the load test's corpus fixture)

BASE = "http://127.0.0.1"


class Client:
    """A synchronous httpx client on the ASGI app in this process (httpx's ASGITransport,
    one event loop per request), keeping cookies like a browser."""

    def __init__(self, app: Any, base_url: str = BASE) -> None:
        self.app = app
        self.base_url = base_url
        self.cookies = httpx.Cookies()

    def request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app, raise_app_exceptions=False)
            async with httpx.AsyncClient(
                transport=transport, base_url=self.base_url, cookies=self.cookies
            ) as c:
                r = await c.request(method, url, **kw)
                self.cookies.update(c.cookies)
                return r

        return asyncio.run(go())

    def get(self, url: str, **kw: Any) -> httpx.Response:
        return self.request("GET", url, **kw)

    def post(self, url: str, **kw: Any) -> httpx.Response:
        return self.request("POST", url, **kw)

    def close(self) -> None:
        self.app.app.state.aborist.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


TOKEN = "s3cret-token-for-tests-0123456789"


@dataclass
class Served:
    url: str
    shards: Path
    config: ServerConfig
    client: Client

    def with_config(self, **changes: Any) -> Client:
        """Another client on a new app over the same ledger, with ``changes``."""
        from dataclasses import replace

        return Client(create_app(replace(self.config, **changes)), base_url=BASE)


def _record(url: str, corpus: Corpus) -> None:
    """A query reads only shards its ledger recorded: record the corpus's ingests."""
    from ledger.store import Ledger

    with Ledger.open(url) as lg:
        corpus.record(lg)


def make_served(
    url: str, shards: Path, factory: Callable[[], ChatClient] = ExtractiveClient, **kw: Any
) -> Served:
    config = ServerConfig(ledger_url=url, shards_dir=shards, client_factory=factory, **kw)
    return Served(url, shards, config, Client(create_app(config), base_url=BASE))


@pytest.fixture
def served(ledger_url: str, corpus: Corpus) -> Iterator[Served]:
    """An app without a token over a fresh ledger of each backend, the corpus's ingests
    recorded in it."""
    _record(ledger_url, corpus)
    s = make_served(ledger_url, corpus.shards_dir)
    with s.client:
        yield s


@pytest.fixture
def guarded(ledger_url: str, corpus: Corpus) -> Iterator[Served]:
    """An app with a token."""
    _record(ledger_url, corpus)
    s = make_served(ledger_url, corpus.shards_dir, token=TOKEN)
    with s.client:
        yield s


def assert_inert(html: str) -> Dom:
    """No script, frame, object or event handler, and every link stays on this server:
    what the content security policy also enforces, checked in the markup itself."""
    dom = Dom(html)
    for tag in ("script", "iframe", "object", "embed", "img", "base"):
        assert not dom.find(tag), tag
    for n in dom.all:
        for k, v in n.attrs.items():
            assert not k.startswith("on"), (n.tag, k)
            if k in ("href", "src", "action"):
                assert v.startswith(("/", "#", "?")) and not v.startswith("//"), (n.tag, k, v)
    return dom
