"""A verify never checks fewer events than were committed before it started, whichever
connection committed them: another ledger's held writer connection (still open), the
ledger's own, or the verifying ledger's held connection after earlier reads (no snapshot
outlives its read), on each backend, with pages smaller than the chain."""

from __future__ import annotations

from ledger.chain import verify_chain
from ledger.envelope import NewEvent
from ledger.store import Ledger
from ledger.verify import verify_ledger


def _append(lg: Ledger, start: int, n: int) -> None:
    for i in range(start, start + n):
        lg.append(f"run:{i // 3}", [NewEvent("test.appended", {"i": i})])


def _checked(lg: Ledger) -> tuple[int, int]:
    """(events verify_chain checked over 2-event pages, events verify_ledger checked)."""
    chain = verify_chain(lg.iter_events(batch_size=2))
    assert chain.ok, chain.to_dict()
    whole = verify_ledger(lg)
    assert whole.ok, whole.to_dict()
    return chain.events_checked, whole.chain.events_checked


def test_verify_sees_what_an_open_writer_committed(ledger_url: str) -> None:
    with Ledger.open(ledger_url) as writer, Ledger.open(ledger_url) as reader:
        _append(writer, 0, 7)
        # The writer's connection is held open, as a benchmark's or a pipeline's is.
        assert _checked(reader) == (7, 7)
        assert _checked(writer) == (7, 7)
        # The reader's held connection has read since: its next verify still sees new commits.
        _append(writer, 7, 4)
        assert _checked(reader) == (11, 11)
        assert reader.head()[0] == 11


def test_verify_right_after_the_writer_closes(ledger_url: str) -> None:
    writer = Ledger.open(ledger_url, sqlite_synchronous="FULL")
    _append(writer, 0, 5)
    writer.close()
    with Ledger.open(ledger_url) as reader:
        assert _checked(reader) == (5, 5)
        assert reader.fetch("SELECT COUNT(*), MAX(seq) FROM events")[0] == (5, 5)
