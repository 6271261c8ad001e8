"""Shared fixtures. ``ledger_url`` / ``ledger`` yield a migrated SQLite ledger and a
migrated PostgreSQL ledger (each test on PostgreSQL gets its own schema), so every ledger
test runs on both backends.

PostgreSQL is switched on by ``ABORIST_TEST_PG_URL`` (``.ci/run`` sets it). Without it the
PostgreSQL half skips with a visible reason; with it, an unreachable server fails the test.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from aborist.corpus.ingest import IngestReport, ingest, record_ingest
from aborist.migrations import upgrade
from aborist.projections import open_ledger
from ledger.engine import ledger_engine
from ledger.store import Ledger
from tests.eldoria import BEES_TXT, RIVERS_MD

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO_ROOT / ".." / "shared" / "data").resolve()
PG_URL = os.environ.get("ABORIST_TEST_PG_URL")


@pytest.fixture(autouse=True)
def _private_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads or writes the real per-user home (CI runs as root): the data home,
    the XDG data and config directories and the config file all point under a fresh
    temporary directory, and no ``--home`` flag lingers from another test."""
    from aborist.settings import use_flags

    base = tmp_path_factory.mktemp("user", numbered=True)
    monkeypatch.setenv("ABORIST_HOME", str(base / "aborist-home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))
    config = base / "config" / "aborist" / "config.toml"
    config.parent.mkdir(parents=True)
    config.touch()  # a config file named by ABORIST_CONFIG must exist (empty: no settings)
    monkeypatch.setenv("ABORIST_CONFIG", str(config))
    use_flags()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-load",
        action="store_true",
        default=False,
        help="run the long batch load suite (4 workers x 250 questions)",
    )


def _pg_schema_url(schema: str) -> str:
    assert PG_URL is not None
    url = make_url(PG_URL)
    return url.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
        hide_password=False
    )


def _pg_admin_engine():  # type: ignore[no-untyped-def]
    assert PG_URL is not None
    return create_engine(PG_URL, isolation_level="AUTOCOMMIT")


@contextmanager
def pg_schema() -> Iterator[str]:
    """A fresh, empty PostgreSQL schema (dropped afterwards), as a ledger URL. Skips when
    ABORIST_TEST_PG_URL is unset; fails when it is set and the server is unreachable."""
    if not PG_URL:
        pytest.skip("PostgreSQL half skipped: set ABORIST_TEST_PG_URL to run it")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = _pg_admin_engine()
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    except Exception as e:  # the server must be reachable when the URL is set
        admin.dispose()
        pytest.fail(f"PostgreSQL at {PG_URL} is unreachable: {e}")
    try:
        yield _pg_schema_url(schema)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@contextmanager
def backend_url(backend: str, tmp: Path) -> Iterator[str]:
    """An empty, unmigrated ledger URL of ``backend`` (sqlite or postgresql)."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp / 'ledger.db'}"
    else:
        with pg_schema() as url:
            yield url


@pytest.fixture
def pg_schema_url() -> Iterator[str]:
    with pg_schema() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An unmigrated database URL of each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    url: str = request.getfixturevalue("pg_schema_url")
    return url


def migrate_url(url: str) -> None:
    engine = ledger_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()


@pytest.fixture
def ledger_url(empty_url: str) -> str:
    """A migrated, empty ledger of each backend."""
    migrate_url(empty_url)
    return empty_url


@pytest.fixture
def ledger(ledger_url: str) -> Iterator[Ledger]:
    lg = Ledger.open(ledger_url)
    try:
        yield lg
    finally:
        lg.close()


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


def backend_of(url: str) -> str:
    return make_url(url).get_backend_name()


# -- a tiny corpus with known facts (the pipeline, retrieval and repair tests) --
#
# The facts are invented so that no answer can come from anywhere but the corpus; each
# question in FACTS is answered by exactly one sentence of one document.

#: question -> the sentence of the corpus that answers it.
FACTS = {
    "How long is the Silverrun River?": "The Silverrun River is 412 kilometres long.",
    "Who founded the town of Brackwater?": (
        "The town of Brackwater was founded in 1312 by the fisherman Oren Vale."
    ),
    "What honey does the Eldorian honeybee produce?": (
        "The Eldorian honeybee produces violet honey in late autumn."
    ),
}
UNANSWERABLE = "What is the population of the capital city of Mars?"


@dataclass(frozen=True)
class Corpus:
    docs_dir: Path
    shards_dir: Path
    facts: dict[str, str]
    unanswerable: str
    reports: tuple[IngestReport, ...] = ()

    def record(self, ledger: Ledger) -> None:
        """Record the shards' ingests in ``ledger``, as ``aborist ingest`` would have: a
        run may only read shards whose source root its ledger recorded."""
        for report in self.reports:
            record_ingest(ledger, report)

    @property
    def rivers(self) -> Path:
        return self.docs_dir / "rivers.md"

    @property
    def bees(self) -> Path:
        return self.docs_dir / "bees.txt"


@pytest.fixture(scope="session")
def built_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """Two documents, ingested once per session as shards ``geo`` (rivers.md) and ``bees``
    (bees.txt). The documents are shared: tests must not modify them."""
    root = tmp_path_factory.mktemp("qa-corpus")
    docs = root / "docs"
    docs.mkdir()
    (docs / "rivers.md").write_text(RIVERS_MD, encoding="utf-8")
    (docs / "bees.txt").write_text(BEES_TXT, encoding="utf-8")
    shards = root / "shards"
    reports = (
        ingest([docs / "rivers.md"], "geo", shards_dir=shards),
        ingest([docs / "bees.txt"], "bees", shards_dir=shards),
    )
    return Corpus(docs, shards, dict(FACTS), UNANSWERABLE, reports)


@pytest.fixture
def corpus(built_corpus: Corpus, tmp_path: Path) -> Corpus:
    """The corpus with a private copy of its shard directory, which a test may change
    (delete a shard, ingest into one)."""
    shards = tmp_path / "shards"
    shutil.copytree(built_corpus.shards_dir, shards)
    return replace(built_corpus, shards_dir=shards)


@pytest.fixture
def pipeline_ledger(ledger_url: str, built_corpus: Corpus) -> Iterator[Ledger]:
    """A migrated ledger of each backend, opened with the run projections, in which the
    corpus's two shards were ingested (seq 1 and 2)."""
    lg = open_ledger(ledger_url)
    try:
        built_corpus.record(lg)
        yield lg
    finally:
        lg.close()
