"""The replay's ledger-wide pass (docs/replay.md): the checks that follow the events in
``seq`` order and need no run grouping, so that they can run in a forked process while
the replay's own process checks the runs (:mod:`aborist.audit.replay`).

- :func:`check_envelopes`: every envelope field of a page of events
  (:mod:`ledger.envelope_check`), each finding an ``envelope`` divergence at its seq;
- :func:`ledger_wide`: the chain over the events in scope (check 1) with the envelope
  check, and the projections folded into a scratch database and compared with the live
  tables (check 4); :func:`ledger_wide_forked` runs it in the forked process.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from hashlib import sha256
from typing import Any

from sqlalchemy.engine import URL

from aborist.audit.checks.projections_check import ProjectionCheck, Tables
from aborist.audit.findings import Divergence, ReplayReport
from ledger.chain import ChainReport, ChainVerifier
from ledger.envelope import RecordedEvent
from ledger.envelope_check import EnvelopeCheck
from ledger.store import Ledger

__all__ = ["RUN_PREFIX", "check_envelopes", "ledger_wide", "ledger_wide_forked"]

RUN_PREFIX = "run:"


def check_envelopes(
    check: EnvelopeCheck, page: Sequence[RecordedEvent], report: ReplayReport,
    parse: Collection[str] | None = None,
) -> list[Any]:  # fmt: skip
    """Every envelope field of ``page``'s events (:mod:`ledger.envelope_check`), each
    finding an ``envelope`` divergence at its seq; returns their payloads parsed (None
    for one the check refused), for the run checks to share. With ``parse``, a payload
    of another type that the check has shown valid before comes back unparsed
    (:data:`~ledger.envelope_check.CANONICAL_OBJECT`: no run check reads it)."""
    parsed, found = check.check_events(page, parse)
    for i, f in found:
        stream = page[i].stream
        run = stream[4:] if type(stream) is str and stream.startswith(RUN_PREFIX) else None
        report.diverge(Divergence("envelope", f.seq, run, None, f.expected, f.found, f.field))
    return parsed


def ledger_wide(
    ledger: Ledger, since: int, prev: str, head: int, run_id: str | None,
    live: Tables | None, full: bool, last_at: str | None = None,
    roots_at: Collection[int] = (), seed: Sequence[bytes] = (), roots_every: int = 0,
) -> tuple[ChainReport, ReplayReport | None]:  # fmt: skip
    """Checks 1 and 4 on their own pass over the events: the chain over the events in
    scope (with the tree roots at ``roots_at``, and every multiple of ``roots_every``,
    folded from the hashes it verified), and
    (``live`` given) the projections folded from every event up to ``head`` and compared
    with ``live``. They follow the events in order and need no run grouping, so they can
    run in another process while this one checks the runs."""
    chain = ChainVerifier(start_seq=since + 1, start_prev_hash=prev, roots_at=roots_at,
                          roots_every=roots_every, seed=seed)  # fmt: skip
    envelope, part = EnvelopeCheck(last_recorded_at=last_at), ReplayReport()
    projection = ProjectionCheck(run_id, live) if live is not None else None
    if projection is not None:  # it folds each page after the envelope check saw it
        projection.scratch.projection.memo = envelope.canonical
    try:
        for page in ledger.event_pages(gt=since, lte=head):
            chain.check_page(page, [sha256(ev.payload.encode("utf-8")).hexdigest() for ev in page])
            check_envelopes(envelope, page, part)
            if projection is not None and full:
                projection.fold(page)
        if projection is None:
            return chain.report, part
        if not full:
            for page in ledger.event_pages(lte=head):
                projection.fold(page)
        part.absorb(projection.finish())
        return chain.report, part
    finally:
        if projection is not None:
            projection.scratch.close()


def ledger_wide_forked(
    url: URL, *args: Any
) -> tuple[ChainReport, ReplayReport | None]:  # pragma: no cover - runs in the child
    """:func:`ledger_wide` in the forked process, through an engine of its own."""
    with Ledger.open(url, check_schema=False) as ledger:
        return ledger_wide(ledger, *args)
