"""Replay's ``--deep`` batches: finished runs re-executed a batch at a time, in this
process or in a forked worker, and their findings merged in the ledger's order.

Replay hands each batch of finished runs (with the part of the report the batch's DAG
checks wrote) to :class:`DeepBatches`. With a worker (:class:`DeepWorker`, when the
replay runs on two CPUs), a batch goes to the worker while it has fewer than
:data:`IN_FLIGHT` batches in hand, and is re-executed here otherwise, so both processes
stay busy whichever is slower. Each batch's findings form a report of their own
(:func:`reexecute_batch`); the parts are merged in the order the batches were made
(:meth:`~aborist.audit.findings.ReplayReport.merge`: the batch's DAG part, then its deep
part), so the report is the one a single process gives, wherever each batch ran
(``tests/audit/test_replay_parallel.py``).

The worker is forked (it starts at once, importing nothing) and opens a connection of its
own (it never uses the parent's); it checks that it sees the same ledger (the event at
the replay's head has the head's hash). It is sent only each run's id, status, and the
seq, type and payload sha256 of the events of the types the re-execution reads
(:data:`~aborist.audit.deep.DEEP_EVENT_TYPES`); it reads those events and their blobs
itself and refuses any event that is not the one this process saw (pickling the payloads
through a pipe cost the sender more than the worker's reads). If it fails in any way,
the batches it held, and every later one, are re-executed here.
"""

from __future__ import annotations

import gc
import multiprocessing
import queue
import threading
from collections import deque
from collections.abc import Sequence
from contextlib import suppress
from hashlib import sha256
from typing import Any

from sqlalchemy.engine import URL

from aborist.audit.checks.blobs import BlobCache, referenced_blobs
from aborist.audit.checks.run_events import RunEvents
from aborist.audit.deep import DEEP_EVENT_TYPES, reexecute_run
from aborist.audit.evidence_memo import EvidenceMemo
from aborist.audit.findings import Divergence, ReplayReport
from aborist.errors import AboristError
from ledger.store import Ledger

__all__ = ["SHAPE_ERRORS", "DeepBatches", "DeepWorker", "reexecute_batch", "unreadable_run"]

SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError)
#: Batches the worker holds at most (one re-executing, one waiting): more and the
#: replay's process waits for it; fewer and it waits for the replay's process.
IN_FLIGHT = 2

Batch = Sequence[tuple[RunEvents, str]]  # (run, status) in the order the runs finished


def unreadable_run(report: ReplayReport, run: RunEvents, e: Exception) -> None:
    """A run whose payloads are not what the pipeline records: reported under ``dag``."""
    bad = run.unreadable({ev.type for ev in run.events})  # every payload parsed: name it
    report.runs["unreadable"] = report.runs.get("unreadable", 0) + 1
    report.diverge(
        Divergence("dag", bad.seq if bad else None, run.run_id, None,
                   "payloads as the pipeline records them",
                   f"{type(e).__name__}: {e}", bad.type if bad else "")
    )  # fmt: skip


def reexecute_batch(cache: BlobCache, memo: EvidenceMemo, batch: Batch) -> ReplayReport:
    """Re-execute ``batch``'s runs in order, after reading every blob they reference in one
    go; what they found, and each run's status, in a report of its own."""
    part = ReplayReport()
    wanted: list[str] = []
    for run, _ in batch:
        with suppress(*SHAPE_ERRORS):  # the run's own re-execution reports it
            wanted.extend(ref.blob for ref in referenced_blobs(run.run_id, run))
    cache.prefetch(wanted)
    runs = part.runs
    for run, status in batch:
        try:
            reexecute_run(cache, run.run_id, run, part, memo)
        except SHAPE_ERRORS as e:
            unreadable_run(part, run, e)
            continue
        runs[status] = runs.get(status, 0) + 1
    return part


#: A batch as the worker gets it: per run, its id, status, and the seq, type and payload
#: sha256 of each event of the types the re-execution reads. The worker reads those
#: events through its own connection and checks each is the one this process saw.
Job = list[tuple[str, str, list[tuple[int, str, str]]]]


def _job(batch: Batch) -> Job:
    return [
        (run.run_id, status,
         [(ev.seq, ev.type, run.digest(ev)) for ev in run.events if ev.type in DEEP_EVENT_TYPES])
        for run, status in batch
    ]  # fmt: skip


def _runs_of(ledger: Ledger, job: Job) -> list[tuple[RunEvents, str]]:
    """The job's runs, their events read from ``ledger``; :class:`AboristError` if any is
    missing or not the event the replay's process saw (the ledger changed under it)."""
    rows = ledger.events_at([seq for _, _, events in job for seq, _, _ in events])
    batch: list[tuple[RunEvents, str]] = []
    for rid, status, events in job:
        run = RunEvents(rid)
        for seq, type_, digest in events:
            ev = rows.get(seq)
            payload = ev.payload.encode("utf-8") if ev is not None else b""
            if ev is None or ev.type != type_ or sha256(payload).hexdigest() != digest:
                raise AboristError(f"event {seq} is not the one the replay read")
            run.append(ev, digest)
        batch.append((run, status))
    return batch


def _serve(url: URL, head: tuple[int, str], jobs: Any, results: Any) -> None:  # pragma: no cover
    """The worker's loop (runs in the forked process; the tests cover its results). A
    thread takes the jobs off the pipe as they come, so the replay's process never waits
    to hand one over."""
    inbox: queue.Queue[Job | None] = queue.Queue()

    def receive() -> None:
        try:
            while True:
                job = jobs.recv()
                inbox.put(job)
                if job is None:
                    return
        except (EOFError, OSError):
            inbox.put(None)

    try:
        gc.disable()  # as in the replay's process: its objects form no cycles
        with Ledger.open(url, check_schema=False) as ledger:
            seq, hash_ = head
            at = ledger.read(gt=seq - 1, lte=seq)
            if not at or at[0].hash != hash_:
                raise AboristError("the deep worker does not see the replay's ledger")
            cache, memo = BlobCache(ledger), EvidenceMemo()
            threading.Thread(target=receive, daemon=True).start()
            while (job := inbox.get()) is not None:
                results.send(("ok", reexecute_batch(cache, memo, _runs_of(ledger, job))))
    except BaseException as e:  # the parent re-executes what this held
        with suppress(Exception):
            results.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        results.close()


class DeepWorker:
    """A forked process re-executing the batches sent to it, in order."""

    def __init__(self, url: URL, head: tuple[int, str]) -> None:
        ctx = multiprocessing.get_context("fork")
        jobs_recv, self.jobs = ctx.Pipe(duplex=False)
        self.results, results_send = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(
            target=_serve, args=(url, head, jobs_recv, results_send),
            name="replay deep worker", daemon=True,
        )  # fmt: skip
        self.proc.start()
        jobs_recv.close()
        results_send.close()

    def send(self, batch: Batch) -> None:
        self.jobs.send(_job(batch))

    def ready(self) -> bool:
        return bool(self.results.poll())

    def receive(self) -> ReplayReport:
        """The next batch's findings; raises if the worker failed."""
        kind, value = self.results.recv()
        if kind != "ok" or not isinstance(value, ReplayReport):
            raise AboristError(f"the deep worker failed: {value}")
        return value

    def close(self) -> None:
        with suppress(Exception):
            self.jobs.send(None)
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join()
        self.jobs.close()
        self.results.close()


class _Entry:
    __slots__ = ("batch", "dag", "deep")

    def __init__(self, batch: Batch, dag: ReplayReport) -> None:
        self.batch = batch
        self.dag = dag
        self.deep: ReplayReport | None = None


class DeepBatches:
    """The batches of one replay, re-executed here or by ``worker``, merged into
    ``report`` in the order they were submitted."""

    def __init__(
        self, report: ReplayReport, cache: BlobCache, memo: EvidenceMemo,
        worker: DeepWorker | None = None,
    ) -> None:  # fmt: skip
        self.report = report
        self.cache = cache
        self.memo = memo
        self.worker = worker
        self.queue: deque[_Entry] = deque()  # submitted, not merged yet
        self.remote: deque[_Entry] = deque()  # sent to the worker, no findings yet

    def submit(self, batch: Batch, dag: ReplayReport) -> None:
        """Re-execute ``batch`` (here or in the worker); ``dag`` is what its runs' DAG
        checks found, merged just before its own findings."""
        entry = _Entry(batch, dag)
        self.queue.append(entry)
        self._collect(block=False)
        worker, sent = self.worker, False
        if worker is not None and len(self.remote) < IN_FLIGHT:
            try:
                worker.send(batch)
                sent = True
            except Exception:  # the worker is gone: everything is done here from now on
                self._lose_worker()
            else:
                self.remote.append(entry)
        if not sent:
            entry.deep = reexecute_batch(self.cache, self.memo, batch)
        self._merge()

    def finish(self) -> None:
        """Wait for the worker's last batches, merge everything, and stop the worker."""
        self._collect(block=True)
        self._merge()
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def close(self) -> None:
        """Stop the worker, if any (the replay failed, or is done)."""
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def _collect(self, block: bool) -> None:
        worker = self.worker
        while self.remote and worker is not None:
            if not block and not worker.ready():
                return
            try:
                self.remote[0].deep = worker.receive()
            except Exception:
                self._lose_worker()
                return
            self.remote.popleft()

    def _lose_worker(self) -> None:
        """The worker failed: re-execute here what it held."""
        if self.worker is not None:
            self.worker.close()
            self.worker = None
        while self.remote:
            entry = self.remote.popleft()
            entry.deep = reexecute_batch(self.cache, self.memo, entry.batch)

    def _merge(self) -> None:
        q = self.queue
        while q and (deep := q[0].deep) is not None:
            self.report.merge(q.popleft().dag)
            self.report.merge(deep)
