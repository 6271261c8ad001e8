"""Schema management: Alembic upgrade to head, and the check that refuses to work on a
database that was never migrated (or is behind)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine

__all__ = ["current_revision", "head_revision", "script_location", "upgrade"]


def script_location() -> Path:
    """The installed ``migrations`` package (shipped with aborist)."""
    import migrations

    return Path(migrations.__file__).resolve().parent


def _config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(script_location()))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


@lru_cache(maxsize=1)
def head_revision() -> str:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Upgrade the schema to head; returns (revision before, revision after)."""
    with engine.begin() as conn:
        before = current_revision(conn)
        command.upgrade(_config(conn), "head")
        after = current_revision(conn)
    assert after is not None
    return before, after
