"""An auditor with only the log's verifier key, a signed note and a bundle verifies a run
offline (verify-bundle --checkpoint NOTE --key VKEY), with a verified state file."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cli.audit.ledger_cli import cli
from ledger.tlog.checkpoint_note import CheckpointBody, sign_checkpoint
from ledger.tlog.note import parse_signer_key
from tests.audit.builders import build_ledger


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, result.stdout, result.stderr


def test_offline_bundle_with_a_signed_note(ledger_url: str, tmp_path: Path) -> None:
    built = build_ledger(ledger_url, tmp_path)
    try:
        key = tmp_path / "log.key"
        assert invoke("keygen", "example.org/ledger", "--out", str(key))[0] == 0
        code, note_text, _ = invoke("checkpoint", "--db", ledger_url, "--sign", str(key))
        assert code == 0
        note = tmp_path / "cp.note"
        note.write_text(note_text, encoding="utf-8")
        bundle = tmp_path / "bundle.json"
        code, _, err = invoke("export", "--db", ledger_url, "--run", built.lattice,
                              "-o", str(bundle))  # fmt: skip
        assert code == 0, err
    finally:
        built.ledger.close()
    vkey, state = f"{key}.pub", tmp_path / "state.json"
    code, out, err = invoke("verify-bundle", str(bundle), "--checkpoint", str(note),
                            "--key", vkey, "--state", str(state), "--json")  # fmt: skip
    assert code == 0, (out, err)
    report = json.loads(out)
    assert report["ok"] is True and report["trusted_checkpoint"] is not None
    assert json.loads(state.read_text())["origins"]["example.org/ledger"]["note"] == note_text

    # A note of the same size with another root (validly signed: the operator's key)
    # does not vouch for this bundle, and the state is not replaced.
    signer = parse_signer_key(key.read_text())
    size = int(note_text.split("\n")[1])
    forged = tmp_path / "forged.note"
    forged.write_text(sign_checkpoint(CheckpointBody("example.org/ledger", size, b"\x05" * 32),
                                      signer))  # fmt: skip
    before = state.read_bytes()
    code, _, err = invoke("verify-bundle", str(bundle), "--checkpoint", str(forged),
                          "--key", vkey, "--state", str(state))  # fmt: skip
    assert code == 1 and "fork" in err and err.count("\n") == 1
    code, out, _ = invoke("verify-bundle", str(bundle), "--checkpoint", str(forged),
                          "--key", vkey)  # fmt: skip
    assert code == 1 and "FAILED at checkpoint" in out + _
    assert state.read_bytes() == before


def test_bundle_extends_the_state_with_its_own_consistency_proof(
    ledger_url: str, tmp_path: Path
) -> None:
    from ledger.envelope import NewEvent

    built = build_ledger(ledger_url, tmp_path)
    try:
        key = tmp_path / "log.key"
        invoke("keygen", "example.org/ledger", "--out", str(key))
        first = tmp_path / "first.note"
        first.write_text(invoke("checkpoint", "--db", ledger_url, "--sign", str(key))[1])
        built.ledger.append("other:1", [NewEvent("test.later", {"i": i}) for i in range(5)])
        second = tmp_path / "second.note"
        second.write_text(invoke("checkpoint", "--db", ledger_url, "--sign", str(key))[1])
        bundle = tmp_path / "bundle.json"
        assert invoke("export", "--db", ledger_url, "--run", built.lattice, "-o",
                      str(bundle))[0] == 0  # fmt: skip
    finally:
        built.ledger.close()
    vkey, state = f"{key}.pub", tmp_path / "state.json"
    args = ["--key", vkey, "--state", str(state)]
    # The first note is older than the bundle's checkpoint; the bundle carries the
    # consistency proof from it, so it vouches for the bundle, and becomes the state.
    code, out, err = invoke("verify-bundle", str(bundle), "--checkpoint", str(first), *args)
    assert code == 0, (out, err)
    held = json.loads(state.read_text())["origins"]["example.org/ledger"]
    assert held["note"] == first.read_text()
    code, out, err = invoke("verify-bundle", str(bundle), "--checkpoint", str(second), *args)
    assert code == 0, (out, err)
    held = json.loads(state.read_text())["origins"]["example.org/ledger"]
    assert held["note"] == second.read_text()
    # Back to the first: smaller than the state, refused.
    code, _, err = invoke("verify-bundle", str(bundle), "--checkpoint", str(first), *args)
    assert code == 1 and "roll back" in err
