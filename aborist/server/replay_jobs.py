""" "Replay now" on the ledger page: :func:`aborist.audit.replay` (``--deep``) in a
background thread on its own ledger connection, one at a time, with its state and report
kept for the page to show.

Replay has no progress hook, so progress is what can be known honestly: the events it
set out to check (the head when it started) and the time it has been running.

With several worker processes the page that shows a job may be served by another worker
than the one running it, so each job is also written, as JSON, to a directory the workers
share (``jobs_dir``, made by ``aborist serve``); one worker process alone keeps them in
memory.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
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
    started: float = field(default_factory=time.time)
    state: str = "running"  # running, held, diverged, failed
    head_seq: int | None = None
    seconds: float | None = None
    report: dict[str, Any] | None = None
    error: str | None = None

    def elapsed(self) -> float:
        return self.seconds if self.seconds is not None else time.time() - self.started

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id, "deep": self.deep, "state": self.state,
            "head_seq": self.head_seq, "seconds": round(self.elapsed(), 3),
            "report": self.report, "error": self.error, "started": self.started,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ReplayJob:
        job = cls(str(d["job_id"]), bool(d["deep"]), started=float(d["started"]))
        job.state, job.head_seq, job.report, job.error = (
            d["state"], d["head_seq"], d["report"], d["error"],
        )  # fmt: skip
        job.seconds = d["seconds"] if job.state != "running" else None
        return job


class ReplayJobs:
    def __init__(self, ledger_url: str, jobs_dir: Path | None = None) -> None:
        self.ledger_url = ledger_url
        self.jobs_dir = jobs_dir
        self._jobs: dict[str, ReplayJob] = {}
        self._lock = threading.Lock()

    def get(self, job_id: str) -> ReplayJob | None:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is not None or self.jobs_dir is None or not job_id.isalnum():
            return job
        return self._load(self.jobs_dir / f"{job_id}.json")

    def latest(self) -> ReplayJob | None:
        if self.jobs_dir is not None:
            files = sorted(self.jobs_dir.glob("*.json"), key=lambda p: p.stat().st_mtime)
            return self._load(files[-1]) if files else None
        with self._lock:
            return next(reversed(self._jobs.values()), None)

    @staticmethod
    def _load(path: Path) -> ReplayJob | None:
        try:
            return ReplayJob.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _save(self, job: ReplayJob) -> None:
        if self.jobs_dir is None:
            return
        tmp = self.jobs_dir / f".{job.job_id}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(job.to_dict()), encoding="utf-8")
        tmp.replace(self.jobs_dir / f"{job.job_id}.json")  # readers never see half a file

    def start(self, *, deep: bool = True) -> ReplayJob:
        """A new job, or the one still running in this worker (two replays at once only
        compete)."""
        with self._lock:
            running = [j for j in self._jobs.values() if j.state == "running"]
            if running:
                return running[0]
            job = ReplayJob(uuid.uuid4().hex[:16], deep)
            self._jobs[job.job_id] = job
            while len(self._jobs) > KEEP:
                del self._jobs[next(iter(self._jobs))]
        self._save(job)
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
            job.seconds = time.time() - job.started
            self._save(job)
