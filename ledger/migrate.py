"""Schema management: Alembic upgrades, and the check that refuses to work on a database
that was never migrated (or is behind).

The ledger has its own migration branch (label ``ledger``, in ``ledger/migrations``):
its tables and triggers, nothing of any application. The label sits on 0004, the first
revision after the base that an application's branch also grows from (Alembic gives a
label to a revision and all its descendants), so ``ledger@head`` is the ledger's tip
alone. An application that keeps read
models in the same database adds its own branch by passing its revision directory to
:func:`upgrade` (``version_locations``); the branches share one ``alembic_version``
table, one row per branch head, so a change to an application's tables never moves the
ledger's revision.

Opening a ledger only *checks* the revisions, which needs neither Alembic nor its script
directory: :data:`HEAD_REVISION` names the ledger branch's newest migration (a test holds
it equal to the head Alembic computes), a projection may name the revision its tables
need (:attr:`ledger.store.Projection.revision`), and :func:`stored_revisions` reads
``alembic_version`` directly. Alembic is imported only to upgrade, which keeps it
(≈0.13 s of imports) out of every command's start-up.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "BRANCH",
    "HEAD_REVISION",
    "alembic_head",
    "current_revisions",
    "known_ledger_revisions",
    "script_location",
    "stored_revisions",
    "upgrade",
]

#: The ledger's branch label.
BRANCH = "ledger"
#: The newest revision of the ledger branch; tests/ledger/test_migrate.py checks it.
HEAD_REVISION = "0005_merkle_tiles"


def script_location() -> Path:
    """The ledger's Alembic environment (``env.py`` and its branch's ``versions/``)."""
    return Path(__file__).resolve().parent / "migrations"


def _config(connection: Connection | None = None, version_locations: Sequence[Path] = ()) -> Config:
    from alembic.config import Config

    cfg = Config()
    location = script_location()
    cfg.set_main_option("script_location", str(location))
    dirs = [location / "versions", *(Path(p) for p in version_locations)]
    # Alembic splits this option on the path separator it is told to use.
    cfg.set_main_option("path_separator", "newline")
    cfg.set_main_option("version_locations", "\n".join(str(d) for d in dirs))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def alembic_head(version_locations: Sequence[Path] = (), branch: str = BRANCH) -> str:
    """The head of ``branch`` as Alembic computes it from the revision scripts."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(_config(None, version_locations))
    head = script.get_revision(f"{branch}@head")
    assert head is not None
    return head.revision


@cache
def known_ledger_revisions() -> frozenset[str]:
    """The ledger branch's revisions this code has a script for (its ``versions/`` file
    names, which are the revision ids), read once."""
    return frozenset(p.stem for p in (script_location() / "versions").glob("[0-9]*.py"))


def stored_revisions(connection: Connection) -> frozenset[str]:
    """The branch heads recorded in the database (empty when it was never migrated),
    without Alembic: one look at the catalogue, one SELECT."""
    if not connection.dialect.has_table(connection, "alembic_version"):
        return frozenset()
    rows = connection.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    return frozenset(str(r[0]) for r in rows)


def current_revisions(connection: Connection) -> frozenset[str]:
    """The branch heads recorded in the database, as Alembic reads them."""
    from alembic.runtime.migration import MigrationContext

    return frozenset(MigrationContext.configure(connection).get_current_heads())


#: Alembic's command API keeps its environment in module globals (``alembic.context``):
#: two upgrades at once in one process tear each other's down. They take turns.
_ALEMBIC = threading.Lock()


def upgrade(
    engine: Engine, *, version_locations: Sequence[Path] = ()
) -> tuple[frozenset[str], frozenset[str]]:
    """Upgrade the ledger branch, and every branch in ``version_locations``, to its head;
    returns the recorded heads before and after."""
    from alembic import command

    with _ALEMBIC, engine.begin() as conn:
        before = current_revisions(conn)
        target = "heads" if version_locations else f"{BRANCH}@head"
        command.upgrade(_config(conn, version_locations), target)
        after = current_revisions(conn)
    assert after
    return before, after
