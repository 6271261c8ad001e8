"""`aborist-ledger verify` holds every recorded checkpoint to the tree of the events its
chain check re-hashed (the roots :class:`ledger.tlog.merkle.RootFold` folds as the chain
goes, as replay does), never to a second read of the stored hashes; the tile check's read
of the hashes is held to the same roots. Both backends.

The insider rewrites an event's payload and every later hash consistently, keeps the
recorded checkpoints and tiles of the original history, and makes the database answer a
read of the event hashes alone with the original hashes (on PostgreSQL a view on
``current_query()``; on SQLite, which has no such function, the reads are answered so, as
a database swapped back between two reads would): verify said every checkpoint root and
tile matched. And a checkpoint past a chain failure was passed over without a word.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from cli.audit.ledger_cli import cli
from ledger.canonical import sha256_hex
from ledger.envelope import GENESIS_HASH, NewEvent, event_hash
from ledger.store import Ledger
from ledger.tlog import merkle
from ledger.tlog.proofs import checkpoint
from ledger.verify import verify_ledger
from tests.ledger.tamper import drop_triggers, tamper

EDITED = 10


def _append(lg: Ledger, n: int) -> None:
    start = lg.head()[0]
    for lo in range(start, start + n, 100):
        batch = [NewEvent("test.appended", {"i": i}) for i in range(lo, min(lo + 100, start + n))]
        lg.append(f"test:{lo}", batch)


@pytest.fixture
def checkpointed(ledger: Ledger) -> Ledger:
    """600 events, checkpoints at 300 and 600 (the tiles then cover 512 events)."""
    _append(ledger, 300)
    checkpoint(ledger)
    _append(ledger, 300)
    checkpoint(ledger)
    return ledger


def _rechain(lg: Ledger, seq: int, *, payload: str | None = None, hash_: str | None = None) -> None:
    """Event ``seq`` given ``payload`` (its payload hash and event hash recomputed) or its
    stored ``hash_`` set as is; every later ``prev_hash`` and hash recomputed from it.
    Checkpoints and tiles are left as they were."""
    rows = []
    prev = GENESIS_HASH
    for e in lg.iter_events():
        body = payload if e.seq == seq and payload is not None else e.payload
        header: dict[str, Any] = {
            "seq": e.seq, "event_id": e.event_id, "stream": e.stream,
            "stream_seq": e.stream_seq, "type": e.type, "type_version": e.type_version,
            "recorded_at": e.recorded_at, "payload_hash": sha256_hex(body.encode("utf-8")),
        }  # fmt: skip
        h = event_hash(**header, prev_hash=prev)
        if e.seq == seq and hash_ is not None:
            h = hash_
        if e.seq >= seq:
            rows.append({"seq": e.seq, "p": body, "ph": header["payload_hash"], "prev": prev,
                         "h": h})  # fmt: skip
        prev = h
    drop_triggers(lg)
    with lg.engine.begin() as conn:
        conn.execute(
            text("UPDATE events SET payload = :p, payload_hash = :ph, prev_hash = :prev, "
                 "hash = :h WHERE seq = :seq"),
            rows,
        )  # fmt: skip


def _answer_hash_reads_with(
    lg: Ledger, original: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """From now on a read of the event hashes alone (no payload in it) gets ``original``;
    a read of whole rows gets what is stored."""
    if lg.engine.dialect.name == "postgresql":
        tamper(
            lg,
            "CREATE TABLE original_hashes (seq BIGINT PRIMARY KEY, hash TEXT NOT NULL)",
            *[f"INSERT INTO original_hashes VALUES ({i}, '{h.hex()}')"
              for i, h in enumerate(original, 1)],
            "ALTER TABLE events RENAME TO events_real",
            "CREATE VIEW events AS SELECT r.seq, r.event_id, r.stream, r.stream_seq, r.type, "
            "r.type_version, r.recorded_at, r.payload, r.payload_hash, r.prev_hash, CASE WHEN "
            "current_query() ILIKE '%payload%' THEN r.hash ELSE o.hash END AS hash "
            "FROM events_real r JOIN original_hashes o ON o.seq = r.seq",
        )  # fmt: skip
    else:
        real_fetch = Ledger.fetch

        def fetch(self: Ledger, sql: str, params: dict[str, Any] | None = None) -> Any:
            rows = real_fetch(self, sql, params)
            if "hash FROM events" not in sql or "payload" in sql:
                return rows
            if sql.startswith("SELECT seq, hash"):
                return [(s, original[int(s) - 1].hex()) for s, _ in rows]
            if sql.startswith("SELECT hash FROM events WHERE seq > :a AND seq <= :b"):
                assert params is not None
                a, b = int(params["a"]), min(int(params["b"]), len(original))
                return [(original[i].hex(),) for i in range(a, b)]
            return rows

        monkeypatch.setattr(Ledger, "fetch", fetch)
        monkeypatch.setattr(Ledger, "event_hashes", lambda self, size=None: original[:size])
    assert lg.event_hashes() == original
    rows = lg.fetch("SELECT seq, hash FROM events WHERE seq > :a AND seq <= :b ORDER BY seq",
                    {"a": 0, "b": 600})  # fmt: skip
    assert [bytes.fromhex(h) for _, h in rows] == original  # the hashes alone: the original's


def test_a_checkpoint_is_held_to_the_events_the_chain_re_hashed(
    checkpointed: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    lg = checkpointed
    original = lg.event_hashes()
    recorded = {cp.tree_size: cp.root for cp in lg.checkpoints()}
    _rechain(lg, EDITED, payload=json.dumps({"i": 999999}, separators=(",", ":")))
    _answer_hash_reads_with(lg, original, monkeypatch)
    mine = [e.hash for e in lg.iter_events()]  # the rows the chain reads: the rewrite
    assert mine[EDITED - 1] != original[EDITED - 1].hex()

    report = verify_ledger(lg)
    assert report.chain.ok and report.envelope.ok  # a consistent rewrite
    assert not report.ok
    rewritten = merkle.merkle_root([bytes.fromhex(h) for h in mine[:300]]).hex()
    assert report.checkpoint_failure == {
        "tree_size": 300, "expected": recorded[300], "found": rewritten,
    }  # fmt: skip
    assert report.checkpoints_checked == 0
    # the tiles match the second read of the hashes, not the events the chain verified
    assert report.tile_failure is not None, report.to_dict()
    assert report.tile_failure["tile"] == "the event hashes read for the tiles"

    result = CliRunner().invoke(cli, ["verify", "--db", str(lg.engine.url.render_as_string(
        hide_password=False))])  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert f"FAIL checkpoint 300: expected {recorded[300]}, found {rewritten}" in result.output
    assert "FAIL tile the event hashes read for the tiles: another tree of size 512" in (
        result.output
    )
    assert "ok   checkpoints" not in result.output and "ok   tiles" not in result.output


def test_the_honest_ledger_still_holds_with_no_second_read(
    checkpointed: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checkpoints need no read of the hashes at all now (the chain folded them)."""

    def refuse(self: Ledger, size: int | None = None) -> Any:
        raise AssertionError("the event hashes were read again for the checkpoints")

    monkeypatch.setattr(Ledger, "event_hashes", refuse)
    report = verify_ledger(checkpointed)
    assert report.ok, report.to_dict()
    assert report.checkpoints_checked == 2 and report.tiles_checked >= 1 and report.tiles_held
    assert report.checkpoints_unchecked == []


def test_a_stored_hash_that_is_not_the_recomputed_one_fails_and_names_what_it_left(
    checkpointed: Ledger,
) -> None:
    """Event 400's stored hash rewritten (not what its header hashes to), the chain
    re-linked from it, and a checkpoint forged over the stored hashes: the chain fails at
    400; the checkpoint at 300 is held to the verified tree, the ones at 600 and the
    forged 650 are named as not checked, never 'roots match'."""
    lg = checkpointed
    _append(lg, 50)
    _rechain(lg, 400, hash_="ab" * 32)
    stored = lg.event_hashes()
    forged = merkle.merkle_root(stored[:650]).hex()
    tamper(
        lg, "INSERT INTO checkpoints (tree_size, root, created_at) VALUES (650, :r, "
        "'2026-11-30T00:00:00.000000Z')", r=forged,
    )  # fmt: skip
    report = verify_ledger(lg)
    assert not report.ok
    assert report.chain.failure is not None and report.chain.failure.seq == 400
    assert report.chain.failure.check == "hash"
    assert report.checkpoint_failure is None and report.checkpoints_checked == 1
    assert report.checkpoints_unchecked == [600, 650]

    url = lg.engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(cli, ["verify", "--db", url])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "FAIL chain at seq 400: hash mismatch" in result.output
    assert "ok   checkpoints: 1 roots match" in result.output
    assert (
        "skip checkpoints: 2 not checked (size 600, 650): they reach past the chain failure "
        "at seq 400"
    ) in result.output
    assert "skip tiles: not checked (the chain failed at seq 400)" in result.output
    as_json = json.loads(CliRunner().invoke(cli, ["verify", "--db", url, "--json"]).output)
    assert as_json["checkpoints_unchecked"] == [600, 650] and as_json["ok"] is False


@pytest.mark.parametrize("parallel", [False, True])
def test_replay_holds_the_tile_read_to_the_chain_too(
    checkpointed: Ledger, monkeypatch: pytest.MonkeyPatch, parallel: bool
) -> None:
    """The same rewrite with the recorded checkpoints deleted (nothing anchors it):
    replay's tile check read the original hashes and said the tiles held; it is now a
    ``tile`` divergence naming that read, in either process layout."""
    from aborist.audit import replay

    lg = checkpointed
    original = lg.event_hashes()
    _rechain(lg, EDITED, payload=json.dumps({"i": 999999}, separators=(",", ":")))
    tamper(lg, "DELETE FROM checkpoints")
    _answer_hash_reads_with(lg, original, monkeypatch)
    report = replay(lg, parallel=parallel)
    assert not report.ok, report.to_dict()
    assert report.checks["tile"] == "diverged"
    d = report.divergences["tile"]
    assert d.detail == "the event hashes read for the tiles", d
    assert d.found.startswith("another tree of size 512"), d
    # the chain held; on PostgreSQL the view also answers the head's read (with the
    # projections) with the original hash, which replay names at the head
    assert set(report.divergences) <= {"tile", "chain"}, report.divergences
    chain = report.divergences.get("chain")
    assert chain is None or chain.detail == "head hash (read with the projections)", chain
