"""Ledger append and verify throughput against raw hash-chain baselines.

What is measured, each case against its baselines in the same run, interleaved transaction
by transaction (who goes first rotates) so that load bursts and disk stalls on a shared
machine hit every contender alike; each run uses fresh databases; medians of ``--runs``:

* ``Ledger.append`` at one event per transaction and 100 per transaction, on SQLite
  (``synchronous`` FULL and NORMAL, WAL) and PostgreSQL;
* a **raw sqlite3** hash chain doing the same work with the stdlib driver only: same
  migrated table (columns, unique indexes, triggers), WAL, same ``synchronous``,
  ``BEGIN IMMEDIATE``, read head ``(seq, hash)`` and the stream's last position, RFC 8785
  payload, sha256, the same event hash (reimplemented with ``hashlib`` over the ledger's
  canonical JSON, or over ``rfc8785`` with ``--baseline-jcs rfc8785``), insert, commit.
  Its rows are checked with :func:`ledger.chain.verify_chain` in run 1, so the baseline
  cannot be faster by being wrong;
* a **raw psycopg** chain for PostgreSQL: the same statements, *with* the same
  ``pg_advisory_xact_lock`` the ledger takes, so the PostgreSQL ratio is like for like;
* **eventsourcing** ``SQLiteApplicationRecorder.insert_events`` (same ``synchronous``), the
  canonical payload as ``state``: a mature event store with no hash chain, for scale;
* ``verify``: :func:`ledger.verify.verify_ledger` against a raw re-hash of the same rows
  (one SELECT, payload sha256, event hash, link, gapless ``seq`` and stream positions).

Targets: append time within 1.25x of the raw baseline at the same durability
setting; ``verify`` within 2x of the raw re-hash. Ratio = median ours time / median
baseline time. ``--profile`` adds a cProfile of one-event-per-transaction appends on SQLite
NORMAL, grouped by component.

Run: ``.venv/bin/python bench/ledger_append.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import sqlite3
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import rfc8785
from _common import (
    DEFAULT_PG_URL,
    Batch,
    Comparison,
    InPgSchema,
    PgUnavailable,
    SqliteFiles,
    Stepper,
    count,
    environment_line,
    markdown_table,
    pg_connect_kwargs,
    pg_schema,
    pg_server_version,
    profile_by_component,
    time_interleaved,
    time_rotated,
    workload,
)

from ledger.canonical import canonical_json
from ledger.chain import verify_chain
from ledger.envelope import EVENT_HASH_DOMAIN, GENESIS_HASH, NewEvent
from ledger.store import PG_APPEND_LOCK_KEY, Ledger
from ledger.verify import verify_ledger

Timer = Callable[[], float]

APPEND_TARGET = 1.25
VERIFY_TARGET = 2.0
COLUMNS = (
    "seq, event_id, stream, stream_seq, type, type_version, recorded_at, "
    "payload, payload_hash, prev_hash, hash"
)
HEAD_SQL = "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"
SELECT_ALL = f"SELECT {COLUMNS} FROM events ORDER BY seq"
STREAM_POS_SQL = "SELECT MAX(stream_seq) FROM events WHERE stream = %s"
INSERT_SQL = f"INSERT INTO events ({COLUMNS}) VALUES ({', '.join(['%s'] * 11)})"
QMARK = {sql: sql.replace("%s", "?") for sql in (STREAM_POS_SQL, INSERT_SQL)}  # sqlite3 style


# -- the raw chain (what an expert writes by hand) --------------------------------------------

# The raw baselines' canonical JSON: by default the ledger's own encoder (a pure function), so
# that a ratio measures the store's overhead and not two encoders; ``--baseline-jcs rfc8785``
# uses the ``rfc8785`` package instead, as the baseline was first described.
JCS_ENCODERS: dict[str, Callable[[Any], bytes]] = {
    "ledger": canonical_json,
    "rfc8785": rfc8785.dumps,
}
_jcs: Callable[[Any], bytes] = canonical_json


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _event_hash(seq: int, eid: str, stream: str, sseq: int, type_: str, version: int,
                at: str, payload_hash: str, prev: str) -> str:  # fmt: skip
    header: dict[str, Any] = {
        "event_id": eid, "payload_hash": payload_hash, "prev_hash": prev, "recorded_at": at,
        "seq": seq, "stream": stream, "stream_seq": sseq, "type": type_,
        "type_version": version,
    }  # fmt: skip
    return hashlib.sha256(EVENT_HASH_DOMAIN + _jcs(header)).hexdigest()


def _chain_rows(
    stream: str, events: list[tuple[str, dict[str, Any]]], seq: int, prev: str, pos: int
) -> list[tuple[Any, ...]]:
    rows = []
    for type_, data in events:
        text = _jcs(data)
        payload_hash = hashlib.sha256(text).hexdigest()
        seq += 1
        pos += 1
        eid, at = str(uuid.uuid4()), _now()
        h = _event_hash(seq, eid, stream, pos, type_, 1, at, payload_hash, prev)
        rows.append((seq, eid, stream, pos, type_, 1, at, text.decode(), payload_hash, prev, h))
        prev = h
    return rows


class RawSqlite:
    """The raw sqlite3 chain: stdlib driver, one connection, one transaction per batch."""

    def __init__(self, path: Path, batches: Sequence[Batch], synchronous: str, check: bool):
        self.path, self.batches, self.check = path, batches, check
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA busy_timeout = 60000")
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute(f"PRAGMA synchronous = {synchronous}")

    def step(self, i: int) -> None:
        stream, events = self.batches[i]
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                head = conn.execute(HEAD_SQL).fetchone()
                seq, prev = (head[0], head[1]) if head else (0, GENESIS_HASH)
                pos = conn.execute(QMARK[STREAM_POS_SQL], (stream,)).fetchone()[0]
                rows = _chain_rows(stream, events, seq, prev, pos or 0)
                conn.executemany(QMARK[INSERT_SQL], rows)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except BaseException as e:
            _step_failed(e, "raw sqlite3", i, len(self.batches), str(self.path))
            raise

    def close(self) -> None:
        self.conn.close()
        if self.check:
            check_chain(f"sqlite:///{self.path}", count(self.batches))


class RawPg:
    """The raw psycopg chain, taking the same advisory lock as the ledger."""

    def __init__(self, connect: dict[str, Any], batches: Sequence[Batch]):
        import psycopg

        self.batches = batches
        self.where = f"schema {connect.get('options', '')}"
        self.conn = psycopg.connect(**connect, autocommit=False)

    def step(self, i: int) -> None:
        stream, events = self.batches[i]
        try:
            with self.conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (PG_APPEND_LOCK_KEY,))
                head = cur.execute(HEAD_SQL).fetchone()
                seq, prev = (head[0], head[1]) if head else (0, GENESIS_HASH)
                pos = cur.execute(STREAM_POS_SQL, (stream,)).fetchone()
                cur.executemany(
                    INSERT_SQL, _chain_rows(stream, events, seq, prev, (pos or [0])[0] or 0)
                )
            self.conn.commit()
        except BaseException as e:
            _step_failed(e, "raw psycopg", i, len(self.batches), self.where)
            raise

    def close(self) -> None:
        self.conn.close()


class Ours:
    """``Ledger.append``; ``NewEvent`` objects are built before timing starts."""

    def __init__(
        self, url: str, batches: Sequence[Batch], synchronous: str = "FULL", check: bool = False
    ):
        self.prepared = [(stream, [NewEvent(t, p) for t, p in evs]) for stream, evs in batches]
        self.url, self.check, self.expected = url, check, count(batches)
        self.ledger = Ledger.open(url, sqlite_synchronous=synchronous)

    def step(self, i: int) -> None:
        stream, events = self.prepared[i]
        try:
            self.ledger.append(stream, events)
        except BaseException as e:
            _step_failed(e, "Ledger.append", i, len(self.prepared), self.ledger.where)
            raise

    def close(self) -> None:
        self.ledger.close()
        if self.check:
            check_chain(self.url, self.expected, "ours")


def fill(url: str, batches: Sequence[Batch]) -> None:
    with Ledger.open(url, sqlite_synchronous="NORMAL") as ledger:
        for stream, events in batches:
            ledger.append(stream, [NewEvent(t, p) for t, p in events])


def _step_failed(error: BaseException, who: str, i: int, steps: int, where: str) -> None:
    """Name the contender, step and database on a failed step's exception (a note, shown
    with its traceback), so a failure is never reported as only what it left behind."""
    error.add_note(f"bench: {who} failed at step {i + 1} of {steps} on {where}")


def check_chain(url: str, expected: int, who: str = "baseline") -> None:
    """Refuse a chain (a baseline's, or ours) that the ledger's own verifier rejects, or
    that holds other than the ``expected`` events; the message says what the database
    holds (rows, head seq) beside what the verifier checked."""
    with Ledger.open(url) as ledger:
        report = verify_chain(ledger.iter_events())
        rows, max_seq = ledger.fetch("SELECT COUNT(*), MAX(seq) FROM events")[0]
        where = ledger.where
    if report.ok and report.events_checked == expected and rows == expected:
        return
    failure = report.failure.message() if report.failure else "no failure in the rows read"
    raise SystemExit(
        f"{who} chain at {where} is wrong: expected {expected} events; the table holds "
        f"{rows} rows (max seq {max_seq}); verify_chain checked {report.events_checked} "
        f"(head seq {report.head_seq}): {failure}"
    )


# -- eventsourcing (second baseline, no hash chain) ------------------------------------------


class EsSqlite:
    """eventsourcing's ``SQLiteApplicationRecorder.insert_events``, one call per batch."""

    def __init__(self, path: Path, batches: Sequence[Batch], synchronous: str):
        from eventsourcing.persistence import StoredEvent
        from eventsourcing.sqlite import (
            SQLiteApplicationRecorder,
            SQLiteConnection,
            SQLiteConnectionPool,
            SQLiteDatastore,
        )

        class Pool(SQLiteConnectionPool):  # eventsourcing has no synchronous setting
            def _create_connection(self) -> SQLiteConnection:
                conn = super()._create_connection()
                conn._sqlite_conn.execute(f"PRAGMA synchronous = {synchronous}")
                return conn

        self.datastore = SQLiteDatastore(str(path))
        self.datastore.pool.close()
        self.datastore.pool = Pool(db_name=str(path))
        self.recorder = SQLiteApplicationRecorder(self.datastore)
        self.recorder.create_table()
        self.batches, self.make, self.path = batches, StoredEvent, str(path)
        self.versions: dict[str, int] = {}

    def step(self, i: int) -> None:
        stream, events = self.batches[i]
        oid = uuid.uuid5(uuid.NAMESPACE_URL, stream)
        stored = []
        for type_, data in events:
            self.versions[stream] = v = self.versions.get(stream, 0) + 1
            stored.append(self.make(oid, v, type_, _jcs(data)))
        try:
            self.recorder.insert_events(stored)
        except BaseException as e:
            _step_failed(e, "eventsourcing", i, len(self.batches), self.path)
            raise

    def close(self) -> None:
        self.datastore.close()


# -- verify -----------------------------------------------------------------------------------


def raw_rehash(rows: Iterable[Sequence[Any]]) -> int:
    """Check every row as :func:`verify_chain` does; returns how many were checked."""
    prev, expected = GENESIS_HASH, 1
    streams: dict[str, int] = {}
    for seq, eid, stream, sseq, type_, ver, at, text, payload_hash, prev_hash, h in rows:
        if seq != expected or prev_hash != prev or sseq != streams.get(stream, 0) + 1:
            raise SystemExit(f"raw re-hash: chain broken at seq {seq}")
        if hashlib.sha256(text.encode()).hexdigest() != payload_hash:
            raise SystemExit(f"raw re-hash: payload hash mismatch at seq {seq}")
        if _event_hash(seq, eid, stream, sseq, type_, ver, at, payload_hash, prev) != h:
            raise SystemExit(f"raw re-hash: event hash mismatch at seq {seq}")
        streams[stream], prev, expected = sseq, h, expected + 1
    return expected - 1


def _timed_rehash(rows: Callable[[], Iterable[Sequence[Any]]], expected: int) -> float:
    start = time.perf_counter()
    checked = raw_rehash(rows())
    elapsed = time.perf_counter() - start
    if checked != expected:
        raise SystemExit(f"raw re-hash checked {checked} events, expected {expected}")
    return elapsed


def raw_rehash_sqlite(path: Path, expected: int) -> float:
    with closing(sqlite3.connect(path)) as conn:
        return _timed_rehash(lambda: conn.execute(SELECT_ALL), expected)


def raw_rehash_pg(connect: dict[str, Any], expected: int) -> float:
    import psycopg

    with psycopg.connect(**connect) as conn, conn.cursor(name="rehash") as cur:
        return _timed_rehash(lambda: cur.execute(SELECT_ALL), expected)  # server-side cursor


def copy_to_pg(sqlite_file: Path, connect: dict[str, Any]) -> None:
    """Copy a SQLite ledger's rows into an empty PostgreSQL ledger (fast set-up for verify)."""
    import psycopg

    src = sqlite3.connect(sqlite_file)
    try:
        with (
            psycopg.connect(**connect) as conn,
            conn.cursor() as cur,
            cur.copy(f"COPY events ({COLUMNS}) FROM STDIN") as copy,
        ):
            for row in src.execute(SELECT_ALL):
                copy.write_row(row)
    finally:
        src.close()


def ours_verify(ledger: Ledger, expected: int) -> float:
    start = time.perf_counter()
    report = verify_ledger(ledger)
    elapsed = time.perf_counter() - start
    if not report.ok or report.chain.events_checked != expected:
        raise SystemExit(f"verify_ledger failed on the benchmark ledger: {report.to_dict()}")
    return elapsed


# -- the cases --------------------------------------------------------------------------------


def _done(what: str, n: int, runs: int) -> None:
    print(f"  done: {what} ({n} events x {runs} runs)", file=sys.stderr)


def _ours_pg(batches: Sequence[Batch], url: str, _schema: str) -> Stepper:
    return Ours(url, batches)


def _raw_pg(batches: Sequence[Batch], admin_url: str, _url: str, schema: str) -> Stepper:
    return RawPg(pg_connect_kwargs(admin_url, schema), batches)


def bench_sqlite(files: SqliteFiles, args: argparse.Namespace) -> list[Comparison]:
    out = []
    for sync in ("FULL", "NORMAL"):
        for per_tx in (1, 100):
            n = args.fsync_events if (sync, per_tx) == ("FULL", 1) else args.events
            b = workload(n, per_tx)
            n, case = count(b), f"append SQLite {sync}, {per_tx}/tx"
            raw = Comparison(case, f"raw sqlite3 {sync}", n, APPEND_TARGET)
            es = Comparison(case, f"eventsourcing SQLite {sync}", n, None, ours=raw.ours)
            for run in range(args.runs):
                check = run == 0
                contenders: list[tuple[list[float], Callable[[], Stepper]]] = [
                    (raw.ours, partial(Ours, f"sqlite:///{files.fresh('ours')}", b, sync, check)),
                    (raw.base, partial(RawSqlite, files.fresh("raw"), b, sync, check)),
                    (es.base, partial(EsSqlite, files.empty("es"), b, sync)),
                ]
                time_interleaved(contenders, len(b), run)
            out += [raw, es]
            _done(case, n, args.runs)
    return out


def bench_pg(files: SqliteFiles, args: argparse.Namespace) -> list[Comparison]:
    url, out = args.pg_url, []
    for per_tx in (1, 100):
        b = workload(args.fsync_events if per_tx == 1 else args.events, per_tx)
        n, case = count(b), f"append PostgreSQL, {per_tx}/tx"
        raw = Comparison(case, "raw psycopg (+ advisory lock)", n, APPEND_TARGET)
        sq = Comparison(case, "raw sqlite3 FULL (issue pairing)", n, APPEND_TARGET, ours=raw.ours)
        for run in range(args.runs):
            check = partial(check_chain, expected=n) if run == 0 else None
            contenders: list[tuple[list[float], Callable[[], Stepper]]] = [
                (raw.ours, partial(InPgSchema, url, partial(_ours_pg, b))),
                (raw.base, partial(InPgSchema, url, partial(_raw_pg, b, url), check)),
                (sq.base, partial(RawSqlite, files.fresh("raw"), b, "FULL", False)),
            ]
            time_interleaved(contenders, len(b), run)
        out += [raw, sq]
        _done(case, n, args.runs)
    return out


def _verify_case(case: str, base: str, url: str, rehash: Timer, n: int, runs: int) -> Comparison:
    pair = Comparison(case, base, n, VERIFY_TARGET)
    with Ledger.open(url) as ledger:
        for run in range(runs):
            time_rotated([(pair.ours, partial(ours_verify, ledger, n)), (pair.base, rehash)], run)
    _done(case, n, runs)
    return pair


def bench_verify(files: SqliteFiles, args: argparse.Namespace, pg: bool) -> list[Comparison]:
    batches = workload(args.verify_events, 1000)
    n, path, runs = count(batches), files.fresh("verify"), args.runs
    fill(f"sqlite:///{path}", batches)
    out = [_verify_case("verify SQLite", "raw sqlite3 re-hash", f"sqlite:///{path}",
                        partial(raw_rehash_sqlite, path, n), n, runs)]  # fmt: skip
    if pg:
        with pg_schema(args.pg_url) as (schema_url, schema):
            connect = pg_connect_kwargs(args.pg_url, schema)
            copy_to_pg(path, connect)
            out.append(_verify_case("verify PostgreSQL", "raw psycopg re-hash", schema_url,
                                    partial(raw_rehash_pg, connect, n), n, runs))  # fmt: skip
    return out


PROFILE_COMPONENTS = (
    ("sqlite3 driver (C: execute, commit)", ("sqlite3.",)),
    ("SQLAlchemy (engine, pool, events, results)", ("sqlalchemy",)),
    ("canonical JSON (ledger.canonical, json, rfc8785)", ("canonical.py", "rfc8785", "json")),
    ("ledger code (store, envelope)", ("/ledger/",)),
    ("uuid4, utc_now, sha256", ("uuid", "datetime", "hashlib", "strftime")),
)


def profile_append(files: SqliteFiles, n_events: int) -> str:
    """cProfile of one-event-per-transaction appends on SQLite NORMAL, by component."""
    batches = workload(n_events, 1)
    prepared = [(stream, [NewEvent(t, p) for t, p in evs]) for stream, evs in batches]
    profiler = cProfile.Profile()
    with Ledger.open(f"sqlite:///{files.fresh('profile')}", sqlite_synchronous="NORMAL") as lg:
        profiler.enable()
        for stream, events in prepared:
            lg.append(stream, events)
        profiler.disable()
    head = (
        f"cProfile of {len(prepared)} appends of one event each, SQLite NORMAL (the profiler "
        "inflates call-heavy Python code: compare shares, not totals)"
    )
    return head + "\n\n" + profile_by_component(profiler, len(prepared), PROFILE_COMPONENTS)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0],
        epilog="Example: .venv/bin/python bench/ledger_append.py --quick --no-pg",
    )
    p.add_argument("--events", type=int, default=2000, help="events per append case (2000)")
    p.add_argument("--fsync-events", type=int, default=300,
                   help="events for the 1/tx cases that fsync every commit: SQLite FULL "
                        "and PostgreSQL (300)")  # fmt: skip
    p.add_argument("--verify-events", type=int, default=20_000, help="verify case (20000)")
    p.add_argument("--runs", type=int, default=5, help="runs per case; medians are shown (5)")
    p.add_argument("--pg-url", default=DEFAULT_PG_URL, help=f"({DEFAULT_PG_URL})")
    p.add_argument("--no-pg", action="store_true", help="skip PostgreSQL")
    p.add_argument("--baseline-jcs", choices=sorted(JCS_ENCODERS), default="ledger",
                   help="canonical JSON of the raw baselines (ledger)")  # fmt: skip
    p.add_argument("--quick", action="store_true", help="smoke run: small counts, 2 runs")
    p.add_argument("--profile", action="store_true", help="add a cProfile of SQLite NORMAL 1/tx")
    args = p.parse_args(argv)
    global _jcs
    _jcs = JCS_ENCODERS[args.baseline_jcs]
    if args.quick:
        args.events, args.fsync_events, args.verify_events, args.runs = 300, 40, 2000, 2

    notes = [f"raw baselines and eventsourcing canonicalize with: {args.baseline_jcs}"]
    pg = not args.no_pg
    if pg:
        try:
            notes.append(f"PostgreSQL {pg_server_version(args.pg_url)} at {args.pg_url}")
        except PgUnavailable as e:
            pg = False
            notes.append(f"PostgreSQL skipped: {e}")
            print(f"PostgreSQL skipped: {e}", file=sys.stderr)

    started = time.perf_counter()
    with SqliteFiles() as files:
        rows = bench_sqlite(files, args)
        if pg:
            rows += bench_pg(files, args)
            notes.append("eventsourcing on PostgreSQL not run: its recorder needs psycopg-pool")
        rows += bench_verify(files, args, pg)
        profile = profile_append(files, min(args.events, 1000)) if args.profile else ""

    print(f"## Ledger append / verify benchmark ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)\n")
    print(environment_line())
    for note in notes:
        print(note)
    print(f"median of {args.runs} runs; wall time {time.perf_counter() - started:.0f} s\n")
    print(markdown_table(Comparison.HEADERS, [c.row() for c in rows]))
    if profile:
        print("\n" + profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
