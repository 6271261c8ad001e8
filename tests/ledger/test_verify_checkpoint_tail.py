"""`verify-checkpoint` on a ledger that grew after the checkpoint was signed: it checks
events 1..size and said nothing of the rest, so "ok" read as the ledger vouched for. It
now names the events after the checkpoint as not anchored by it. Both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ledger.test_note_cli import ORIGIN, append, pub, run, sign


@pytest.fixture
def key(tmp_path: Path) -> Path:
    path = tmp_path / "log.key"
    run("keygen", ORIGIN, "--out", str(path))
    return path


def test_events_after_the_checkpoint_are_named(ledger_url: str, key: Path, tmp_path: Path) -> None:
    append(ledger_url, 5)
    note = sign(ledger_url, key, tmp_path, "cp.note")
    out, _ = run("verify-checkpoint", str(note), "--key", pub(key), "--db", ledger_url)
    assert "not anchored" not in out  # the checkpoint is of the whole ledger
    data = json.loads(run("verify-checkpoint", str(note), "--key", pub(key), "--db", ledger_url,
                          "--json")[0])  # fmt: skip
    assert data["covered"] == [1, 5] and data["unanchored"] is None
    append(ledger_url, 3)
    out, _ = run("verify-checkpoint", str(note), "--key", pub(key), "--db", ledger_url)
    assert out.splitlines()[-1] == (
        "note not anchored: events 6–8 (3) of this ledger come after this checkpoint; it "
        "does not vouch for them"
    ), out
    data = json.loads(run("verify-checkpoint", str(note), "--key", pub(key), "--db", ledger_url,
                          "--json")[0])  # fmt: skip
    assert data["covered"] == [1, 5] and data["unanchored"] == [6, 8]
    append(ledger_url, 1)
    note = sign(ledger_url, key, tmp_path, "cp8.note")
    append(ledger_url, 1)
    out, _ = run("verify-checkpoint", str(note), "--key", pub(key), "--db", ledger_url)
    assert out.splitlines()[-1] == (
        "note not anchored: event 10 of this ledger comes after this checkpoint; it does not "
        "vouch for it"
    ), out
