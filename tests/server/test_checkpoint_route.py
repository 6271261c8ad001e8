"""`GET /api/v1/checkpoint` (aborist/server/tlog.py) in process on SQLite and PostgreSQL:
with a log key the latest checkpoint is served as a C2SP signed note that verifies with
ledger/tlog/note.py and the verifier key alone; without one the response and the ledger page
say plainly that it is unsigned; a recorded checkpoint the tree does not give is never
signed; the private key is never served, logged or recorded; ``aborist serve`` refuses
a key it cannot use in one line."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from click.testing import CliRunner
from sqlalchemy import text

from aborist.server.cli_config import TlogKeys, config_from_environment, export_config
from aborist.server.tlog import UNSIGNED, KeySetupError, log_signing
from aborist.settings import Settings
from cli.main import cli
from ledger.errors import UnverifiedNoteError
from ledger.store import Ledger
from ledger.tlog import merkle
from ledger.tlog.checkpoint_note import open_checkpoint
from ledger.tlog.note import ALG_COSIGNATURE_V1, Signer, generate_signer, open_note
from ledger.tlog.proofs import checkpoint
from tests.server.conftest import Client, Dom, Served

ORIGIN = "example.org/aborist-test"


@pytest.fixture
def log_key(tmp_path: Path) -> tuple[Path, Signer]:
    signer = generate_signer(ORIGIN)
    path = tmp_path / "log.key"
    path.write_text(signer.skey() + "\n", encoding="utf-8")
    path.chmod(0o600)
    (tmp_path / "log.key.pub").write_text(signer.verifier().vkey() + "\n", encoding="utf-8")
    return path, signer


@pytest.fixture
def signing(served: Served, log_key: tuple[Path, Signer]) -> Iterator[Client]:
    with served.with_config(log_signing=log_signing(log_key[0], None)) as client:
        yield client


def _ask(client: Client) -> str:
    r = client.post("/api/v1/query", json={"question": "How long is the Silverrun River?"})
    assert r.status_code == 200, r.text
    return str(r.json()["run_id"])


def _checkpoint(url: str) -> tuple[int, str]:
    with Ledger.open(url) as lg:
        cp = checkpoint(lg)
        assert cp.root == merkle.merkle_root(lg.event_hashes()).hex()
        return cp.tree_size, cp.root


def test_the_served_note_verifies_with_the_verifier_key(
    served: Served, signing: Client, log_key: tuple[Path, Signer]
) -> None:
    _ask(signing)
    size, root = _checkpoint(served.url)
    r = signing.get("/api/v1/checkpoint")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["signed"] is True and body["unsigned_reason"] is None
    assert (body["tree_size"], body["root"], body["origin"]) == (size, root, ORIGIN)
    verifier = log_key[1].verifier()
    assert body["signed_by"] == f"{ORIGIN}+{verifier.key_id:08x}"
    opened = open_checkpoint(body["note"], [verifier], origin=ORIGIN)
    assert (opened.body.size, opened.body.root.hex()) == (size, root)
    # the note's text is exactly the C2SP checkpoint body
    note = open_note(body["note"], [verifier])
    assert note.text == f"{ORIGIN}\n{size}\n{base64.b64encode(bytes.fromhex(root)).decode()}\n"
    plain = signing.get("/api/v1/checkpoint/note")
    assert plain.status_code == 200 and plain.headers["content-type"].startswith("text/plain")
    assert plain.text == body["note"]
    page = Dom(signing.get("/ledger").text)
    assert "signed by" in page.by_id("checkpoint-signed").text()
    assert page.by_id("checkpoint-note").text() == body["note"]


def test_a_note_from_another_key_does_not_verify(served: Served, signing: Client) -> None:
    _checkpoint(served.url)
    note = signing.get("/api/v1/checkpoint").json()["note"]
    other = generate_signer(ORIGIN).verifier()  # same name, another key
    with pytest.raises(UnverifiedNoteError, match="no signature from a known key"):
        open_checkpoint(note, [other])


def test_unsigned_says_so(served: Served) -> None:
    _checkpoint(served.url)
    body = served.client.get("/api/v1/checkpoint").json()
    assert body["signed"] is False and body["note"] is None and body["signed_by"] is None
    assert body["unsigned_reason"] == UNSIGNED and body["unsigned_reason"].startswith("unsigned")
    r = served.client.get("/api/v1/checkpoint/note")
    assert r.status_code == 404 and r.json()["detail"] == UNSIGNED
    page = Dom(served.client.get("/ledger").text)
    assert page.by_id("checkpoint-signed").text().startswith("unsigned: no log signing key")


def test_a_checkpoint_the_tree_does_not_give_is_not_signed(served: Served, signing: Client) -> None:
    _checkpoint(served.url)
    _ask(signing)  # more events, then a checkpoint row of the new head with a forged root
    with Ledger.open(served.url) as lg:
        hashes = lg.event_hashes()
        root = merkle.merkle_root(hashes).hex()
        forged = ("f" if root[0] != "f" else "e") + root[1:]
        with lg.engine.begin() as conn:
            conn.execute(
                text("INSERT INTO checkpoints (tree_size, root, created_at) VALUES (:s, :r, :c)"),
                {"s": len(hashes), "r": forged, "c": "2026-12-01T00:00:00.000000Z"},
            )
    r = signing.get("/api/v1/checkpoint")
    assert r.status_code == 409 and r.json()["error"] == "conflict"
    assert forged in r.json()["detail"] and root in r.json()["detail"]
    assert signing.get("/api/v1/checkpoint/note").status_code == 409
    page = signing.get("/ledger")
    assert page.status_code == 200 and "not signing" in Dom(page.text).by_id("checkpoint").text()


def test_the_key_is_never_served_logged_or_recorded(
    served: Served, signing: Client, log_key: tuple[Path, Signer], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    path, signer = log_key
    secrets = [
        signer.skey(),
        base64.b64encode(bytes([1]) + signer.seed).decode(),
        signer.seed.hex(),
    ]
    run = _ask(signing)
    _checkpoint(served.url)
    bodies = [signing.get(u).text for u in (
        "/", "/ledger", "/runs", f"/runs/{run}", "/openapi.json", "/api/v1/checkpoint",
        "/api/v1/checkpoint/note", "/api/v1/health", f"/api/v1/runs/{run}",
        f"/api/v1/runs/{run}/bundle",
    )]  # fmt: skip
    with Ledger.open(served.url) as lg:
        bodies += [ev.payload for ev in lg.iter_events()]
        bodies += [bytes(b).decode("latin-1") for _, b in lg.iter_blobs()]
    bodies += [r.getMessage() for r in caplog.records]
    bodies.append(repr(signing.app.app.state.aborist.config))
    for s in secrets:
        assert not any(s in b for b in bodies)
    assert not any(str(path) in b for b in bodies[:10])  # not even the key's path is served


def test_log_key_setup_refuses_what_it_cannot_use(
    tmp_path: Path, log_key: tuple[Path, Signer]
) -> None:
    with pytest.raises(KeySetupError, match="no key file"):
        log_signing(tmp_path / "missing.key", None)
    witness = tmp_path / "w.key"
    witness.write_text(
        generate_signer("w.example", alg=ALG_COSIGNATURE_V1).skey(), encoding="utf-8"
    )
    with pytest.raises(KeySetupError, match="witness key"):
        log_signing(witness, None)
    with pytest.raises(KeySetupError, match="ABORIST_LOG_ORIGIN"):
        log_signing(log_key[0], "another.example/log")
    assert log_signing(log_key[0], ORIGIN).origin == ORIGIN
    bad = tmp_path / "bad.key"
    bad.write_text("PRIVATE+KEY+nonsense", encoding="utf-8")
    with pytest.raises(KeySetupError) as e:
        log_signing(bad, None)
    assert "nonsense" not in str(e.value).replace(str(bad), "")


def test_workers_get_key_paths_not_keys(tmp_path: Path, ledger_url: str,
                                        log_key: tuple[Path, Signer]) -> None:  # fmt: skip
    env: dict[str, str] = {}
    settings = Settings(db_url=ledger_url, shard_dir=tmp_path)
    export_config(env, settings=settings, model_kind=None, timeout=None, token=None,
                  max_body_bytes=4096, replay_jobs_dir=tmp_path,
                  keys=TlogKeys(log_key=log_key[0]))  # fmt: skip
    assert env["ABORIST_LOG_KEY"] == str(log_key[0].resolve())
    assert not any(log_key[1].skey() in v for v in env.values())
    config = config_from_environment(env)
    assert config.log_signing is not None and config.log_signing.origin == ORIGIN
    assert config.witness is None


@pytest.fixture
def serve_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[object]:
    for var in ("ABORIST_API_TOKEN", "ABORIST_DB_URL", "ABORIST_LLM_BASE_URL", "ABORIST_LOG_KEY",
                "ABORIST_LOG_ORIGIN", "ABORIST_WITNESS_KEY", "ABORIST_WITNESS_LOGS",
                "ABORIST_WITNESS_STATE_DIR"):  # fmt: skip
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    started: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.append(app))
    return started


def test_serve_refuses_a_bad_key_in_one_line(serve_env: list[object], ledger_url: str,
                                             tmp_path: Path, log_key: tuple[Path, Signer],
                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    runner = CliRunner()
    r = runner.invoke(cli, ["serve", "--db", ledger_url, "--log-key", str(tmp_path / "nope")])
    assert r.exit_code == 1 and "no key file" in r.output and "Traceback" not in r.output
    monkeypatch.setenv("ABORIST_LOG_ORIGIN", "another.example/log")
    r = runner.invoke(cli, ["serve", "--db", ledger_url, "--log-key", str(log_key[0])])
    assert r.exit_code == 1 and "ABORIST_LOG_ORIGIN" in r.output
    assert log_key[1].skey() not in r.output and not serve_env
    monkeypatch.delenv("ABORIST_LOG_ORIGIN")
    monkeypatch.setenv("ABORIST_LOG_KEY", str(log_key[0]))  # the variable works as the flag
    r = runner.invoke(cli, ["serve", "--db", ledger_url])
    assert r.exit_code == 0, r.output
    assert f"checkpoints signed as {ORIGIN}" in r.output and log_key[1].skey() not in r.output
    [app] = serve_env
    assert app.app.state.aborist.config.log_signing.origin == ORIGIN  # type: ignore[attr-defined]
