""" "Replay now" on the ledger page: :func:`aborist.audit.replay` (``--deep``) in a
background thread on its own ledger connection, one at a time, with its state and report
kept for the page to show.

Replay has no progress hook, so progress is what can be known honestly: the events it
set out to check (the head when it started) and the time it has been running.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aborist.errors import AboristError
from ledger.errors import LedgerError

__all__ = ["ReplayJob", "ReplayJobs"]

log = logging.getLogger("aborist.server")
KEEP = 20  # finished jobs remembered


@dataclass
class ReplayJob:
    job_id: str
    deep: bool
    started: float = field(default_factory=time.monotonic)
    state: str = "running"  # running, held, diverged, failed
    head_seq: int | None = None
    seconds: float | None = None
    report: dict[str, Any] | None = None
    error: str | None = None

    def elapsed(self) -> float:
        return self.seconds if self.seconds is not None else time.monotonic() - self.started

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id, "deep": self.deep, "state": self.state,
            "head_seq": self.head_seq, "seconds": round(self.elapsed(), 3),
            "report": self.report, "error": self.error,
        }  # fmt: skip


class ReplayJobs:
    def __init__(self, ledger_url: str) -> None:
        self.ledger_url = ledger_url
        self._jobs: dict[str, ReplayJob] = {}
        self._lock = threading.Lock()

    def get(self, job_id: str) -> ReplayJob | None:
        with self._lock:
            return self._jobs.get(job_id)

    def latest(self) -> ReplayJob | None:
        with self._lock:
            return next(reversed(self._jobs.values()), None)

    def start(self, *, deep: bool = True) -> ReplayJob:
        """A new job, or the one still running (two replays at once only compete)."""
        with self._lock:
            running = [j for j in self._jobs.values() if j.state == "running"]
            if running:
                return running[0]
            job = ReplayJob(uuid.uuid4().hex[:16], deep)
            self._jobs[job.job_id] = job
            while len(self._jobs) > KEEP:
                del self._jobs[next(iter(self._jobs))]
        threading.Thread(target=self._run, args=(job,), name="aborist-replay", daemon=True).start()
        return job

    def _run(self, job: ReplayJob) -> None:
        from aborist.audit import replay
        from aborist.projections import open_ledger

        try:
            lg = open_ledger(self.ledger_url)
            try:
                job.head_seq = lg.head()[0]
                report = replay(lg, deep=job.deep, parallel=False)
            finally:
                lg.close()
            job.report = report.to_dict()
            job.state = "held" if report.ok else "diverged"
        except (AboristError, LedgerError) as e:
            job.error, job.state = str(e), "failed"
        except Exception as e:  # the page shows a failure, the log keeps the details
            log.error("replay job %s failed", job.job_id, exc_info=e)
            job.error, job.state = "internal error; the server's log has the details", "failed"
        finally:
            job.seconds = time.monotonic() - job.started
