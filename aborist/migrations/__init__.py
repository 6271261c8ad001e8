"""aborist's migration branch (label ``aborist``): the pipeline's read models
(``providence_cache``, ``runs``, ``run_dag_nodes``), grown from the ledger branch's first
revision. :func:`upgrade` brings a database to the head of both branches; it is what
``aborist-ledger migrate`` runs.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from ledger.migrate import upgrade as upgrade_ledger

__all__ = ["BRANCH", "HEAD_REVISION", "upgrade", "versions_dir"]

#: aborist's branch label.
BRANCH = "aborist"
#: The newest revision of the aborist branch (the runs projection needs it);
#: tests/ledger/test_migrate.py checks it against Alembic.
HEAD_REVISION = "0003_runs_finished_seq"


def versions_dir() -> Path:
    """The aborist branch's revision scripts."""
    return Path(__file__).resolve().parent / "versions"


def upgrade(engine: Engine) -> tuple[frozenset[str], frozenset[str]]:
    """Upgrade the ledger branch and aborist's to their heads; returns the recorded heads
    before and after."""
    return upgrade_ledger(engine, version_locations=[versions_dir()])
