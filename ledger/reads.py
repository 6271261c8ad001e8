"""The ledger's reads: events by seq, stream and page, blobs by hash, checkpoints and
projection positions, and one snapshot of the head with whatever else a caller reads in it
(:meth:`LedgerReads.snapshot`), so no code outside ``ledger/`` writes SQL against the
ledger's tables. Also the row mapping every read shares (:func:`row_to_event`, with
:func:`stored_int` and :func:`stored_type` for rows a raw write altered) and the one
translation of driver errors into :class:`~ledger.errors.LedgerError` (:func:`translate_errors`).

:class:`~ledger.store.Ledger` is a :class:`LedgerReads`; the split is the one between
reading the store and appending to it (``ledger/store.py``).
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, ProgrammingError

from ledger.envelope import GENESIS_HASH, RecordedEvent
from ledger.errors import (
    BlobNotFoundError,
    ConcurrencyError,
    ImmutabilityError,
    LedgerError,
    NotMigratedError,
    ProofError,
    UnavailableError,
)
from ledger.rawtext import UndecodableText, fetch_rows
from ledger.writer import Writer

__all__ = [
    "EVENT_COLUMNS",
    "Checkpoint",
    "LedgerReads",
    "OffChainRow",
    "row_to_event",
    "stored_int",
    "stored_type",
    "translate_errors",
]

T = TypeVar("T")

EVENT_COLUMNS = (
    "seq, event_id, stream, stream_seq, type, type_version, recorded_at, "
    "payload, payload_hash, prev_hash, hash"
)
#: Addresses per ``IN (...)`` query: well under SQLite's and psycopg's parameter limits.
_CHUNK = 500


@dataclass(frozen=True, slots=True)
class OffChainRow:
    """A row of ``events`` that a pass over seqs ``1..head``, one row each, does not read
    exactly once (:meth:`LedgerReads.off_chain_row`): its values as stored, and why."""

    seq: Any
    stream: Any
    stream_seq: Any
    type: Any
    why: str

    def describe(self) -> str:
        return (f"a row at seq {self.seq!r} ({self.stream!s:.120}#{self.stream_seq!s:.20}, "
                f"{self.type!s:.200}): {self.why}")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Checkpoint:
    tree_size: int
    root: str
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"tree_size": self.tree_size, "root": self.root, "created_at": self.created_at}


@contextmanager
def _driver_errors_wrapped() -> Iterator[None]:
    """A driver's own error (from a raw DBAPI cursor, as :func:`~ledger.rawtext.fetch_rows`
    uses) raised as SQLAlchemy's wrapper of it: such an error bypassed every branch of
    :func:`translate_errors`, so a projection table an insider dropped ended ``replay``
    in a ``sqlite3.OperationalError: no such table: runs`` traceback."""
    try:
        yield
    except Exception as e:
        base: type[Exception] | None = sqlite3.Error if isinstance(e, sqlite3.Error) else None
        psycopg = sys.modules.get("psycopg")  # not imported: none of its errors can arise
        if base is None and psycopg is not None and isinstance(e, psycopg.Error):
            base = psycopg.Error
        if base is None:
            raise
        raise DBAPIError.instance(None, None, e, base) from e


@contextmanager
def translate_errors(where: str) -> Iterator[None]:
    """Map driver errors to :class:`LedgerError` subclasses; ``where`` names the database."""
    try:
        with _driver_errors_wrapped():
            yield
    except LedgerError:
        raise
    except IntegrityError as e:
        msg = str(e.orig)
        if "append-only" in msg:
            raise ImmutabilityError(f"{where}: {_first_line(msg)}") from e
        if ("stream" in msg and "stream_seq" in msg) or "uq_events_stream_position" in msg:
            raise ConcurrencyError(
                f"{where}: another writer appended to the stream first; nothing was written"
            ) from e
        raise LedgerError(f"{where}: integrity error: {_first_line(msg)}") from e
    except (OperationalError, ProgrammingError) as e:
        msg = str(e.orig)
        low = msg.lower()
        if "append-only" in low:
            raise ImmutabilityError(f"{where}: {_first_line(msg)}") from e
        if "no such table" in low or ("relation" in low and "does not exist" in low):
            raise NotMigratedError(
                f"{where} has no ledger schema; run `aborist-ledger migrate`"
            ) from e
        raise UnavailableError(f"{where}: {_first_line(msg)}") from e
    except DBAPIError as e:
        raise UnavailableError(f"{where}: {_first_line(str(e.orig))}") from e


def _first_line(msg: str) -> str:
    return msg.strip().splitlines()[0] if msg.strip() else "database error"


class LedgerReads:
    """The read methods of :class:`~ledger.store.Ledger` (which sets these attributes)."""

    where: str
    engine: Engine
    reader: Engine
    _writer: Writer
    _ph: str

    def get_blob(self, blob_hash: str) -> bytes:
        return self.get_blobs([blob_hash])[blob_hash]

    def get_blobs(self, blob_hashes: Sequence[str]) -> dict[str, bytes]:
        """Several blobs in one query; raises :class:`BlobNotFoundError` naming a missing one.

        A row whose value is not bytes (SQLite stores whatever an UPDATE gives it, e.g.
        ``CAST(bytes AS TEXT)`` once the triggers are dropped) holds no blob bytes under
        that hash either: :class:`BlobNotFoundError` says what it holds instead, so every
        caller that handles a missing blob handles it too (never a ``TypeError``)."""
        wanted = list(dict.fromkeys(blob_hashes))
        found: dict[str, bytes] = {}
        with translate_errors(self.where), self._writer.transaction(read_only=True) as tx:
            for i in range(0, len(wanted), _CHUNK):
                part = wanted[i : i + _CHUNK]
                names = ", ".join(f":h{j}" for j in range(len(part)))
                rows = tx.execute(
                    f"SELECT hash, bytes FROM blobs WHERE hash IN ({names})",
                    {f"h{j}": h for j, h in enumerate(part)},
                )
                for h, data in rows:
                    kind = stored_type(data)
                    if kind is not None:
                        raise BlobNotFoundError(f"blob {h} is stored as {kind}, not bytes")
                    found[str(h)] = bytes(data)
        missing = [h for h in wanted if h not in found]
        if missing:
            raise BlobNotFoundError(f"no blob with hash {missing[0]}")
        return found

    def iter_blobs(
        self, *, batch_size: int = 500
    ) -> Iterator[tuple[str, bytes | str | int | float | None]]:
        """Every blob as (stored hash, bytes): in rowid order on SQLite, hash order on
        PostgreSQL.

        The column is BLOB / ``bytea``, but SQLite keeps whatever type an UPDATE writes
        (``CAST(bytes AS TEXT)``, once the triggers are dropped): such a value comes back
        as the driver gives it (``str`` for TEXT, ``int``, ``float``, ``None``), not
        converted, so that a scan (``aborist-ledger verify``, ``replay``) can report the
        row rather than fail on it or hash a conversion of it."""
        if self._ph == "?":
            # SQLite pages by rowid: a hash column keeps whatever type an UPDATE wrote, and a
            # BLOB sorts after every TEXT, so paging by ``hash >`` would return a BLOB-typed
            # row on every page, forever. The rowid is an integer whatever the row holds.
            sql = "SELECT rowid, hash, bytes FROM blobs WHERE rowid > ? ORDER BY rowid LIMIT ?"
            after: Any = -(2**63)
        else:
            sql = "SELECT hash, hash, bytes FROM blobs WHERE hash > %s ORDER BY hash LIMIT %s"
            after = ""
        while True:
            with translate_errors(self.where), self.reader.connect() as conn:
                cursor = conn.connection.cursor()
                try:
                    rows = fetch_rows(cursor, sql, (after, batch_size)) or []
                finally:
                    cursor.close()
            if not rows:
                return
            for _, h, data in rows:
                yield str(h), data if stored_type(data) else bytes(data)
            after = rows[-1][0]

    def read_blobs(self, blob_hashes: Sequence[str]) -> dict[str, bytes | str]:
        """The blobs of ``blob_hashes`` that exist, a few hundred per query; a missing one
        is absent from the result (the caller names it), and a row holding no bytes maps
        to the SQL type it holds instead (``"TEXT"``, :func:`stored_type`), for an audit
        to report rather than fail on."""
        wanted = list(dict.fromkeys(blob_hashes))
        found: dict[str, bytes | str] = {}
        with translate_errors(self.where), self.reader.connect() as conn:
            cursor = conn.connection.cursor()
            try:
                for i in range(0, len(wanted), _CHUNK):
                    part = wanted[i : i + _CHUNK]
                    marks = ", ".join([self._ph] * len(part))
                    sql = f"SELECT hash, bytes FROM blobs WHERE hash IN ({marks})"
                    for h, b in fetch_rows(cursor, sql, part) or []:
                        kind = stored_type(b)
                        found[str(h)] = bytes(b) if kind is None else kind
            finally:
                cursor.close()
        return found

    # -- read ---------------------------------------------------------------------------

    def head(self) -> tuple[int, str]:
        """(last seq, its hash); (0, genesis) for an empty ledger."""
        with translate_errors(self.where), self.reader.connect() as conn:
            row = conn.exec_driver_sql(_HEAD_SQL).first()
        return _head_of(row)

    def read(
        self,
        *,
        gt: int = 0,
        lte: int | None = None,
        limit: int | None = None,
        stream: str | None = None,
        types: Sequence[str] | None = None,
    ) -> list[RecordedEvent]:
        """Events with ``gt < seq <= lte`` in seq order, optionally of one stream/types."""
        clauses = ["seq > :gt"]
        params: dict[str, Any] = {"gt": gt}
        if lte is not None:
            clauses.append("seq <= :lte")
            params["lte"] = lte
        if stream is not None:
            clauses.append("stream = :stream")
            params["stream"] = stream
        if types:
            names = []
            for i, t in enumerate(types):
                params[f"t{i}"] = t
                names.append(f":t{i}")
            clauses.append(f"type IN ({', '.join(names)})")
        # Within one stream, stream_seq order is seq order, and it walks the stream's index
        # instead of the whole table.
        order = "stream_seq" if stream is not None else "seq"
        sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE {' AND '.join(clauses)} ORDER BY {order}"
        if limit is not None:
            sql += " LIMIT :limit"
            params["limit"] = limit
        return [row_to_event(r) for r in self.fetch(sql, params)]

    def read_stream(self, stream: str, *, gt: int = 0) -> list[RecordedEvent]:
        """Every event of ``stream`` with ``stream_seq > gt``, in stream order."""
        rows = self.fetch(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE stream = :s AND stream_seq > :gt "
            "ORDER BY stream_seq",
            {"s": stream, "gt": gt},
        )
        return [row_to_event(r) for r in rows]

    def fetch(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """Rows of one read statement (``:name`` parameters), on the ledger's held
        connection: the cheap path for the small reads a run makes (a cache lookup, the
        events of one stream), without SQLAlchemy's per-statement machinery or a write
        lock. Projections' tables are read this way too."""
        with translate_errors(self.where), self._writer.transaction(read_only=True) as tx:
            return tx.execute(sql, params)

    def iter_events(
        self, *, gt: int = 0, lte: int | None = None, batch_size: int = 5000
    ) -> Iterator[RecordedEvent]:
        """All events in seq order, fetched in pages so memory stays flat."""
        cursor = gt
        while True:
            page = self.read(gt=cursor, lte=lte, limit=batch_size)
            if not page:
                return
            yield from page
            cursor = page[-1].seq

    def event_pages(
        self, *, gt: int = 0, lte: int, size: int = 5000
    ) -> Iterator[list[RecordedEvent]]:
        """The events with ``gt < seq <= lte`` in ``seq`` order, ``size`` rows per page.

        The audit's full scan: every row of the ledger comes through here, so the pages come
        straight from the driver's cursor, one pool checkout per page, without SQLAlchemy's
        row objects (which cost more than the query at that volume)."""
        sql = (
            f"SELECT {EVENT_COLUMNS} FROM events WHERE seq > {self._ph} AND seq <= {self._ph} "
            f"ORDER BY seq LIMIT {self._ph}"
        )
        after = gt
        while after < lte:
            with translate_errors(self.where), self.reader.connect() as conn:
                cursor = conn.connection.cursor()
                try:
                    rows = fetch_rows(cursor, sql, (after, lte, size)) or []
                finally:
                    cursor.close()
            if not rows:
                return
            page = [row_to_event(r) for r in rows]
            yield page
            after = page[-1].seq

    def events_at(self, seqs: Sequence[int], *, chunk: int = 500) -> dict[int, RecordedEvent]:
        """The events at ``seqs`` (those that exist), by seq, ``chunk`` seqs per query."""
        found: dict[int, RecordedEvent] = {}
        with translate_errors(self.where), self.reader.connect() as conn:
            cursor = conn.connection.cursor()
            try:
                for i in range(0, len(seqs), chunk):
                    part = list(seqs[i : i + chunk])
                    marks = ", ".join([self._ph] * len(part))
                    sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE seq IN ({marks})"
                    for r in fetch_rows(cursor, sql, part) or []:
                        ev = row_to_event(r)
                        found[ev.seq] = ev
            finally:
                cursor.close()
        return found

    def event_hashes(self, size: int | None = None) -> list[bytes]:
        """Raw event hashes of seq 1..size (all when None): the Merkle tree's entries. A row
        below seq 1 (a plain INSERT writes one) is no entry: it is never read here, and the
        chain check names it (:meth:`off_chain_row`)."""
        params: dict[str, Any] = {}
        sql = "SELECT hash FROM events WHERE seq >= 1"
        if size is not None:
            sql += " AND seq <= :n"
            params["n"] = size
        sql += " ORDER BY seq"
        with translate_errors(self.where), self.reader.connect() as conn:
            rows = conn.execute(text(sql), params).all()
        try:
            return [bytes.fromhex(r[0]) for r in rows]
        except (TypeError, ValueError):  # a raw write's hash: the chain check names it too
            seq, bad = next((i, r[0]) for i, r in enumerate(rows, 1) if not _is_hash(r[0]))
            raise ProofError(
                f"the hash of event {seq} is {bad!r}, not hex: the events give no Merkle tree"
            ) from None

    def off_chain_row(self, head: int) -> OffChainRow | None:
        """A row the chain's pass over seqs ``1..head`` (``seq > a AND seq <= b`` pages)
        does not read exactly once, or None when the rows at or below ``head`` are exactly
        one at each seq ``1..head``: a seq below 1 (a plain INSERT writes one: no trigger
        or constraint refuses it), NULL or not an integer (a table rebuilt without its
        primary key), or a seq two rows hold (a page ends inside them). Such a row is
        read by whatever reads a stream (a run's events) and never by the chain check.
        Rows above ``head`` are later appends (the caller's pass stopped at ``head``)."""
        with translate_errors(self.where), self.reader.connect() as conn:

            def rows(sql: str, **params: Any) -> list[Any]:
                return list(conn.execute(text(sql), params).all())

            odd = "seq IS NULL"
            if conn.dialect.name == "sqlite" and not _seq_is_rowid(conn):
                odd += " OR typeof(seq) <> 'integer'"
            [(n,)] = rows("SELECT COUNT(*) FROM events WHERE seq <= :h", h=head)
            [(n_odd,)] = rows(f"SELECT COUNT(*) FROM events WHERE {odd}")
            if n == head and not n_odd:
                return None
            cols = "seq, stream, stream_seq, type FROM events"
            found = rows(f"SELECT {cols} WHERE {odd} LIMIT 1")
            if found:
                why = "its seq is NULL" if found[0][0] is None else "its seq is not an integer"
                return _off_chain(found[0], f"{why}, so no pass over the chain reads it")
            found = rows(f"SELECT {cols} WHERE seq < 1 ORDER BY seq LIMIT 1")
            if found:
                return _off_chain(found[0], "a seq below 1, so no pass over the chain reads it")
            dup = rows("SELECT seq FROM events WHERE seq >= 1 AND seq <= :h GROUP BY seq "
                       "HAVING COUNT(*) > 1 ORDER BY seq LIMIT 1", h=head)  # fmt: skip
            if dup:
                found = rows(f"SELECT {cols} WHERE seq = :s", s=dup[0][0])
                return _off_chain(found[-1], f"{len(found)} rows hold seq {dup[0][0]}, so "
                                  "the chain's pass may read one of them only")  # fmt: skip
        return OffChainRow(None, None, None, None, f"{n} rows at seqs up to {head}, where "
                           f"the chain read {head}")  # fmt: skip

    def repeated_event_id(self, head: int, after: int = 0) -> list[int] | None:
        """The seqs (in order, among ``1..head``) of the events that hold one
        ``event_id`` (of the ids held more than once by some event past ``after``, the one
        first held earliest), or None when there is none. The ``UNIQUE`` constraint
        refuses a repeat, but an insider can drop it (or rebuild the table without it),
        and a reader that takes the id for the event (a consumer deduplicating by id)
        would then drop a chained event.
        Only seqs are read back: the id itself may be a value a raw write left undecodable."""
        where = "seq >= 1 AND seq <= :h"
        with translate_errors(self.where), self.reader.connect() as conn:
            first = conn.execute(
                text(f"SELECT MIN(seq) FROM events WHERE {where} GROUP BY event_id "
                     "HAVING COUNT(*) > 1 AND MAX(seq) > :a ORDER BY MIN(seq) LIMIT 1"),
                {"h": head, "a": after},
            ).scalar()  # fmt: skip
            if first is None:
                return None
            seqs = conn.execute(
                # IN, not =: a hostile table may hold two rows at one seq
                text(f"SELECT seq FROM events WHERE {where} AND event_id IN (SELECT event_id "
                     "FROM events WHERE seq = :f) ORDER BY seq"), {"h": head, "f": first},
            ).scalars().all()  # fmt: skip
        return [stored_int(q) for q in seqs]

    def snapshot(self, read: Callable[[Connection], T]) -> tuple[tuple[int, str], T]:
        """The head (as :meth:`head`) and ``read(conn)``, in one snapshot of the database
        (PostgreSQL: a REPEATABLE READ transaction; SQLite: one read transaction): what a
        projection's tables hold then reflects exactly the events up to that head."""
        reader = self.reader
        if reader.dialect.name == "postgresql":
            reader = reader.execution_options(isolation_level="REPEATABLE READ")
        with translate_errors(self.where), reader.connect() as conn:
            row = conn.exec_driver_sql(_HEAD_SQL).first()
            value = read(conn)
        return _head_of(row), value

    # -- checkpoints and projection positions ------------------------------------------

    def checkpoints(self) -> list[Checkpoint]:
        with translate_errors(self.where), self.reader.connect() as conn:
            cursor = conn.connection.cursor()
            try:
                sql = "SELECT tree_size, root, created_at FROM checkpoints ORDER BY tree_size"
                rows = fetch_rows(cursor, sql, ()) or []
            finally:
                cursor.close()
        # A raw write's values as stored (SQLite keeps any type): the audits name them.
        return [Checkpoint(stored_int(r[0]), r[1], r[2]) for r in rows]

    def projection_positions(self) -> dict[str, int]:
        with translate_errors(self.where), self.reader.connect() as conn:
            rows = conn.execute(text("SELECT name, position FROM projection_positions")).all()
        return {str(r[0]): int(r[1]) for r in rows}


def _is_hash(value: object) -> bool:
    try:
        bytes.fromhex(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


def _off_chain(row: Any, why: str) -> OffChainRow:
    return OffChainRow(row[0], row[1], row[2], row[3], why)


#: The head: the row of the largest seq (a NULL seq, which only a table rebuilt without its
#: key holds and PostgreSQL sorts first, is no head: ``off_chain_row`` names it).
_HEAD_SQL = "SELECT seq, hash FROM events WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1"


def _head_of(row: Any) -> tuple[int, str]:
    """(seq, hash) of the head row; a seq that is no integer (SQLite sorts text after every
    number) is one clear error, since no chain has such a head."""
    if row is None:
        return 0, GENESIS_HASH
    if type(row[0]) is not int:
        raise LedgerError(
            f"the events table holds a row at seq {str(row[0])[:40]!r}, which is not an "
            "integer: it is no event of the chain (a table rebuilt around the ledger); "
            "run `aborist-ledger verify`"
        )
    return row[0], str(row[1])


def _seq_is_rowid(conn: Connection) -> bool:
    """Whether SQLite's ``events.seq`` is the table's rowid (``INTEGER PRIMARY KEY``, as
    migrated): then it holds integers only, never NULL, and no scan need look."""
    cols = conn.exec_driver_sql("PRAGMA table_info(events)").all()
    pk = [c for c in cols if c[5]]
    sql = conn.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'"
    ).scalar()
    return (
        len(pk) == 1 and pk[0][1] == "seq" and str(pk[0][2]).upper() == "INTEGER"
        and "WITHOUT ROWID" not in str(sql).upper()
    )  # fmt: skip


def stored_int(value: Any) -> Any:
    """An integer column's value as an ``int``; anything else (SQLite keeps whatever a raw
    INSERT put in, e.g. the text ``'abc'``) as stored, for the envelope check to name."""
    if type(value) is int:
        return value
    if type(value) is str and value.isascii() and value.isdigit() and len(value) < 20:
        return int(value)
    return value


def stored_type(value: object) -> str | None:
    """None for bytes; else the SQL type the driver's value stands for (``TEXT``,
    ``INTEGER``, ``REAL``, ``NULL``): what a blob row holds when it holds no bytes."""
    if isinstance(value, bytes | bytearray | memoryview):
        return None
    if isinstance(value, str):
        return "TEXT"
    if isinstance(value, bool | int):
        return "INTEGER"
    if isinstance(value, float):
        return "REAL"
    return "NULL" if value is None else type(value).__name__


#: The driver's types of an ``events`` row as the schema stores it (:data:`EVENT_COLUMNS`).
_ROW_TYPES = (int, str, str, int, str, int, str, str, str, str, str)


def row_to_event(r: Any) -> RecordedEvent:
    """The :class:`RecordedEvent` of one ``events`` row: as it is when every value has
    its column's type (one C comparison of the types, the case of every honest row), else
    each value through :func:`stored_int` / ``str`` for the checks to name."""
    if tuple(map(type, r)) == _ROW_TYPES:
        return RecordedEvent(*r)
    return RecordedEvent(
        stored_int(r[0]), _text(r[1]), _text(r[2]), stored_int(r[3]), _text(r[4]),
        stored_int(r[5]), _text(r[6]), _text(r[7]), _text(r[8]), _text(r[9]), _text(r[10]),
    )  # fmt: skip


def _text(value: Any) -> str:
    """A text column's value as ``str``, an :class:`UndecodableText` kept as it is."""
    return value if isinstance(value, UndecodableText) else str(value)
