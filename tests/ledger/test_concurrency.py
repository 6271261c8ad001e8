"""Several processes appending at once keep one gapless order and one unforked chain
(at least 4 processes x 500 events, on each backend)."""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os

from ledger.envelope import NewEvent
from ledger.store import Ledger
from ledger.verify import verify_ledger

WORKERS = 4
EVENTS_PER_WORKER = 500
#: Appends between two meetings of the workers: every round holds appends of all of them,
#: so they interleave however the machine schedules them (a loaded machine ran them one
#: after another).
ROUND = 50


def _worker(url: str, worker: int, n: int, rounds: mp.synchronize.Barrier) -> None:
    lg = Ledger.open(url, sqlite_synchronous="NORMAL")
    try:
        rounds.wait(60)
        stream = f"worker:{worker}"
        for i in range(n):
            if i and i % ROUND == 0:
                rounds.wait(60)
            # Every other append also carries a batch of two, and all of them use the
            # optimistic stream position, which only this worker moves.
            batch = [NewEvent("test.appended", {"worker": worker, "i": i, "pid": os.getpid()})]
            if i % 2:
                batch.append(NewEvent("test.appended", {"worker": worker, "i": i, "extra": True}))
            done = sum(1 + (j % 2) for j in range(i))
            lg.append(stream, batch, expected_stream_seq=done)
    finally:
        lg.close()


def test_processes_share_one_chain(ledger_url: str) -> None:
    ctx = mp.get_context("spawn")
    rounds = ctx.Barrier(WORKERS)
    procs = [
        ctx.Process(target=_worker, args=(ledger_url, w, EVENTS_PER_WORKER, rounds))
        for w in range(WORKERS)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * WORKERS

    per_worker = EVENTS_PER_WORKER + EVENTS_PER_WORKER // 2
    lg = Ledger.open(ledger_url)
    try:
        report = verify_ledger(lg)
        assert report.ok, report.to_dict()
        rows = lg.read()
        assert [r.seq for r in rows] == list(range(1, WORKERS * per_worker + 1))
        assert len({r.hash for r in rows}) == len(rows)
        for w in range(WORKERS):
            mine = lg.read_stream(f"worker:{w}")
            assert [r.stream_seq for r in mine] == list(range(1, per_worker + 1))
            assert [r.data["i"] for r in mine if "extra" not in r.data] == list(
                range(EVENTS_PER_WORKER)
            )
        # The writers really interleaved: the streams are not laid down one after another.
        switches = sum(1 for a, b in itertools.pairwise(rows) if a.stream != b.stream)
        assert switches > WORKERS
    finally:
        lg.close()
