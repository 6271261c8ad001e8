"""keygen, checkpoint --sign, verify-checkpoint, replay --checkpoint NOTE and the --state
file, as a user runs them (both backends). Every bad input is one line, a non-zero exit,
and the state file unchanged."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.audit.ledger_cli import cli
from ledger.envelope import NewEvent
from ledger.store import Ledger
from ledger.tlog.checkpoint_note import CheckpointBody, open_checkpoint, sign_checkpoint
from ledger.tlog.note import parse_signer_key, parse_verifier_key
from tests.conftest import migrate_url
from tests.ledger.tamper import tamper

ORIGIN = "example.org/ledger"


def run(*args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args))
    out, err = result.stdout, result.stderr
    assert result.exit_code == code, (out, err)
    assert "Traceback" not in out + err
    if code == 1:
        assert err.count("\n") == 1, err  # one clear line
    if code == 2:  # click's usage lines, then one error line
        assert [ln for ln in err.splitlines() if ln.startswith("Error:")] == [err.splitlines()[-1]]
    return out, err


def append(url: str, n: int) -> None:
    lg = Ledger.open(url)
    try:
        for i in range(n):
            lg.append(f"s:{i % 3}", [NewEvent("test.happened", {"i": i})])
    finally:
        lg.close()


@pytest.fixture
def url(ledger_url: str) -> str:
    append(ledger_url, 5)
    return ledger_url


@pytest.fixture
def key(tmp_path: Path) -> Path:
    path = tmp_path / "log.key"
    out, _ = run("keygen", ORIGIN, "--out", str(path))
    assert "PRIVATE" not in out
    return path


def pub(key: Path) -> str:
    return str(key.with_name(key.name + ".pub"))


def sign(url: str, key: Path, tmp: Path, name: str) -> Path:
    out, _ = run("checkpoint", "--db", url, "--sign", str(key))
    path = tmp / name
    path.write_text(out, encoding="utf-8")
    return path


def test_keygen_writes_a_private_file_and_its_verifier_key(key: Path) -> None:
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    signer = parse_signer_key(key.read_text(encoding="utf-8"))
    verifier = parse_verifier_key(Path(pub(key)).read_text(encoding="utf-8"))
    assert signer.name == ORIGIN and signer.verifier() == verifier
    run("keygen", ORIGIN, "--out", str(key), code=1)  # never overwritten silently
    run("keygen", "bad name", "--out", str(key.with_name("x.key")), code=2)


def test_checkpoint_sign_prints_a_note_that_verifies(url: str, key: Path) -> None:
    out, _ = run("checkpoint", "--db", url, "--sign", str(key))
    cp = open_checkpoint(out, [parse_verifier_key(Path(pub(key)).read_text())], origin=ORIGIN)
    assert cp.body.size == 5
    again, _ = run("checkpoint", "--db", url, "--sign", str(key))
    assert again == out  # Ed25519 is deterministic and the size is already recorded
    data = json.loads(run("checkpoint", "--db", url, "--sign", str(key), "--json")[0])
    assert data["note"] == out and data["tree_size"] == 5
    assert bytes.fromhex(data["root"]) == cp.body.root


def test_verify_checkpoint(url: str, key: Path, tmp_path: Path) -> None:
    note = sign(url, key, tmp_path, "cp.note")
    out, _ = run("verify-checkpoint", str(note), "--key", pub(key), "--db", url)
    assert "tree size 5 has root" in out and "events 1..5 re-hashed and chained" in out
    data = json.loads(run("verify-checkpoint", str(note), "--key", pub(key), "--db", url,
                          "--json")[0])  # fmt: skip
    assert data["ok"] is True and data["checkpoint"]["tree_size"] == 5


def test_verify_checkpoint_bad_inputs(
    url: str, key: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = sign(url, key, tmp_path, "cp.note")
    text = note.read_text(encoding="utf-8")
    other = tmp_path / "other.key"
    run("keygen", "example.org/other", "--out", str(other))
    cases = {
        "malformed": text.rstrip("\n"),
        "tampered": text.replace("\n5\n", "\n4\n", 1),
    }
    for name, body in cases.items():
        bad = tmp_path / f"{name}.note"
        bad.write_text(body, encoding="utf-8")
        _, err = run("verify-checkpoint", str(bad), "--key", pub(key), "--db", url, code=1)
        assert ("malformed" in err) if name == "malformed" else ("does not verify" in err)
    _, err = run("verify-checkpoint", str(note), "--key", pub(other), "--db", url, code=1)
    assert "no signature from a known key" in err
    wrong_id = tmp_path / "wrong-id.pub"
    vkey = Path(pub(key)).read_text().strip()
    name, _kid, material = vkey.split("+", 2)
    wrong_id.write_text(f"{name}+{'0' * 8}+{material}\n", encoding="utf-8")
    _, err = run("verify-checkpoint", str(note), "--key", str(wrong_id), "--db", url, code=2)
    assert "does not match" in err
    monkeypatch.setenv("ABORIST_LOG_ORIGIN", "example.org/elsewhere")
    _, err = run("verify-checkpoint", str(note), "--key", pub(key), "--db", url, code=1)
    assert "expected 'example.org/elsewhere'" in err
    monkeypatch.delenv("ABORIST_LOG_ORIGIN")
    run("verify-checkpoint", str(note), "--db", url, code=2)  # no --key
    _, err = run("verify-checkpoint", str(note), "--key", str(tmp_path / "absent.pub"),
                 "--db", url, code=2)  # fmt: skip
    assert "no --key file" in err


def test_verify_checkpoint_of_another_tree(url: str, key: Path, tmp_path: Path) -> None:
    signer = parse_signer_key(key.read_text())
    for size, why in [(5, "has root"), (9, "this ledger has 5 events")]:
        forged = tmp_path / f"forged{size}.note"
        forged.write_text(sign_checkpoint(CheckpointBody(ORIGIN, size, b"\x07" * 32), signer))
        _, err = run("verify-checkpoint", str(forged), "--key", pub(key), "--db", url, code=1)
        assert why in err


def test_verify_checkpoint_rehashes_the_events(url: str, key: Path, tmp_path: Path) -> None:
    """An edited payload whose stored hashes were left alone: the stored tree still has the
    signed root, so a check of the stored hashes alone would say it holds. The events are
    re-hashed, and the checkpoint is not confirmed."""
    note = sign(url, key, tmp_path, "cp.note")
    lg = Ledger.open(url)
    try:
        tamper(lg, "UPDATE events SET payload = REPLACE(payload, '2', '7') WHERE seq = 3")
    finally:
        lg.close()
    _, err = run("verify-checkpoint", str(note), "--key", pub(key), "--db", url, code=1)
    assert "do not verify" in err and "seq 3" in err and "payload_hash" in err


def test_state_file_three_way_rule(url: str, key: Path, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    old = sign(url, key, tmp_path, "old.note")
    args = ["--key", pub(key), "--db", url, "--state", str(state)]
    out, _ = run("verify-checkpoint", str(old), *args)
    assert "state" in out and "new" in out
    held = json.loads(state.read_text())
    assert held["origins"][ORIGIN]["size"] == 5
    append(url, 4)
    new = sign(url, key, tmp_path, "new.note")
    out, _ = run("verify-checkpoint", str(new), *args)
    assert "extended" in out
    before = state.read_bytes()
    assert json.loads(before)["origins"][ORIGIN]["size"] == 9
    # Smaller: refused, state unchanged.
    _, err = run("verify-checkpoint", str(old), *args, code=1)
    assert "refusing to roll back" in err and state.read_bytes() == before
    # Same size, another root: a fork, refused (the note is validly signed).
    signer = parse_signer_key(key.read_text())
    fork = tmp_path / "fork.note"
    fork.write_text(sign_checkpoint(CheckpointBody(ORIGIN, 9, b"\x01" * 32), signer))
    _, err = run("verify-checkpoint", str(fork), *args, code=1)
    assert state.read_bytes() == before
    # Corrupt state: one line, left as it was.
    state.write_text("{not json", encoding="utf-8")
    _, err = run("verify-checkpoint", str(new), *args, code=1)
    assert "not JSON" in err and state.read_text() == "{not json"


def test_state_refuses_a_rewritten_history(key: Path, tmp_path: Path, empty_url: str) -> None:
    """A second ledger that shares no history: its larger checkpoint, validly signed by
    the same key, fails the consistency proof against the state."""
    migrate_url(empty_url)
    first = f"sqlite:///{tmp_path / 'first.db'}"
    migrate_url(first)
    append(first, 3)
    state = tmp_path / "state.json"
    note = sign(first, key, tmp_path, "first.note")
    run("verify-checkpoint", str(note), "--key", pub(key), "--db", first, "--state", str(state))
    lg = Ledger.open(empty_url)
    try:
        for i in range(7):
            lg.append("other", [NewEvent("test.rewritten", {"i": i})])
    finally:
        lg.close()
    rewritten = sign(empty_url, key, tmp_path, "rewritten.note")
    before = state.read_bytes()
    _, err = run("verify-checkpoint", str(rewritten), "--key", pub(key), "--db", empty_url,
                 "--state", str(state), code=1)  # fmt: skip
    assert "does not extend" in err and state.read_bytes() == before


def test_replay_accepts_a_signed_note(url: str, key: Path, tmp_path: Path) -> None:
    note = sign(url, key, tmp_path, "cp.note")
    state = tmp_path / "state.json"
    out, _ = run("replay", "--db", url, "--checkpoint", str(note), "--key", pub(key),
                 "--state", str(state))  # fmt: skip
    assert "everything held" in out and state.exists()
    run("replay", "--db", url, "--checkpoint", str(note), code=2)  # a note needs --key
    signer = parse_signer_key(key.read_text())
    forged = tmp_path / "forged.note"
    forged.write_text(sign_checkpoint(CheckpointBody(ORIGIN, 5, b"\x02" * 32), signer))
    result = CliRunner().invoke(cli, ["replay", "--db", url, "--checkpoint", str(forged),
                                      "--key", pub(key)])  # fmt: skip
    assert result.exit_code == 1 and "FAIL checkpoint" in result.stdout


def test_replay_with_only_a_state_file(url: str, key: Path, tmp_path: Path) -> None:
    note = sign(url, key, tmp_path, "cp.note")
    state = tmp_path / "state.json"
    run("verify-checkpoint", str(note), "--key", pub(key), "--db", url, "--state", str(state))
    out, _ = run("replay", "--db", url, "--state", str(state))
    assert "everything held" in out and "2 confirmed against the tree" in out
    # The state's checkpoint is what replay trusts: another root there is a divergence.
    data = json.loads(state.read_text())
    data["origins"][ORIGIN]["root"] = "A" * 43 + "="  # 32 zero bytes
    state.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["replay", "--db", url, "--state", str(state)])
    assert result.exit_code == 1 and "FAIL checkpoint" in result.stdout
