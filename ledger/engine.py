"""Build SQLAlchemy engines for the two backends, with the settings the ledger relies on.

SQLite: WAL journal; ``synchronous`` NORMAL by default (``ABORIST_SQLITE_SYNCHRONOUS``
or the ``sqlite_synchronous`` argument choose FULL, EXTRA or OFF): in WAL mode NORMAL never
corrupts the database and loses nothing when the *application* crashes; only an OS crash
or power loss can roll back the last commits, leaving a shorter but still valid chain.
Checkpoints are always written with a full sync (:meth:`ledger.writer.Writer.transaction`
``durable=True``), so a checkpoint never commits to events that could still be lost. A 60 s
busy timeout, and ``BEGIN IMMEDIATE`` for writing transactions so that two processes never
both read the same chain head. PostgreSQL: psycopg 3; appends serialize on a transaction-level
advisory lock (see :mod:`ledger.store`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from ledger.errors import ConfigurationError

__all__ = ["SQLITE_SYNCHRONOUS", "describe_url", "ledger_engine", "parse_url", "sqlite_path"]

SQLITE_SYNCHRONOUS = ("FULL", "NORMAL", "EXTRA", "OFF")
SQLITE_SYNC_ENV = "ABORIST_SQLITE_SYNCHRONOUS"
SQLITE_BUSY_TIMEOUT_MS = 60_000


def parse_url(url: str | URL) -> URL:
    """Parse and normalize a database URL, or raise :class:`ConfigurationError`."""
    if isinstance(url, URL):
        parsed = url
    else:
        if not isinstance(url, str) or not url.strip():
            raise ConfigurationError("database URL is empty")
        try:
            parsed = make_url(url.strip())
        except ArgumentError as e:
            raise ConfigurationError(f"malformed database URL {url!r}: {e}") from e
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        if parsed.drivername in ("postgresql", "postgres"):
            parsed = parsed.set(drivername="postgresql+psycopg")
        if not parsed.host and not parsed.query.get("host"):
            raise ConfigurationError(f"PostgreSQL URL {describe_url(parsed)} names no host")
    elif backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise ConfigurationError(
                "an in-memory SQLite ledger would vanish on exit; give a file path"
            )
    else:
        raise ConfigurationError(
            f"unsupported database {parsed.drivername!r} in {describe_url(parsed)}; "
            "use sqlite:///PATH or postgresql+psycopg://USER@HOST/DB"
        )
    return parsed


def describe_url(url: str | URL) -> str:
    """The URL with any password hidden, for messages."""
    if isinstance(url, URL):
        return url.render_as_string(hide_password=True)
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<malformed URL>"


def sqlite_path(url: URL) -> Path | None:
    return Path(url.database) if url.get_backend_name() == "sqlite" and url.database else None


def ledger_engine(
    url: str | URL, *, sqlite_synchronous: str | None = None, **kwargs: Any
) -> Engine:
    """An engine configured for the ledger. Does not connect."""
    parsed = parse_url(url)
    sync = (sqlite_synchronous or os.environ.get(SQLITE_SYNC_ENV) or "NORMAL").upper()
    if sync not in SQLITE_SYNCHRONOUS:
        raise ConfigurationError(
            f"sqlite synchronous ({SQLITE_SYNC_ENV}) must be one of "
            f"{', '.join(SQLITE_SYNCHRONOUS)}, not {sync!r}"
        )
    try:
        engine = create_engine(parsed, **kwargs)
    except (ArgumentError, NoSuchModuleError, ImportError, TypeError) as e:
        raise ConfigurationError(f"cannot use database URL {describe_url(parsed)}: {e}") from e
    if engine.dialect.name == "sqlite":
        _configure_sqlite(engine, sync)
    return engine


def _configure_sqlite(engine: Engine, synchronous: str) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Autocommit at the driver level; transactions are begun explicitly below.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute(f"PRAGMA synchronous = {synchronous}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "IMMEDIATE")
        conn.exec_driver_sql(f"BEGIN {mode}")
