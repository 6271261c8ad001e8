"""Schema management: Alembic upgrade to head, and the check that refuses to work on a
database that was never migrated (or is behind).

Opening a ledger only *checks* the revision, which needs neither Alembic nor its script
directory: :data:`HEAD_REVISION` names the newest migration (a test holds it equal to the
head Alembic computes from ``migrations/versions``), and :func:`stored_revision` reads
Alembic's ``alembic_version`` table directly. Alembic itself is imported only to upgrade,
which keeps it (≈0.13 s of imports) out of every ``aborist`` command's start-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "HEAD_REVISION",
    "alembic_head",
    "current_revision",
    "head_revision",
    "script_location",
    "stored_revision",
    "upgrade",
]

# The newest revision under migrations/versions; tests/ledger/test_migrate.py checks it.
HEAD_REVISION = "0004_insert_guards"


def script_location() -> Path:
    """The installed ``migrations`` package (shipped with aborist)."""
    import migrations

    return Path(migrations.__file__).resolve().parent


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(script_location()))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """The schema revision this version of aborist works on."""
    return HEAD_REVISION


def alembic_head() -> str:
    """The head revision as Alembic computes it from the migration scripts."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def stored_revision(connection: Connection) -> str | None:
    """The revision recorded in the database (``None`` when it was never migrated),
    without Alembic: one look at the catalogue, one SELECT."""
    if not connection.dialect.has_table(connection, "alembic_version"):
        return None
    rows = connection.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    return ",".join(sorted(str(r[0]) for r in rows)) or None


def current_revision(connection: Connection) -> str | None:
    """The revision recorded in the database, as Alembic reads it."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Upgrade the schema to head; returns (revision before, revision after)."""
    from alembic import command

    with engine.begin() as conn:
        before = current_revision(conn)
        command.upgrade(_config(conn), "head")
        after = current_revision(conn)
    assert after is not None
    return before, after
