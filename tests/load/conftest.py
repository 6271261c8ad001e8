"""Fixtures of the batch load and fault suites.

``--run-load`` (``make test-load``) runs the long version (4 workers x 250 questions);
without it the same tests run a short version (2 workers x 12 questions) so that `make test`
stays fast. The corpus is generated here: invented towns, each with facts that exactly one
sentence states, so every question has one right answer and no answer can come from
anywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from aborist.corpus.ingest import IngestReport, ingest, record_ingest
from aborist.pipeline.batch import BatchItem

_SYLLABLES = ("bra", "kel", "mor", "vin", "tas", "dor", "lum", "qua", "zen", "fip")
_FOUNDERS = ("Oren Vale", "Ilse Marrow", "Tobin Rusk", "Petra Quill", "Anselm Grey")
_TEMPLATES = (
    "Who founded the town of {t}?",
    "When was the town of {t} founded?",
    "What river flows through the town of {t}?",
    "How many bridges does the town of {t} have?",
    "What is the town of {t} known for?",
)


@dataclass(frozen=True)
class LoadSize:
    workers: int
    questions: int


@pytest.fixture(scope="session")
def load_size(pytestconfig: pytest.Config) -> LoadSize:
    if pytestconfig.getoption("--run-load", default=False):
        return LoadSize(workers=4, questions=250)
    return LoadSize(workers=2, questions=12)


def town(i: int) -> str:
    a, b, c = i % 10, (i // 10) % 10, (i * 7 + 3) % 10
    return (_SYLLABLES[a] + _SYLLABLES[b] + _SYLLABLES[c]).capitalize() + "wick"


def _document(i: int) -> str:
    t = town(i)
    return (
        f"# The town of {t}\n\n"
        f"The town of {t} was founded in {1100 + i} by {_FOUNDERS[i % len(_FOUNDERS)]}.\n\n"
        f"The river {t}brook flows through the town of {t} on its way to the sea.\n\n"
        f"The town of {t} has {3 + i % 9} stone bridges across the {t}brook.\n\n"
        f"The town of {t} is known for its {('salt', 'wool', 'glass', 'cider')[i % 4]} "
        "market, held every spring.\n"
    )


@dataclass(frozen=True)
class TownCorpus:
    shards_dir: Path
    towns: int
    report: IngestReport

    def record(self, url: str) -> str:
        """Record the shard's ingest in the ledger at ``url`` (a run reads only shards its
        ledger recorded); returns ``url``."""
        from aborist.projections import open_ledger

        with open_ledger(url) as lg:
            record_ingest(lg, self.report)
        return url

    def questions(self, n: int) -> list[str]:
        """``n`` distinct questions, cycling through the towns before the templates."""
        out = [_TEMPLATES[(k // self.towns) % len(_TEMPLATES)].format(t=town(k % self.towns))
               for k in range(n)]  # fmt: skip
        assert len(set(out)) == n, "ask for at most towns x templates questions"
        return out

    def items(self, n: int, *, marker: dict[int, str] | None = None) -> list[BatchItem]:
        """Batch items q1..qn; ``marker`` appends a word to some questions (by index), which
        the fake model server keys its behaviour on."""
        marker = marker or {}
        return [BatchItem(f"q{k + 1}", q + marker.get(k, ""), k + 1)
                for k, q in enumerate(self.questions(n))]  # fmt: skip


@pytest.fixture(scope="session")
def town_corpus(tmp_path_factory: pytest.TempPathFactory) -> TownCorpus:
    root = tmp_path_factory.mktemp("towns")
    docs = root / "docs"
    docs.mkdir()
    towns = 60
    for i in range(towns):
        (docs / f"town{i:03d}.md").write_text(_document(i), encoding="utf-8")
    shards = root / "shards"
    report = ingest(sorted(docs.glob("*.md")), "towns", shards_dir=shards)
    return TownCorpus(shards, towns, report)
