"""What one application instance holds: its configuration, the ledger (opened on first
use, so an app built for a test needs no lifespan), the background replay jobs and the
pages' login sessions."""

from __future__ import annotations

import threading

from aborist.server.config import ServerConfig
from aborist.server.replay_jobs import ReplayJobs
from aborist.server.sessions import SessionStore
from ledger.store import Ledger

__all__ = ["AppState"]


class AppState:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.replays = ReplayJobs(config.ledger_url, config.replay_jobs_dir)
        self.sessions = SessionStore(config.sessions_dir, config.session_ttl_s)
        self._ledger: Ledger | None = None
        self._lock = threading.Lock()

    @property
    def ledger(self) -> Ledger:
        """The shared ledger. Its writer serializes appends on one connection (SQLite
        writes are serialized anyway); several processes share a PostgreSQL ledger."""
        if self._ledger is None:
            with self._lock:
                if self._ledger is None:
                    from aborist.projections import open_ledger

                    self._ledger = open_ledger(self.config.ledger_url)
        return self._ledger

    def close(self) -> None:
        with self._lock:
            if self._ledger is not None:
                self._ledger.close()
                self._ledger = None
