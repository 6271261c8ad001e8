"""Many questions at once over HTTP: ``aborist serve`` as a separate process (one worker
on SQLite, where appends are serialized; two worker processes on PostgreSQL), clients on
loopback answering a questionnaire at two concurrencies, then the ledger audited: every
request answered, one run per request, the chain gapless, ``replay --deep`` holds.

Short by default (so ``make test`` stays fast); ``--run-load`` (``make test-load``) sends
500 questions at 16 and again at 64 concurrent clients. Every request has a timeout and
the clients stop when the list is done: the test cannot hang.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest

from aborist.audit import replay
from aborist.projections import open_ledger
from tests.conftest import backend_of
from tests.load.conftest import TownCorpus
from tests.server.live import serve_process

pytestmark = [pytest.mark.load, pytest.mark.slow]


async def _ask_all(base: str, questions: list[str], clients: int) -> list[httpx.Response]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for q in questions:
        queue.put_nowait(q)
    out: list[httpx.Response] = []
    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:

        async def client() -> None:
            while True:
                try:
                    q = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                out.append(await http.post("/api/v1/query", json={"question": q}))

        await asyncio.gather(*(client() for _ in range(clients)))
    return out


def test_many_clients_at_once(
    ledger_url: str, town_corpus: TownCorpus, pytestconfig: pytest.Config
) -> None:
    long = bool(pytestconfig.getoption("--run-load", default=False))
    n = 500 if long else 24
    distinct = town_corpus.questions(min(n, town_corpus.towns * 5))
    workers = 2 if backend_of(ledger_url) == "postgresql" else 1
    town_corpus.record(ledger_url)  # a query reads only shards its ledger recorded
    env = {"ABORIST_DB_URL": ledger_url, "ABORIST_SHARD_DIR": str(town_corpus.shards_dir)}
    sent = 0
    with serve_process(env, workers=workers) as base:
        for clients in (16, 64):
            questions = [distinct[k % len(distinct)] for k in range(n)]
            responses = asyncio.run(_ask_all(base, questions, clients))
            sent += len(questions)
            codes = Counter(r.status_code for r in responses)
            assert codes == {200: n}, {c: k for c, k in codes.items()}
            bodies = [r.json() for r in responses]
            assert len({b["run_id"] for b in bodies}) == n  # one run per request
            verdicts: dict[str, set[str]] = {}
            assert Counter(b["question"] for b in bodies) == Counter(questions)
            for b in bodies:
                verdicts.setdefault(b["question"], set()).add(b["audit_mode"])
            # the same question gets the same verdict however many clients ask at once
            assert all(len(v) == 1 for v in verdicts.values()), verdicts
            assert sum(v == {"STRICT"} for v in verdicts.values()) >= len(verdicts) // 2
    lg = open_ledger(ledger_url)
    try:
        rows = lg.fetch("SELECT COUNT(*), MIN(seq), MAX(seq) FROM events")
        count, first, last = rows[0]
        assert (first, last) == (1, count)  # gapless
        statuses = dict(lg.fetch("SELECT status, COUNT(*) FROM runs GROUP BY status"))
        assert sum(statuses.values()) == sent and "failed" not in statuses
        assert statuses.get("started", 0) == 0
        report = replay(lg, deep=True, parallel=False)
        assert report.ok, report.to_dict()["divergences"]
        assert report.events_checked == count
    finally:
        lg.close()
