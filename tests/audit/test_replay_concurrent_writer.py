"""Review findings on both backends: a writer that records a checkpoint while replay
runs is not a truncation, and a stray row below seq 1 is no entry of the Merkle tree
(it is named by the chain check, and shifts none of the tree's hashes)."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner
from sqlalchemy import text

import aborist.audit.replay  # noqa: F401 (the module, which the package's function shadows)
from cli.audit.ledger_cli import cli
from ledger.envelope import NewEvent
from ledger.store import Ledger
from ledger.tlog.proofs import checkpoint
from tests.ledger.tamper import tamper

replay_mod = sys.modules["aborist.audit.replay"]


def _append(lg: Ledger, n: int, stream: str) -> None:
    for lo in range(0, n, 100):
        lg.append(
            f"{stream}:{lo}",
            [NewEvent("test.appended", {"i": i}) for i in range(lo, min(lo + 100, n))],
        )


def _write(url: str, n: int, stream: str) -> None:
    """A writer's session: ``n`` events on ``stream``, then a checkpoint."""
    lg = Ledger.open(url)
    try:
        _append(lg, n, stream)
        checkpoint(lg)
    finally:
        lg.close()


def test_a_checkpoint_recorded_during_replay_is_not_a_truncation(
    ledger_url: str, monkeypatch
) -> None:
    _write(ledger_url, 300, "early")
    real = replay_mod.read_live
    fired: list[int] = []

    def head_then_writer(*a, **k):  # an honest writer appends and checkpoints right after
        out = real(*a, **k)
        if not fired:
            fired.append(1)
            _write(ledger_url, 200, "late")
        return out

    monkeypatch.setattr(replay_mod, "read_live", head_then_writer)
    r = CliRunner().invoke(cli, ["replay", "--db", ledger_url])
    assert fired
    assert r.exit_code == 0, r.output
    assert "truncated" not in r.output


def test_a_row_below_seq_1_is_no_entry_of_the_tree(ledger_url: str) -> None:
    lg = Ledger.open(ledger_url)
    try:
        _append(lg, 300, "s")
        checkpoint(lg)
        before = lg.event_hashes(300)
        row = lg.read(gt=0, lte=1)[0]
        with lg.engine.begin() as conn:  # a plain INSERT: no trigger refuses it
            conn.execute(
                text(
                    "INSERT INTO events (seq, event_id, stream, stream_seq, type, type_version,"
                    " recorded_at, payload, payload_hash, prev_hash, hash) SELECT 0, :eid,"
                    " 'forged:0', 1, type, type_version, recorded_at, payload, payload_hash,"
                    " prev_hash, hash FROM events WHERE seq = 1"
                ),
                {"eid": "forged-" + row.event_id[7:]},
            )
        assert lg.event_hashes(300) == before
    finally:
        lg.close()
    r = CliRunner().invoke(cli, ["replay", "--db", ledger_url, "--since", "100"])
    assert r.exit_code == 1 and "forged:0" in r.output, r.output  # the chain names the row
    assert "rewritten" not in r.output, r.output  # and no checkpoint is blamed


def test_verify_while_a_writer_grows_the_tiles_is_no_tile_finding(
    ledger_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tile check reads the event hashes, then each tile row: a writer that appends a
    block of 256 events and checkpoints in between grows a stored tile. That is not a
    forged tile; a tile that holds a hash the events do not give still is."""
    import ledger.tlog.tiles_verify as tv

    _write(ledger_url, 600, "early")
    real = tv._event_hashes
    fired: list[int] = []

    def hashes_then_writer(fetch, covered):  # type: ignore[no-untyped-def]
        if not fired:
            fired.append(1)
            _write(ledger_url, 300, "late")
        yield from real(fetch, covered)

    monkeypatch.setattr(tv, "_event_hashes", hashes_then_writer)
    r = CliRunner().invoke(cli, ["verify", "--db", ledger_url])
    assert fired
    assert r.exit_code == 0, r.output
    # the control: a level-1 tile with a hash appended by hand, and no writer, is caught
    monkeypatch.setattr(tv, "_event_hashes", real)
    lg = Ledger.open(ledger_url)
    try:
        tamper(lg, "UPDATE merkle_tiles SET hashes = hashes || hashes WHERE level = 1 AND idx = 0")
    finally:
        lg.close()
    r = CliRunner().invoke(cli, ["verify", "--db", ledger_url])
    assert r.exit_code == 1 and "tile" in r.output
