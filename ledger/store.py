"""The event store: append (atomic, optimistic per stream, gapless global order), blobs,
checkpoints, and projections folded in the same transaction as the append. Its reads
(events, blobs, checkpoints, one snapshot) are :class:`ledger.reads.LedgerReads`, which
:class:`Ledger` extends.

Global order is decided under one lock per backend, held only for the few statements that
read the head and insert: SQLite's database write lock (``BEGIN IMMEDIATE``), and on
PostgreSQL a transaction-level advisory lock (``pg_advisory_xact_lock``), released at
commit. Payloads are canonicalized and validated *before* the lock is taken.

Every driver error is translated into :mod:`ledger.errors` in :func:`translate_errors`
(:mod:`ledger.reads`, re-exported here), the one place where SQLAlchemy and DBAPI
exceptions are looked at.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import Engine
from sqlalchemy.engine import URL

from ledger.canonical import sha256_hex
from ledger.engine import describe_url, ledger_engine, parse_url, sqlite_path
from ledger.envelope import GENESIS_HASH, NewEvent, RecordedEvent, event_hash, validate_stream
from ledger.envelope_check import check_event_id, check_recorded_at
from ledger.errors import (
    CheckpointError,
    ConcurrencyError,
    FoldError,
    NotMigratedError,
    PayloadError,
    UnavailableError,
)
from ledger.migrate import HEAD_REVISION, known_ledger_revisions, stored_revisions
from ledger.rawtext import UndecodableText
from ledger.reads import (
    EVENT_COLUMNS,
    Checkpoint,
    LedgerReads,
    row_to_event,
    stored_int,
    stored_type,
    translate_errors,
)
from ledger.writer import Tx, Writer

__all__ = [
    "Checkpoint",
    "Ledger",
    "Projection",
    "stored_int",
    "stored_type",
    "translate_errors",
    "utc_now",
]

# Arbitrary constant naming the ledger's append lock among PostgreSQL advisory locks.
PG_APPEND_LOCK_KEY = 0x61626F72  # "abor"

_EVENT_COLUMNS = EVENT_COLUMNS


def _exists(path: Path) -> bool:
    """Whether the SQLite file exists; a path that cannot be looked at (a name too long, a
    directory above it not searchable) is :class:`UnavailableError` naming why."""
    try:
        return path.exists()
    except OSError as e:
        raise UnavailableError(f"cannot use the ledger path {path}: {e.strerror or e}") from e


_SQLITE_HEADER = b"SQLite format 3\x00"


def _check_ledger_file(path: Path) -> None:
    """Refuse, before anything connects to it, a file at ``path`` that is not a ledger: an
    empty file, a file that is not SQLite, an SQLite database with no ledger schema.
    Connecting would change them (the first connection sets WAL mode, which writes an
    SQLite header into an empty file and the journal mode into another application's
    database); each is left as it is. An empty file beside a ``-wal`` file that holds
    data is a database whose first commits are still in the log, and is opened as one.
    ``aborist-ledger migrate`` (which does not come here) makes a ledger in an empty file."""
    try:
        with path.open("rb") as f:
            head = f.read(len(_SQLITE_HEADER))
        if not head:
            wal = path.with_name(path.name + "-wal")
            if wal.is_file() and wal.stat().st_size > 0:
                return
    except OSError as e:
        raise UnavailableError(f"cannot use the ledger path {path}: {e.strerror or e}") from e
    if not head:
        raise NotMigratedError(
            f"{path} is an empty file, not a ledger; it was left as it is (run "
            "`aborist-ledger migrate` to make a ledger there)"
        )
    if head != _SQLITE_HEADER:
        raise UnavailableError(
            f"{path} is not an SQLite database (nor a ledger); it was left as it is"
        )
    if _has_ledger_table(path) is False:
        raise NotMigratedError(
            f"{path} is an SQLite database with no ledger schema; it was left as it is "
            "(run `aborist-ledger migrate` to add the ledger's tables to it)"
        )


def _has_ledger_table(path: Path) -> bool | None:
    """Whether the SQLite database at ``path`` records schema revisions (``alembic_version``),
    read through a read-only connection that cannot change it; None when that cannot be
    told (the connection that follows then says why)."""
    import sqlite3
    from urllib.parse import quote

    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
    except (sqlite3.Error, OSError):
        return None
    try:
        row = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'"
        ).fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return row is not None


def utc_now() -> str:
    """RFC 3339 UTC timestamp with microseconds, e.g. ``2026-11-29T19:35:33.123456Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Projection(Protocol):
    """A read model folded from events inside the append transaction (``tx`` runs SQL with
    ``:name`` parameters on the writer's connection; see :class:`ledger.writer.Tx`).

    A projection that sets ``event_types`` (a frozenset of type names) is offered only
    events of those types, and its position in ``projection_positions`` is the seq of the
    last of them it folded: an append with none of them writes nothing of the
    projection's, not even its position (a filtered subscription, as an event store's
    tracking record for a process that follows some topics). Without the attribute, or
    with ``None``, every event is offered.

    A projection whose tables come from an application's migration branch names that
    branch's revision in ``revision``: opening the ledger then also requires it
    (:meth:`Ledger.check_schema`), so an unmigrated read model is refused up front."""

    name: str

    def apply(self, tx: Tx, events: Sequence[RecordedEvent]) -> None: ...

    def reset(self, tx: Tx) -> None: ...


class Ledger(LedgerReads):
    """An append-only, hash-chained event store over one SQLAlchemy engine."""

    def __init__(
        self,
        engine: Engine,
        *,
        projections: Sequence[Projection] = (),
        clock: Callable[[], str] = utc_now,
        check_schema: bool = True,
    ) -> None:
        self.engine = engine
        self.where = describe_url(engine.url)
        self.projections = list(projections)
        self._clock = clock
        # Writes, and the small reads a run makes (``fetch``, ``read``, blobs), go through
        # one held driver connection (ledger.writer); reads there run in deferred
        # transactions that take no write lock. ``reader`` is SQLAlchemy's way in, for
        # schema checks and the bulk scans that page through the whole ledger.
        self.reader = engine.execution_options(sqlite_begin="DEFERRED")
        self._writer = Writer(engine)
        self._pg = engine.dialect.name == "postgresql"
        ph = "%s" if self._pg else "?"
        self._insert_sql = f"INSERT INTO events ({_EVENT_COLUMNS}) VALUES ({', '.join([ph] * 11)})"
        self._positions_sql = (
            "SELECT (SELECT seq FROM events ORDER BY seq DESC LIMIT 1), "
            "(SELECT hash FROM events ORDER BY seq DESC LIMIT 1), "
            "(SELECT recorded_at FROM events ORDER BY seq DESC LIMIT 1), "
            f"(SELECT MAX(stream_seq) FROM events WHERE stream = {ph})"
        )
        self._ph = ph
        if check_schema:
            self.check_schema()

    @classmethod
    def open(
        cls,
        url: str | URL,
        *,
        sqlite_synchronous: str | None = None,
        projections: Sequence[Projection] = (),
        clock: Callable[[], str] = utc_now,
        check_schema: bool = True,
    ) -> Ledger:
        """Open an existing, migrated ledger (see :func:`ledger.migrate.upgrade`)."""
        parsed = parse_url(url)
        path = sqlite_path(parsed)
        if check_schema and path is not None and not _exists(path):
            raise NotMigratedError(
                f"no ledger at {path}; run `aborist-ledger migrate` to create it"
            )
        if check_schema and path is not None:
            _check_ledger_file(path)
        engine = ledger_engine(parsed, sqlite_synchronous=sqlite_synchronous)
        try:
            return cls(engine, projections=projections, clock=clock, check_schema=check_schema)
        except BaseException:
            engine.dispose()
            raise

    def close(self) -> None:
        self._writer.close()
        self.engine.dispose()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema -------------------------------------------------------------------------

    def check_schema(self) -> None:
        """Raise :class:`NotMigratedError` unless the ledger branch, and the branch of every
        projection that names a ``revision``, are at the revisions this code needs."""
        with translate_errors(self.where), self.reader.connect() as conn:
            found = stored_revisions(conn)
        if not found:
            raise NotMigratedError(
                f"{self.where} has no ledger schema; run `aborist-ledger migrate`"
            )
        needed = {HEAD_REVISION} | {
            r for p in self.projections if (r := getattr(p, "revision", None)) is not None
        }
        if not needed <= found:
            # a revision this code has no script for may come from a newer version, which
            # `migrate` cannot take back: say so rather than only "run migrate"
            unknown = sorted(found - needed - known_ledger_revisions())
            newer = (
                f" (if {', '.join(unknown)} comes from a newer aborist, use that version: "
                "migrate does not downgrade)"
                if unknown
                else ""
            )
            raise NotMigratedError(
                f"{self.where} is at schema revision {', '.join(sorted(found))}, expected "
                f"{', '.join(sorted(needed))}; run `aborist-ledger migrate`{newer}"
            )

    # -- append -------------------------------------------------------------------------

    def append(
        self,
        stream: str,
        events: Sequence[NewEvent],
        *,
        expected_stream_seq: int | None = None,
        blobs: Sequence[bytes] = (),
    ) -> list[RecordedEvent]:
        """Append ``events`` to ``stream`` atomically, with their ``blobs``.

        ``expected_stream_seq`` is the stream's current last position as the caller knows
        it (0 for a new stream); if another writer moved it, :class:`ConcurrencyError` is
        raised and nothing is written. All payloads are validated first, so a bad event
        in a batch writes nothing.
        """
        validate_stream(stream)
        if not events:
            raise PayloadError("append needs at least one event")
        prepared = []
        for ev in events:
            payload = ev.canonical_payload()
            event_id = ev.event_id or str(uuid.uuid4())
            if check_event_id(event_id) is not None:
                raise PayloadError(f"event_id {event_id!r}: {check_event_id(event_id)}")
            prepared.append((ev, payload, sha256_hex(payload.encode("utf-8")), event_id))
        blob_rows = [(sha256_hex(b), len(b), b) for b in blobs]

        with translate_errors(self.where), self._writer.transaction() as tx:
            cur = tx.cursor
            if self._pg:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (PG_APPEND_LOCK_KEY,))
            # Head and stream position in one statement, under the lock (one round trip).
            cur.execute(self._positions_sql, (stream,))
            head_seq, head_hash, head_at, pos = cur.fetchone()
            # The clock rule (docs/ledger-format.md): recorded_at never goes back with seq.
            last_at = head_at if check_recorded_at(head_at) is None else None
            seq, prev = (int(head_seq), str(head_hash)) if head_seq else (0, GENESIS_HASH)
            stream_seq = int(pos or 0)
            if expected_stream_seq is not None and expected_stream_seq != stream_seq:
                raise ConcurrencyError(
                    f"stream {stream!r} is at position {stream_seq}, expected "
                    f"{expected_stream_seq}; nothing was written"
                )
            rows, recorded = self._chain(stream, prepared, seq, prev, stream_seq, last_at)
            if blob_rows:
                self._insert_blobs(tx, blob_rows)
            if len(rows) == 1:
                cur.execute(self._insert_sql, rows[0])
            else:
                cur.executemany(self._insert_sql, rows)
            for projection in self.projections:
                folded = _offered(projection, recorded)
                if folded:
                    projection.apply(tx, folded)
                    _set_position(tx, projection.name, folded[-1].seq)
        return recorded

    def _chain(
        self,
        stream: str,
        prepared: Sequence[tuple[NewEvent, str, str, str]],
        seq: int,
        prev: str,
        stream_seq: int,
        last_at: str | None,
    ) -> tuple[list[tuple[Any, ...]], list[RecordedEvent]]:
        """The rows and recorded events of ``prepared`` chained after (``seq``, ``prev``):
        each event's seq, stream position, clock reading (never behind ``last_at``) and
        hash, in the order given."""
        rows: list[tuple[Any, ...]] = []
        recorded: list[RecordedEvent] = []
        for ev, payload, payload_hash, event_id in prepared:
            seq += 1
            stream_seq += 1
            recorded_at = self._clock()
            if check_recorded_at(recorded_at) is not None:
                raise PayloadError(
                    f"the clock gave recorded_at {recorded_at!r}; "
                    f"expected {check_recorded_at(recorded_at)}"
                )
            if last_at is not None and recorded_at < last_at:
                recorded_at = last_at
            last_at = recorded_at
            h = event_hash(
                seq=seq,
                event_id=event_id,
                stream=stream,
                stream_seq=stream_seq,
                type=ev.type,
                type_version=ev.type_version,
                recorded_at=recorded_at,
                payload_hash=payload_hash,
                prev_hash=prev,
            )
            rec = RecordedEvent(
                seq, event_id, stream, stream_seq, ev.type, ev.type_version,
                recorded_at, payload, payload_hash, prev, h,
            )  # fmt: skip
            recorded.append(rec)
            rows.append(
                (seq, event_id, stream, stream_seq, ev.type, ev.type_version,
                 recorded_at, payload, payload_hash, prev, h)
            )  # fmt: skip
            prev = h
        return rows, recorded

    # -- blobs --------------------------------------------------------------------------

    def _insert_blobs(self, tx: Tx, rows: Sequence[tuple[str, int, bytes]]) -> None:
        ph = self._ph
        verb = "INSERT" if self._pg else "INSERT OR IGNORE"
        tail = " ON CONFLICT (hash) DO NOTHING" if self._pg else ""
        tx.cursor.executemany(
            f"{verb} INTO blobs (hash, size, bytes) VALUES ({ph}, {ph}, {ph}){tail}", list(rows)
        )

    def put_blob(self, data: bytes) -> str:
        """Store ``data`` by its sha256 (idempotent); returns the hex hash."""
        h = sha256_hex(data)
        with translate_errors(self.where), self._writer.transaction() as tx:
            self._insert_blobs(tx, [(h, len(data), data)])
        return h

    # -- checkpoints --------------------------------------------------------------------

    def record_checkpoint(self, tree_size: int, root: str) -> Checkpoint:
        """Record ``(tree_size, root)``; if that size is already recorded, return it as is."""
        with translate_errors(self.where), self._writer.transaction(durable=True) as tx:
            return self.record_checkpoint_in(tx, tree_size, root)

    def record_checkpoint_in(self, tx: Tx, tree_size: int, root: str) -> Checkpoint:
        """:meth:`record_checkpoint` inside the caller's write transaction (the
        checkpoint's integration of the tiles, ledger/tlog/tiles.py, runs in the same one)."""
        rows = tx.execute(
            "SELECT tree_size, root, created_at FROM checkpoints WHERE tree_size = :n",
            {"n": tree_size},
        )
        if rows:
            stored = rows[0][1]
            if isinstance(stored, UndecodableText) or str(stored) != root:
                # never hand on (to print, sign or export) a recorded root the log does not
                # give: the checkpoints table was edited
                shown = "text that is not UTF-8" if isinstance(stored, UndecodableText) else stored
                raise CheckpointError(
                    f"the recorded checkpoint of size {tree_size} has root {shown!s}, but the "
                    f"events give {root}: the checkpoints table was edited (see "
                    "`aborist-ledger verify`)"
                )
            return Checkpoint(int(rows[0][0]), str(stored), str(rows[0][2]))
        cp = Checkpoint(tree_size, root, self._clock())
        tx.execute(
            "INSERT INTO checkpoints (tree_size, root, created_at) VALUES (:n, :r, :c)",
            {"n": cp.tree_size, "r": cp.root, "c": cp.created_at},
        )
        return cp

    # -- projections --------------------------------------------------------------------
    def rebuild_projections(self, *, batch_size: int = 5000) -> int:
        """Reset every projection and fold all events again, in one transaction."""
        count = 0
        page_sql = f"SELECT {_EVENT_COLUMNS} FROM events WHERE seq > :gt ORDER BY seq LIMIT :n"
        with translate_errors(self.where), self._writer.transaction() as tx:
            positions = {}
            for projection in self.projections:
                projection.reset(tx)
                positions[projection.name] = 0
            last = 0
            while True:
                page = [
                    row_to_event(r) for r in tx.execute(page_sql, {"gt": last, "n": batch_size})
                ]
                if not page:
                    break
                for projection in self.projections:
                    folded = _offered(projection, page)
                    if folded:
                        try:
                            projection.apply(tx, folded)
                        except (LookupError, TypeError, ValueError, AttributeError) as e:
                            raise FoldError(
                                f"projection {projection.name} cannot fold the events of seq "
                                f"{folded[0].seq}-{folded[-1].seq} ({type(e).__name__}: "
                                f"{str(e)[:200]}); nothing was rebuilt. `aborist-ledger "
                                "replay` names the event"
                            ) from e
                        positions[projection.name] = folded[-1].seq
                count += len(page)
                last = page[-1].seq
            for name, position in positions.items():
                _set_position(tx, name, position)
        return count


def _offered(projection: Projection, events: list[RecordedEvent]) -> list[RecordedEvent]:
    """The events ``projection`` folds: all of them, or those of its ``event_types``."""
    types: Collection[str] | None = getattr(projection, "event_types", None)
    if types is None:
        return events
    return [ev for ev in events if ev.type in types]


def _set_position(tx: Tx, name: str, position: int) -> None:
    tx.execute(
        "INSERT INTO projection_positions (name, position) VALUES (:n, :p) "
        "ON CONFLICT (name) DO UPDATE SET position = excluded.position",
        {"n": name, "p": position},
    )
