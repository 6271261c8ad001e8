"""What every ledger backend must do (runs on SQLite and PostgreSQL)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from sqlalchemy import text

from ledger.canonical import sha256_hex
from ledger.envelope import GENESIS_HASH, NewEvent
from ledger.errors import (
    BlobNotFoundError,
    ConcurrencyError,
    ConfigurationError,
    NotMigratedError,
    PayloadError,
    UnavailableError,
)
from ledger.store import Ledger


def ev(i: int = 0, **extra: object) -> NewEvent:
    return NewEvent("test.happened", {"i": i, **extra})


def count(lg: Ledger) -> int:
    return len(lg.read())


def test_append_records_envelope(ledger: Ledger) -> None:
    [r] = ledger.append("run:a", [NewEvent("test.happened", {"b": 2, "a": "x"})])
    assert (r.seq, r.stream, r.stream_seq, r.type, r.type_version) == (
        1,
        "run:a",
        1,
        "test.happened",
        1,
    )
    assert r.prev_hash == GENESIS_HASH
    assert r.payload == '{"a":"x","b":2}'
    assert r.payload_hash == sha256_hex(b'{"a":"x","b":2}')
    assert r.hash == r.expected_hash()
    assert r.recorded_at.endswith("Z") and len(r.recorded_at) == 27
    [back] = ledger.read()
    assert back == r


def test_batch_is_chained_and_ordered(ledger: Ledger) -> None:
    a = ledger.append("s1", [ev(0)])
    b = ledger.append("s2", [ev(1), ev(2), ev(3)])
    rows = ledger.read()
    assert [r.seq for r in rows] == [1, 2, 3, 4]
    assert [r.stream_seq for r in rows] == [1, 1, 2, 3]
    assert rows[1].prev_hash == a[0].hash and rows[3].prev_hash == b[1].hash
    assert ledger.head() == (4, b[-1].hash)


def test_read_filters(ledger: Ledger) -> None:
    for i in range(6):
        ledger.append(f"s{i % 2}", [NewEvent("test.odd" if i % 2 else "test.even", {"i": i})])
    assert [r.seq for r in ledger.read(gt=2, lte=5)] == [3, 4, 5]
    assert [r.seq for r in ledger.read(limit=2)] == [1, 2]
    assert [r.data["i"] for r in ledger.read_stream("s1")] == [1, 3, 5]
    assert [r.data["i"] for r in ledger.read_stream("s1", gt=1)] == [3, 5]
    assert [r.seq for r in ledger.read(types=["test.even"])] == [1, 3, 5]
    assert [r.seq for r in ledger.iter_events(batch_size=4)] == [1, 2, 3, 4, 5, 6]


def test_optimistic_concurrency(ledger: Ledger) -> None:
    ledger.append("run:x", [ev(0)], expected_stream_seq=0)
    ledger.append("run:x", [ev(1)], expected_stream_seq=1)
    with pytest.raises(ConcurrencyError, match="at position 2, expected 1"):
        ledger.append("run:x", [ev(2), ev(3)], expected_stream_seq=1)
    assert count(ledger) == 2
    with pytest.raises(ConcurrencyError):
        ledger.append("run:new", [ev(0)], expected_stream_seq=3)
    assert count(ledger) == 2


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"x": math.nan}, "no JSON representation"),
        ({"x": [1, math.inf]}, "no JSON representation"),
        ({"x": {1: "a"}}, "keys must be strings"),
        ({"x": {1, 2}}, "not JSON-serializable"),
        ({"x": b"raw"}, "not JSON-serializable"),
        ({"x": 2**60}, "I-JSON range"),
    ],
)
def test_bad_payload_writes_nothing(
    ledger: Ledger, payload: dict[str, object], message: str
) -> None:
    with pytest.raises(PayloadError, match=message):
        ledger.append("s", [ev(0), NewEvent("test.happened", payload)])
    assert count(ledger) == 0


@pytest.mark.parametrize("stream", ["", "   ", " padded", "tab\there", "x" * 401])
def test_bad_stream_name(ledger: Ledger, stream: str) -> None:
    with pytest.raises(PayloadError, match="stream name"):
        ledger.append(stream, [ev()])
    assert count(ledger) == 0


@pytest.mark.parametrize("type_", ["", "Run", "nodot", "qa.Run", "qa..x"])
def test_bad_event_type(ledger: Ledger, type_: str) -> None:
    with pytest.raises(PayloadError, match="event type"):
        ledger.append("s", [NewEvent(type_, {})])


def test_empty_batch_and_non_dict_payload(ledger: Ledger) -> None:
    with pytest.raises(PayloadError):
        ledger.append("s", [])
    with pytest.raises(PayloadError, match="JSON object"):
        ledger.append("s", [NewEvent("test.happened", [1, 2])])  # type: ignore[arg-type]


def test_blobs_are_content_addressed(ledger: Ledger) -> None:
    h = ledger.put_blob(b"chunk text")
    assert h == sha256_hex(b"chunk text")
    assert ledger.put_blob(b"chunk text") == h
    ledger.append("s", [ev()], blobs=[b"chunk text", b"other"])
    assert ledger.get_blob(h) == b"chunk text"
    assert sorted(x for x, _ in ledger.iter_blobs()) == sorted([h, sha256_hex(b"other")])
    with pytest.raises(BlobNotFoundError):
        ledger.get_blob("0" * 64)


class Boom(Exception):
    pass


class ExplodingProjection:
    name = "exploding"

    def apply(self, conn: object, events: object) -> None:
        raise Boom("projection failed")

    def reset(self, conn: object) -> None:
        pass


def test_projection_failure_rolls_back_append(ledger_url: str) -> None:
    lg = Ledger.open(ledger_url, projections=[ExplodingProjection()])
    try:
        with pytest.raises(Boom):
            lg.append("s", [ev()], blobs=[b"x"])
        assert count(lg) == 0
        assert list(lg.iter_blobs()) == []
        assert lg.projection_positions() == {}
    finally:
        lg.close()


class CountingProjection:
    name = "counting"

    def __init__(self) -> None:
        self.seen: list[int] = []

    def apply(self, conn: object, events: list) -> None:  # type: ignore[type-arg]
        self.seen.extend(e.seq for e in events)

    def reset(self, conn: object) -> None:
        self.seen.clear()


def test_projection_positions_follow_appends(ledger_url: str) -> None:
    proj = CountingProjection()
    lg = Ledger.open(ledger_url, projections=[proj])
    try:
        lg.append("s", [ev(0), ev(1)])
        lg.append("t", [ev(2)])
        assert proj.seen == [1, 2, 3]
        assert lg.projection_positions() == {"counting": 3}
        assert lg.rebuild_projections(batch_size=2) == 3
        assert proj.seen == [1, 2, 3]
    finally:
        lg.close()


class FilteredProjection(CountingProjection):
    """Follows ``kept`` events only."""

    name = "filtered"
    event_types = frozenset({"test.kept"})


def test_a_filtered_projection_sees_and_tracks_only_its_types(ledger_url: str) -> None:
    """An append with none of a projection's event types writes nothing of it, not even its
    position; its position is the seq of the last event of its types, live and rebuilt."""
    proj, every = FilteredProjection(), CountingProjection()
    lg = Ledger.open(ledger_url, projections=[proj, every])
    try:
        lg.append("s", [NewEvent("test.other", {"i": 0})])
        assert proj.seen == [] and lg.projection_positions() == {"counting": 1}
        lg.append("s", [NewEvent("test.kept", {"i": 1}), NewEvent("test.other", {"i": 2})])
        lg.append("t", [NewEvent("test.other", {"i": 3})])
        assert proj.seen == [2] and every.seen == [1, 2, 3, 4]
        live = lg.projection_positions()
        assert live == {"filtered": 2, "counting": 4}
        assert lg.rebuild_projections(batch_size=1) == 4
        assert proj.seen == [2] and lg.projection_positions() == live
    finally:
        lg.close()


def test_unmigrated_database_is_refused(empty_url: str) -> None:
    if empty_url.startswith("sqlite"):
        path = Path(empty_url.removeprefix("sqlite:///"))
        with pytest.raises(NotMigratedError, match="no ledger at"):
            Ledger.open(empty_url)
        assert not path.exists(), "opening a missing ledger must not create a file"
        path.write_bytes(b"")
    with pytest.raises(NotMigratedError, match="aborist-ledger migrate"):
        Ledger.open(empty_url)


def test_old_schema_revision_is_refused(ledger_url: str) -> None:
    lg = Ledger.open(ledger_url)
    try:
        with lg.engine.begin() as conn:
            conn.execute(text("DELETE FROM alembic_version"))
            conn.execute(text("INSERT INTO alembic_version VALUES ('ancient')"))
    finally:
        lg.close()
    with pytest.raises(NotMigratedError, match="revision ancient, expected"):
        Ledger.open(ledger_url)


@pytest.mark.parametrize(
    "url", ["", "nonsense", "mysql://root@localhost/x", "sqlite://", "sqlite:///:memory:"]
)
def test_malformed_url(url: str) -> None:
    with pytest.raises(ConfigurationError):
        Ledger.open(url)


def test_unreachable_server() -> None:
    with pytest.raises(UnavailableError, match=r"127\.0\.0\.1"):
        Ledger.open("postgresql+psycopg://postgres@127.0.0.1:1/test?connect_timeout=2")


def test_sqlite_durability_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NORMAL by default, chosen by ABORIST_SQLITE_SYNCHRONOUS; a checkpoint is written with
    a full sync and the connection goes back to its setting afterwards."""
    from ledger.tlog.proofs import checkpoint
    from tests.conftest import migrate_url

    url = f"sqlite:///{tmp_path / 'l.db'}"
    migrate_url(url)

    def level(lg: Ledger) -> int:
        with lg._writer.transaction() as tx:
            return int(tx.execute("PRAGMA synchronous")[0][0])

    with Ledger.open(url) as lg:
        lg.append("s", [ev()])
        assert level(lg) == 1
        checkpoint(lg)
        assert level(lg) == 1
    monkeypatch.setenv("ABORIST_SQLITE_SYNCHRONOUS", "full")
    with Ledger.open(url) as lg:
        assert level(lg) == 2
    monkeypatch.setenv("ABORIST_SQLITE_SYNCHRONOUS", "sometimes")
    with pytest.raises(ConfigurationError, match="ABORIST_SQLITE_SYNCHRONOUS"):
        Ledger.open(url)


def test_event_pages_and_events_at_read_what_read_reads(ledger: Ledger) -> None:
    ledger.append("a", [NewEvent("test.happened", {"i": i}) for i in range(7)])
    ledger.append("b", [NewEvent("test.happened", {"i": i}) for i in range(3)])
    every = ledger.read()
    pages = list(ledger.event_pages(gt=2, lte=9, size=3))
    assert [len(p) for p in pages] == [3, 3, 1]
    assert [ev for p in pages for ev in p] == every[2:9]
    assert list(ledger.event_pages(gt=9, lte=9)) == []
    found = ledger.events_at([10, 1, 5, 99], chunk=2)
    assert found == {1: every[0], 5: every[4], 10: every[9]}
