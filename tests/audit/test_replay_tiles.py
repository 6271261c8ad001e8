"""`aborist-ledger replay` re-derives the stored Merkle tiles (the ``tile`` check,
aborist/audit/checks/tiles_check.py): on SQLite and PostgreSQL an honest ledger's tiles hold, and
a forged tile row (the events untouched, so the chain still verifies) is a ``tile``
divergence naming the tile's level and index, and replay exits 1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from aborist.audit import replay
from cli.audit.ledger_cli import cli
from cli.audit.replay_cmd import replay as replay_command
from ledger.envelope import NewEvent
from ledger.tlog.proofs import checkpoint
from tests.audit.builders import Built, build_ledger
from tests.conftest import backend_url, migrate_url

if "replay" not in cli.commands:
    cli.add_command(replay_command)

FILLER = 600  # with the runs: two full leaf tiles, so tile 1/000 holds two hashes


@pytest.fixture(params=["sqlite", "postgresql"])
def tiled(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Built]:
    with backend_url(request.param, tmp_path) as url:
        migrate_url(url)
        b = build_ledger(url, tmp_path)
        try:
            for start in range(0, FILLER, 100):
                b.ledger.append(
                    f"filler:{start}",
                    [NewEvent("test.happened", {"i": start + i}) for i in range(100)],
                )
            checkpoint(b.ledger)
            yield b
        finally:
            b.ledger.close()


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["replay", *args])
    return result.exit_code, result.stdout


def forge_tile(b: Built, blob: bytes) -> None:
    with b.ledger.engine.begin() as conn:
        conn.execute(
            text("UPDATE merkle_tiles SET hashes = :b WHERE level = 1 AND idx = 0"), {"b": blob}
        )


def test_honest_tiles_hold(tiled: Built) -> None:
    report = replay(tiled.ledger)
    assert report.ok, [d.to_dict() for d in report.divergences.values()]
    assert report.checks["tile"] == "held" and report.tiles_checked == 1
    code, out = run_cli("--db", tiled.url)
    assert code == 0 and "ok   tile        1 stored Merkle tiles re-derived" in out, out


def test_a_forged_tile_is_a_replay_finding(tiled: Built) -> None:
    [(blob,)] = tiled.ledger.fetch("SELECT hashes FROM merkle_tiles WHERE level = 1", {})
    blob = bytes(blob)
    forge_tile(tiled, blob[:32] + bytes(32))  # the second hash (events 257..512) zeroed
    report = replay(tiled.ledger)
    assert not report.ok and report.checks["tile"] == "diverged"
    assert report.checks["chain"] == "held"  # no event was touched
    d = report.first("tile")
    assert d is not None and d.seq == 257
    assert d.detail == "tile tile/1/000 (level 1, index 0)"
    assert d.found == f"hash 1 is {'0' * 64}, not {blob[32:].hex()}"
    code, out = run_cli("--db", tiled.url, "--json")
    assert code == 1
    data = json.loads(out)
    assert [x["kind"] for x in data["divergences"]] == ["tile"]
    code, out = run_cli("--db", tiled.url)
    assert code == 1 and "FAIL tile" in out and "tile tile/1/000 (level 1, index 0)" in out


def test_since_skips_the_tiles(tiled: Built) -> None:
    forge_tile(tiled, bytes(64))
    report = replay(tiled.ledger, since=5)
    assert report.checks["tile"] == "skipped" and "tile" not in report.divergences
    code, out = run_cli("--db", tiled.url, "--since", "5")
    assert code == 0 and "skip tile" in out and "--since" in out
