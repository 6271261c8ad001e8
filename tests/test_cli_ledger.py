"""`aborist-ledger` as a user runs it (both backends)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cli.audit.ledger_cli import cli
from ledger.envelope import NewEvent
from ledger.store import Ledger
from tests.ledger.tamper import tamper


def run(*args: str, ok: bool | None = True) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    if ok is True:
        assert result.exit_code == 0, (result.output, result.stderr)
    assert "Traceback" not in result.output + result.stderr
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def url(empty_url: str) -> str:
    _, out, _ = run("migrate", "--db", empty_url)
    assert "upgraded from empty to" in out
    _, out, _ = run("migrate", "--db", empty_url)
    assert "already at" in out
    lg = Ledger.open(empty_url)
    try:
        for i in range(5):
            lg.append(f"run:{i % 2}", [NewEvent("test.happened", {"i": i})])
    finally:
        lg.close()
    return empty_url


def test_events(url: str) -> None:
    _, out, _ = run("events", "--db", url)
    assert len(out.splitlines()) == 5 and "run:0#1" in out
    _, out, _ = run("events", "--db", url, "--stream", "run:1", "--json")
    data = json.loads(out)["events"]
    assert [e["payload"]["i"] for e in data] == [1, 3]
    _, out, _ = run("events", "--db", url, "--since", "3", "--limit", "1", "--json")
    assert [e["seq"] for e in json.loads(out)["events"]] == [4]


def test_verify_ok_then_tampered(url: str) -> None:
    code, out, _ = run("verify", "--db", url)
    assert code == 0 and "ok   chain: 5 events" in out
    lg = Ledger.open(url)
    try:
        tamper(lg, "UPDATE events SET payload = REPLACE(payload, '3', '4') WHERE seq = 4")
    finally:
        lg.close()
    code, out, _ = run("verify", "--db", url, ok=False)
    assert code == 1 and "FAIL chain at seq 4: payload_hash mismatch" in out
    code, out, _ = run("verify", "--db", url, "--json", ok=False)
    report = json.loads(out)
    assert code == 1 and report["chain"]["failure"]["seq"] == 4 and not report["ok"]


def test_checkpoint_and_prove(url: str) -> None:
    _, out, _ = run("checkpoint", "--db", url, "--json")
    cp = json.loads(out)
    assert cp["tree_size"] == 5 and len(cp["root"]) == 64
    _, out, _ = run("prove", "3", "--db", url, "--json")
    proof = json.loads(out)
    assert proof["verified"] and proof["root"] == cp["root"] and proof["checkpointed"]
    _, out, _ = run("prove", "--consistency", "2", "5", "--db", url, "--json")
    assert json.loads(out)["verified"]
    _, out, _ = run("prove", "2", "--size", "4", "--db", url)
    assert "verified     True" in out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["prove", "9", "--size", "5"], 1, "not in a tree of 5 events"),
        (["prove", "2"], 1, "no checkpoint recorded"),
        (["prove"], 2, "give SEQ"),
        (["prove", "1", "--consistency", "1", "2"], 2, "not both"),
        (["events", "--limit", "0"], 2, "--limit"),
    ],
)
def test_usage_and_proof_errors(url: str, args: list[str], code: int, message: str) -> None:
    got, _, err = run(*args, "--db", url, ok=None)
    assert got == code and message in err


def test_unmigrated_and_bad_urls(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "ledger.db"
    for args, message in [
        (["verify", "--db", f"sqlite:///{missing}"], "run `aborist-ledger migrate`"),
        (["events", "--db", "nonsense"], "malformed database URL"),
        (["verify", "--db", "postgresql+psycopg://u:secret@127.0.0.1:1/x"], "127.0.0.1"),
    ]:
        code, _, err = run(*args, ok=None)
        assert code == 1 and message in err
        assert len(err.strip().splitlines()) == 1
        assert "secret" not in err
    assert not missing.exists()


def test_default_location_under_aborist_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ABORIST_DB_URL", raising=False)
    run("migrate")
    assert (tmp_path / "home" / "ledger.db").is_file()
    _, out, _ = run("verify")
    assert "0 events" in out


def test_every_command_has_help_with_an_example() -> None:
    assert isinstance(cli, click.Group)
    for name in cli.commands:
        _, out, _ = run(name, "--help")
        assert "Example:" in out, name


def test_verify_and_replay_report_a_blob_stored_as_text(url: str) -> None:
    """The reported repro (a blob row cast to TEXT once the triggers are dropped): a blob
    failure naming the row, exit 1, never a traceback (``run`` asserts none)."""
    lg = Ledger.open(url)
    try:
        if lg.engine.dialect.name == "postgresql":
            pytest.skip("PostgreSQL's bytea column refuses a text value (test_tamper_db.py)")
        h = lg.put_blob(b"evidence chunk")
        tamper(lg, "UPDATE blobs SET bytes = CAST(bytes AS TEXT)")
    finally:
        lg.close()
    code, out, _ = run("verify", "--db", url, ok=False)
    assert code == 1 and f"FAIL blob {h}: stored as TEXT, not bytes" in out
    _, out, _ = run("verify", "--db", url, "--json", ok=False)
    assert json.loads(out)["blob_failure"]["found"] == "stored as TEXT, not bytes"
    # (this ledger's runs are not the pipeline's, so the dag check fails too; the blob
    # scan is what this shows: tests/audit/test_tamper_replay.py has the pipeline's runs)
    code, out, _ = run("replay", "--db", url, ok=False)
    assert code == 1 and "FAIL blob" in out and f"blob {h} is stored as TEXT, not bytes" in out


def test_rebuild_refuses_a_ledger_that_fails_verification(url: str) -> None:
    """Folding edited events would make the read models agree with the forgery: refused
    (exit 1, one line naming the failure) unless --force, which warns on stderr."""
    code, out, _ = run("rebuild", "--db", url)
    assert code == 0 and "rebuilt from 5 events" in out
    lg = Ledger.open(url)
    try:
        tamper(lg, "UPDATE events SET payload = REPLACE(payload, '3', '4') WHERE seq = 4")
    finally:
        lg.close()
    code, out, err = run("rebuild", "--db", url, ok=False)
    assert code == 1 and out == ""
    assert "refusing to rebuild" in err and "chain at seq 4: payload_hash" in err
    assert "--force" in err
    code, out, err = run("rebuild", "--db", url, "--force", "--json")
    assert code == 0 and json.loads(out)["verified"] is False
    assert "warning: rebuilding from a ledger that fails verification" in err


BIG = str(2**63)  # one past the largest integer SQLite and PostgreSQL bind
MAX = str(2**63 - 1)


@pytest.mark.parametrize(
    "args",
    [
        ["events", "--since", BIG],
        ["events", "--limit", BIG],
        ["prove", "2", "--size", BIG],
        ["prove", BIG],
        ["prove", "--consistency", "1", BIG],
        ["replay", "--since", BIG],
    ],
)
def test_a_seq_past_what_sql_binds_is_a_usage_error(url: str, args: list[str]) -> None:
    """``--since 10**23`` reached the driver: an OverflowError traceback ("Python int too
    large to convert to SQLite INTEGER")."""
    got, _, err = run(*args, "--db", url, ok=None)
    assert got == 2 and f"{BIG} is not in the range" in err and f"x<={MAX}" in err


def test_the_largest_seq_sql_binds_is_an_answer(url: str) -> None:
    run("checkpoint", "--db", url)
    _, out, err = run("events", "--since", MAX, "--limit", MAX, "--db", url)
    assert out == "" and err == "no events\n"
    code, _, err = run("prove", "2", "--size", MAX, "--db", url, ok=None)
    assert code == 1 and err == f"Error: the ledger has 5 events, fewer than {MAX}\n"
