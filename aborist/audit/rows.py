"""The ledger's rows as replay reads them: every event once, in ``seq`` order, in pages.

Replay reads every row of the ledger; SQLAlchemy's row objects and per-statement
machinery cost more than the query itself at that volume, so the pages come straight from
the driver's cursor (SQLite or psycopg), one pool checkout per page, with the same
conversions :class:`ledger.store.Ledger` applies.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ledger.envelope import RecordedEvent
from ledger.store import Ledger, translate_errors

__all__ = ["PAGE", "event_pages", "events_at"]

#: Rows per page.
PAGE = 5000
#: Seqs per ``IN (...)`` query of :func:`events_at`.
_CHUNK = 500
_COLUMNS = (
    "seq, event_id, stream, stream_seq, type, type_version, recorded_at, "
    "payload, payload_hash, prev_hash, hash"
)


def _event(r: Any) -> RecordedEvent:
    return RecordedEvent(
        int(r[0]), str(r[1]), str(r[2]), int(r[3]), str(r[4]), int(r[5]),
        str(r[6]), str(r[7]), str(r[8]), str(r[9]), str(r[10]),
    )  # fmt: skip


def event_pages(
    ledger: Ledger, *, gt: int = 0, lte: int, size: int = PAGE
) -> Iterator[list[RecordedEvent]]:
    """The events with ``gt < seq <= lte`` in ``seq`` order, ``size`` rows per page."""
    mark = "%s" if ledger.reader.dialect.name == "postgresql" else "?"
    sql = (
        f"SELECT {_COLUMNS} FROM events WHERE seq > {mark} AND seq <= {mark} "
        f"ORDER BY seq LIMIT {mark}"
    )
    after = gt
    while after < lte:
        with translate_errors(ledger.where), ledger.reader.connect() as conn:
            cursor = conn.connection.cursor()
            try:
                cursor.execute(sql, (after, lte, size))
                rows = cursor.fetchall()
            finally:
                cursor.close()
        if not rows:
            return
        page = [_event(r) for r in rows]
        yield page
        after = page[-1].seq


def events_at(ledger: Ledger, seqs: Sequence[int]) -> dict[int, RecordedEvent]:
    """The events at ``seqs`` (those that exist), by seq, a few hundred per query."""
    mark = "%s" if ledger.reader.dialect.name == "postgresql" else "?"
    found: dict[int, RecordedEvent] = {}
    with translate_errors(ledger.where), ledger.reader.connect() as conn:
        cursor = conn.connection.cursor()
        try:
            for i in range(0, len(seqs), _CHUNK):
                part = list(seqs[i : i + _CHUNK])
                marks = ", ".join([mark] * len(part))
                cursor.execute(f"SELECT {_COLUMNS} FROM events WHERE seq IN ({marks})", part)
                for r in cursor.fetchall():
                    ev = _event(r)
                    found[ev.seq] = ev
        finally:
            cursor.close()
    return found
