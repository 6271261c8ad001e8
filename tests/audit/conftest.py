"""Fixtures shared by the audit tests: ``built``, a fresh ledger per test for tests that
change it; and, for the export-bundle and report tests, one real ledger per backend (built
by running queries with :func:`tests.audit.test_replay.build_ledger`, plus the two
repaired runs and a run with a hostile question and answer), built once per module."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from aborist.clients.base import StubClient
from aborist.pipeline.query import query
from tests.audit.builders import Built, add_repair_runs, build_ledger
from tests.conftest import backend_url, migrate_url

HOSTILE_QUESTION = (
    '<script>alert("q")</script><img src=x onerror=alert(1)> How long is the Silverrun River?'
)
HOSTILE_ANSWER = (
    'The Silverrun River is 412 kilometres long. [E1]\n<script>alert("a")</script>'
    '<a href="http://evil.example/">click</a> " onmouseover="x [E1]'
)


@pytest.fixture
def built(ledger_url: str, tmp_path: Path) -> Iterator[Built]:
    """A fresh ledger of each backend for a test that changes it."""
    b = build_ledger(ledger_url, tmp_path)
    try:
        yield b
    finally:
        b.ledger.close()


@dataclass
class Audited:
    """A :class:`Built` ledger with its repaired and hostile runs named."""

    built: Built
    mechanical: str
    reprompt: str
    hostile: str


def build_audited(url: str, tmp: Path) -> Audited:
    migrate_url(url)
    b = build_ledger(url, tmp)
    mechanical, reprompt = add_repair_runs(b)
    hostile = query(
        HOSTILE_QUESTION,
        ledger=b.ledger,
        client=StubClient(default=HOSTILE_ANSWER),
        shards_dir=b.shards,
        use_cache=False,
    )
    return Audited(b, mechanical, reprompt, hostile.run_id)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def audited(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Audited]:
    """One audited ledger per backend, shared by a module's tests (they only read it, or
    record checkpoints)."""
    tmp = tmp_path_factory.mktemp("audited")
    with backend_url(request.param, tmp) as url:
        a = build_audited(url, tmp)
        try:
            yield a
        finally:
            a.built.ledger.close()
