"""The ledger's write path: one driver connection held for the ledger's lifetime, and the
transactions that run on it.

Appends are the hot path (every pipeline stage is one), so they skip SQLAlchemy's
per-statement machinery and its per-transaction pool checkout: measured in
``bench/ledger_append.py``, that machinery cost more than the database work itself for
one-event transactions. Statements go straight to the DBAPI cursor; reads and schema work
still go through SQLAlchemy. Driver errors are re-raised as SQLAlchemy's ``DBAPIError``
subclasses, so :func:`ledger.store.translate_errors` remains the one place that maps them.

A lost connection (a server restart, say) is dropped, and the next transaction opens a new
one; the failed transaction itself is reported, never retried here.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import lru_cache
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

from ledger.rawtext import fetch_rows

__all__ = ["Tx", "Writer"]

_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@lru_cache(maxsize=256)
def _pyformat(sql: str) -> str:
    """``:name`` parameters (sqlite3's named style) as psycopg's ``%(name)s``."""
    return _NAMED.sub(r"%(\1)s", sql)


class Tx:
    """One write transaction as projections see it: SQL with ``:name`` parameters."""

    def __init__(self, cursor: Any, postgres: bool) -> None:
        self.cursor = cursor
        self._pg = postgres

    def _sql(self, sql: str) -> str:
        return _pyformat(sql) if self._pg else sql

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """Run one statement; returns its rows (empty for statements without any)."""
        rows = fetch_rows(self.cursor, self._sql(sql), dict(params or {}))
        return [] if rows is None else [tuple(r) for r in rows]

    def executemany(self, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
        if params:
            self.cursor.executemany(self._sql(sql), [dict(p) for p in params])


class Writer:
    """Serializes this process's writes on one held driver connection."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.postgres = engine.dialect.name == "postgresql"
        self._lock = threading.Lock()
        self._conn: Any = None
        self._dbapi_error: type[Exception] = engine.dialect.loaded_dbapi.Error

    def close(self) -> None:
        with self._lock:
            self._drop(invalidate=False)

    def _drop(self, *, invalidate: bool) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        with suppress(Exception):  # the connection is being discarded anyway
            if invalidate:
                conn.invalidate()
            else:
                conn.close()

    @contextmanager
    def transaction(self, *, durable: bool = False, read_only: bool = False) -> Iterator[Tx]:
        """BEGIN IMMEDIATE (SQLite) or an implicit transaction (PostgreSQL); COMMIT on
        success, ROLLBACK on any exception. ``durable`` makes a SQLite commit sync the WAL
        to disk whatever the connection's ``synchronous`` setting (and with it every
        earlier commit); PostgreSQL commits are durable already. ``read_only`` starts a
        deferred SQLite transaction instead, which takes no write lock: one consistent
        snapshot for the reads inside it, and writers elsewhere are never blocked."""
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = self.engine.raw_connection()
                conn = self._conn
                cursor = conn.cursor()
                relaxed: int | None = None
                if durable and not self.postgres:
                    cursor.execute("PRAGMA synchronous")
                    level = int(cursor.fetchone()[0])  # 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA
                    if level < 2:
                        relaxed = level
                        cursor.execute("PRAGMA synchronous = FULL")
                if not self.postgres:
                    cursor.execute("BEGIN" if read_only else "BEGIN IMMEDIATE")
            except self._dbapi_error as e:
                self._drop(invalidate=True)
                raise self._wrap(e) from e
            try:
                yield Tx(cursor, self.postgres)
                conn.commit()
            except BaseException as e:
                self._rollback(conn, cursor, e)
                if isinstance(e, self._dbapi_error):
                    raise self._wrap(e) from e
                raise
            finally:
                with suppress(self._dbapi_error):
                    if relaxed is not None and self._conn is conn:
                        cursor.execute(f"PRAGMA synchronous = {relaxed}")
                    cursor.close()

    def _rollback(self, conn: Any, cursor: Any, error: BaseException) -> None:
        lost = isinstance(error, self._dbapi_error) and self.engine.dialect.is_disconnect(
            error,  # type: ignore[arg-type]
            conn.dbapi_connection,
            cursor,
        )
        if lost:
            self._drop(invalidate=True)
            return
        try:
            conn.rollback()
        except self._dbapi_error:
            self._drop(invalidate=True)

    def _wrap(self, error: Exception) -> DBAPIError:
        wrapped = DBAPIError.instance(
            None, None, error, self._dbapi_error, dialect=self.engine.dialect
        )
        assert isinstance(wrapped, DBAPIError)
        return wrapped
