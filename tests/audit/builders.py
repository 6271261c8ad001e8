"""Real ledgers for the audit tests, built by running queries: four runs (claim-lattice,
quote, a cache hit of the first, a failure) and, on request, two repaired runs."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text as sql_text

from aborist.clients.base import StubClient
from aborist.clients.extractive import ExtractiveClient
from aborist.corpus.ingest import ingest
from aborist.errors import ModelError
from aborist.events import run_stream
from aborist.pipeline.query import query
from aborist.pipeline.run import Governance
from aborist.projections import open_ledger
from ledger.canonical import canonical_text, sha256_hex
from ledger.envelope import RecordedEvent, event_hash
from ledger.store import Ledger
from tests.eldoria import BEES_TXT, RIVERS_MD

Q_LENGTH = "How long is the Silverrun River?"
Q_FOUNDER = "Who founded the town of Brackwater?"
Q_HONEY = "What honey does the Eldorian honeybee produce?"


@dataclass
class Built:
    """A ledger with four runs: claim-lattice, quote, a cache hit of the first, a failure."""

    url: str
    ledger: Ledger
    shards: Path
    lattice: str
    quote: str
    hit: str
    failed: str

    def events(self, run_id: str) -> list[RecordedEvent]:
        return self.ledger.read_stream(run_stream(run_id))

    def event(self, run_id: str, type_: str) -> RecordedEvent:
        return next(e for e in self.events(run_id) if e.type == type_)


def build_ledger(url: str, tmp: Path) -> Built:
    docs = tmp / "docs"
    docs.mkdir()
    (docs / "rivers.md").write_text(RIVERS_MD, encoding="utf-8")
    (docs / "bees.txt").write_text(BEES_TXT, encoding="utf-8")
    shards = tmp / "shards"
    lg = open_ledger(url)
    ingest([docs / "rivers.md"], "geo", shards_dir=shards, ledger=lg)
    ingest([docs / "bees.txt"], "bees", shards_dir=shards, ledger=lg)
    client = ExtractiveClient()
    lattice = query(Q_LENGTH, ledger=lg, client=client, shards_dir=shards)
    quote = query(Q_FOUNDER, ledger=lg, client=client, shards_dir=shards,
                  governance=Governance(mode="quote"))  # fmt: skip
    hit = query(Q_LENGTH, ledger=lg, client=client, shards_dir=shards)
    assert hit.cache_hit and hit.served_from_run_id == lattice.run_id
    with pytest.raises(ModelError):
        query(Q_HONEY, ledger=lg, client=StubClient(), shards_dir=shards)
    [failed] = [e for e in lg.read(types=["qa.run_failed"])]
    return Built(url, lg, shards, lattice.run_id, quote.run_id, hit.run_id, failed.stream[4:])


Q_FLOW = "Where does the Silverrun River flow?"
#: A claim with a trailing artifact: the mechanical repair drops it (UNGROUNDED -> STRICT:
#: since verifier 2.0 the unsupported "(Source: …)" sentence leaves the claim without support).
TRAILING = (
    "The Silverrun River flows north from the Ashen Mountains into the Glass Lake. "
    "(Source: Rivers of Eldoria) [E1]"
)
#: An elided quotation the mechanics leave alone; the re-prompt (same reply) is accepted.
ELIDED = 'The river "flows north from the Ashen Mountains [...] into the Glass Lake." [E1]'
FIXED = 'The river "flows north from the Ashen Mountains into the Glass Lake." [E1]'


def add_repair_runs(b: Built) -> tuple[str, str]:
    """Two repaired runs: a mechanical repair (claim-lattice) and a re-prompt (quote)."""
    ids = []
    for answer, mode in ((TRAILING, "claim-lattice"), (ELIDED, "quote")):
        gov = Governance(mode=mode, repair_enabled=True, repair_max_reprompts=1)

        def responder(messages: list[dict[str, str]], first: str = answer) -> str:
            # The first prompt gets the damaged answer; a re-prompt gets a verbatim one.
            return first if len(messages) == 2 else FIXED

        r = query(Q_FLOW, ledger=b.ledger, client=StubClient(responder),
                  shards_dir=b.shards, governance=gov)  # fmt: skip
        assert r.repair_changes, r
        ids.append(r.run_id)
    methods = [e.data["method"] for e in b.ledger.read(types=["qa.answer_repaired"])]
    assert methods == ["mechanical", "reprompt"]
    return ids[0], ids[1]


def raw_append(lg: Ledger, stream: str, type_: str, payload: dict[str, Any]) -> RecordedEvent:
    """Append one event by plain SQL, as a writer with ordinary access could: no trigger
    dropped, no projection folded, every hash correct (the chain still verifies)."""
    head_seq, head_hash = lg.head()
    prior = lg.read_stream(stream)
    text_ = canonical_text(payload)
    fields: dict[str, Any] = {
        "seq": head_seq + 1, "event_id": str(uuid.uuid4()), "stream": stream,
        "stream_seq": len(prior) + 1, "type": type_, "type_version": 1,
        "recorded_at": lg.read(gt=head_seq - 1, lte=head_seq)[0].recorded_at,
    }  # fmt: skip
    ph = sha256_hex(text_.encode("utf-8"))
    h = event_hash(**fields, payload_hash=ph, prev_hash=head_hash)
    with lg.engine.begin() as conn:
        conn.execute(
            sql_text(
                "INSERT INTO events (seq, event_id, stream, stream_seq, type, type_version, "
                "recorded_at, payload, payload_hash, prev_hash, hash) VALUES (:seq, "
                ":event_id, :stream, :stream_seq, :type, :type_version, :recorded_at, "
                ":payload, :ph, :prev, :h)"
            ),
            {**fields, "payload": text_, "ph": ph, "prev": head_hash, "h": h},
        )
    return lg.read(gt=head_seq, lte=head_seq + 1)[0]
