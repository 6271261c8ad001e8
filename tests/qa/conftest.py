"""Fixtures for the answering-pipeline tests (issue 5): a tiny corpus with known facts,
ingested into two shards under ``tmp_path``, and a pipeline ledger (opened with its
projections) on SQLite and PostgreSQL.

The facts are invented so that no answer can come from anywhere but the corpus; each
question in :data:`FACTS` is answered by exactly one sentence of one document.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from aborist.corpus.ingest import ingest
from aborist.projections import open_ledger
from ledger.store import Ledger
from tests.eldoria import BEES_TXT, RIVERS_MD

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
    ingest([docs / "rivers.md"], "geo", shards_dir=shards)
    ingest([docs / "bees.txt"], "bees", shards_dir=shards)
    return Corpus(docs, shards, dict(FACTS), UNANSWERABLE)


@pytest.fixture
def corpus(built_corpus: Corpus, tmp_path: Path) -> Corpus:
    """The corpus with a private copy of its shard directory, which a test may change
    (delete a shard, ingest into one)."""
    shards = tmp_path / "shards"
    shutil.copytree(built_corpus.shards_dir, shards)
    return replace(built_corpus, shards_dir=shards)


@pytest.fixture
def pipeline_ledger(ledger_url: str) -> Iterator[Ledger]:
    """A migrated ledger of each backend, opened with the run projections."""
    lg = open_ledger(ledger_url)
    try:
        yield lg
    finally:
        lg.close()
