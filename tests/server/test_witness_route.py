"""The witness mounted in ``aborist serve`` (``/witness/add-checkpoint``, aborist/server/app.py)
in process on SQLite and PostgreSQL: the log's side
(:func:`ledger.tlog.witness.request_cosignature`,
consistency proofs from the served ledger) gets cosignatures that verify; the codes are the
standalone witness's (404 unknown origin, 403 no valid log signature, 409 with the size held,
422 a fork); with a token the witness wants the bearer token like the API; without a witness
configured there is no such route."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aborist.server.tlog import KeySetupError, log_signing, witness_of
from ledger.envelope import NewEvent
from ledger.errors import CheckpointError
from ledger.store import Ledger
from ledger.tlog import merkle
from ledger.tlog.checkpoint_note import CheckpointBody, open_checkpoint, sign_checkpoint
from ledger.tlog.note import ALG_COSIGNATURE_V1, generate_signer
from ledger.tlog.proofs import checkpoint, consistency_path
from ledger.tlog.witness import SIZE_CONTENT_TYPE, Witness, add_cosignatures, build_request
from ledger.tlog.witness import request_cosignature as ask_witness
from tests.server.conftest import TOKEN, Client, Served

ORIGIN = "example.org/served-log"
LOG = generate_signer(ORIGIN, seed=b"\x21" * 32)
WITNESS = generate_signer("w.example", alg=ALG_COSIGNATURE_V1, seed=b"\x22" * 32)


def _keys(tmp: Path) -> tuple[Path, Path, Path]:
    wkey, logpub, state = tmp / "w.key", tmp / "log.pub", tmp / "wstate"
    wkey.write_text(WITNESS.skey() + "\n", encoding="utf-8")
    logpub.write_text(LOG.verifier().vkey() + "\n", encoding="utf-8")
    return wkey, logpub, state


@pytest.fixture
def witnessing(served: Served, tmp_path: Path) -> Iterator[Client]:
    wkey, logpub, state = _keys(tmp_path)
    with served.with_config(witness=witness_of(wkey, [str(logpub)], state)) as client:
        yield client


def _grow(url: str, n: int) -> str:
    """Append ``n`` events to the served ledger and sign a checkpoint of it."""
    with Ledger.open(url) as lg:
        for i in range(n):
            lg.append(f"test:{i % 3}", [NewEvent("test.happened", {"i": i})])
        cp = checkpoint(lg)
    return sign_checkpoint(CheckpointBody(ORIGIN, cp.tree_size, bytes.fromhex(cp.root)), LOG)


def _send(client: Client, headers: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    def post(body: bytes) -> tuple[int, str]:
        r = client.post("/witness/add-checkpoint", content=body, headers=headers or {})
        return r.status_code, r.text

    return post


def _proofs(url: str):  # type: ignore[no-untyped-def]
    def prove(a: int, b: int) -> list[bytes]:
        with Ledger.open(url) as lg:
            return consistency_path(lg, a, b)

    return prove


def test_the_log_gets_cosignatures_that_verify(served: Served, witnessing: Client) -> None:
    first = _grow(served.url, 5)
    line = ask_witness(first, _proofs(served.url), _send(witnessing))
    cosigned = add_cosignatures(first, [line])
    cp = open_checkpoint(cosigned, [LOG.verifier()], witness_keys=[WITNESS.verifier()],
                         min_witnesses=1)  # fmt: skip
    assert cp.witnesses[0].name == "w.example"
    # The ledger grows: the witness holds the first size, so the log's side gets a 409,
    # then sends a consistency proof from the ledger, and the witness cosigns.
    second = _grow(served.url, 7)
    line = ask_witness(second, _proofs(served.url), _send(witnessing))
    assert open_checkpoint(add_cosignatures(second, [line]), [LOG.verifier()],
                           witness_keys=[WITNESS.verifier()], min_witnesses=1)  # fmt: skip
    held = witnessing.get(f"/witness/{Witness.origin_hash(ORIGIN)}/checkpoint")
    assert held.status_code == 200 and held.text == second + line


def test_the_standalone_codes(served: Served, witnessing: Client) -> None:
    note = _grow(served.url, 4)
    size = open_checkpoint(note, [LOG.verifier()]).body.size
    post = _send(witnessing)
    assert post(build_request(0, [], note))[0] == 200
    # 409: an old size that is not the one held; the body is the size held
    r = witnessing.post("/witness/add-checkpoint", content=build_request(1, [], note))
    assert r.status_code == 409 and r.text == f"{size}\n"
    assert r.headers["content-type"].startswith(SIZE_CONTENT_TYPE)
    # 422: the same size with another root (a fork), signed by the log's own key
    fork = sign_checkpoint(CheckpointBody(ORIGIN, size, merkle.leaf_hash(b"fork")), LOG)
    assert post(build_request(size, [], fork))[0] == 422
    with pytest.raises(CheckpointError, match="422"):
        ask_witness(fork, _proofs(served.url), post, old=size)
    # 422: a consistency proof that fails
    later = _grow(served.url, 3)
    assert post(build_request(size, [b"\x00" * 32], later))[0] == 422
    # 403: the right origin, another key; 404: an origin the witness does not know
    impostor = generate_signer(ORIGIN)
    forged = sign_checkpoint(CheckpointBody(ORIGIN, size, merkle.EMPTY_ROOT), impostor)
    assert post(build_request(size, [], forged))[0] == 403
    stranger = generate_signer("other.example/log")
    other = sign_checkpoint(CheckpointBody("other.example/log", 1, b"\x01" * 32), stranger)
    assert post(build_request(0, [], other))[0] == 404
    assert post(b"not a request")[0] == 400


def test_behind_the_token_like_the_api(served: Served, tmp_path: Path) -> None:
    wkey, logpub, state = _keys(tmp_path)
    config = {"witness": witness_of(wkey, [str(logpub)], state), "token": TOKEN}
    with served.with_config(**config) as client:
        note = _grow(served.url, 2)
        body = build_request(0, [], note)
        r = client.post("/witness/add-checkpoint", content=body)
        assert r.status_code == 401 and r.json()["error"] == "unauthorized"
        r = client.post("/witness/add-checkpoint", content=body,
                        headers={"authorization": "Bearer wrong-token-0123456789"})  # fmt: skip
        assert r.status_code == 401
        assert client.get(f"/witness/{Witness.origin_hash(ORIGIN)}/checkpoint").status_code == 401
        ok = client.post("/witness/add-checkpoint", content=body,
                         headers={"authorization": f"Bearer {TOKEN}"})  # fmt: skip
        assert ok.status_code == 200 and ok.text.startswith("— w.example ")
        # a public host name is accepted with a token (a log calls from elsewhere)
        remote = Client(client.app, base_url="http://witness.example.org")
        size = open_checkpoint(note, [LOG.verifier()]).body.size
        r = remote.post("/witness/add-checkpoint", content=build_request(size, [], note),
                        headers={"authorization": f"Bearer {TOKEN}"})  # fmt: skip
        assert r.status_code == 200


def test_no_witness_configured_is_no_route(served: Served) -> None:
    note = sign_checkpoint(CheckpointBody(ORIGIN, 0, merkle.EMPTY_ROOT), LOG)
    r = served.client.post("/witness/add-checkpoint", content=build_request(0, [], note))
    assert r.status_code == 404


def test_a_request_too_large(served: Served, witnessing: Client) -> None:
    r = witnessing.post("/witness/add-checkpoint", content=b"x" * (65 * 1024))
    assert r.status_code == 413


def test_setup_refuses_what_it_cannot_use(tmp_path: Path) -> None:
    wkey, logpub, state = _keys(tmp_path)
    with pytest.raises(KeySetupError, match="verifier key of a log"):
        witness_of(wkey, [], state)
    with pytest.raises(KeySetupError, match="cannot read"):
        witness_of(wkey, [str(tmp_path / "none.pub")], state)
    notes = tmp_path / "notakey.pub"
    notes.write_text("hello\n", encoding="utf-8")
    with pytest.raises(KeySetupError, match=r"notakey\.pub"):
        witness_of(wkey, [str(notes)], state)
    (tmp_path / "file").write_text("", encoding="utf-8")
    with pytest.raises(KeySetupError, match="not a directory"):
        witness_of(wkey, [str(logpub)], tmp_path / "file")
    log_key = tmp_path / "log.key"
    log_key.write_text(LOG.skey(), encoding="utf-8")
    wpub = tmp_path / "w.pub"
    wpub.write_text(WITNESS.verifier().vkey(), encoding="utf-8")
    with pytest.raises(KeySetupError, match="Ed25519"):
        witness_of(wkey, [str(wpub)], state)  # a witness key is no log key
    assert log_signing(log_key, None).origin == ORIGIN


def test_witness_cosign_sends_the_bearer_token(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`aborist-ledger witness cosign --witness URL` against the witness of an `aborist
    serve` with a token: ABORIST_WITNESS_TOKEN goes as the bearer token, and the note
    comes back cosigned."""
    import httpx
    from click.testing import CliRunner

    from cli.audit.ledger_cli import cli

    wkey, logpub, state = _keys(tmp_path)
    with served.with_config(witness=witness_of(wkey, [str(logpub)], state), token=TOKEN) as c:
        note_file = tmp_path / "cp.note"
        note_file.write_text(_grow(served.url, 3), encoding="utf-8")

        def post(url: str, *, content: bytes, headers: dict[str, str], timeout: float) -> object:
            assert url == "http://127.0.0.1/witness/add-checkpoint"
            return c.post("/witness/add-checkpoint", content=content, headers=headers)

        monkeypatch.setattr(httpx, "post", post)
        args = ["witness", "cosign", str(note_file), "--witness", "http://127.0.0.1/witness",
                "--db", served.url]  # fmt: skip
        refused = CliRunner().invoke(cli, args)
        assert refused.exit_code == 1 and "401" in refused.output
        monkeypatch.setenv("ABORIST_WITNESS_TOKEN", TOKEN)
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 0, r.output
        assert TOKEN not in r.output
        cp = open_checkpoint(r.stdout, [LOG.verifier()], witness_keys=[WITNESS.verifier()],
                             min_witnesses=1)  # fmt: skip
        assert cp.witnesses[0].name == "w.example"


def test_serve_mounts_the_witness_or_refuses_in_one_line(
    ledger_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn
    from click.testing import CliRunner

    from cli.main import cli

    for var in ("ABORIST_API_TOKEN", "ABORIST_DB_URL", "ABORIST_LLM_BASE_URL", "ABORIST_LOG_KEY",
                "ABORIST_LOG_ORIGIN", "ABORIST_WITNESS_KEY", "ABORIST_WITNESS_LOGS",
                "ABORIST_WITNESS_STATE_DIR"):  # fmt: skip
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    started: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.append(app))
    wkey, logpub, state = _keys(tmp_path)
    base = ["serve", "--db", ledger_url]
    r = CliRunner().invoke(cli, [*base, "--witness-key", str(wkey)])
    assert r.exit_code == 1 and "--witness-state-dir" in r.output and "Traceback" not in r.output
    assert not started
    r = CliRunner().invoke(cli, [*base, "--witness-key", str(wkey), "--witness-log",
                                 str(logpub), "--witness-state-dir", str(state)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "witness for 1 log(s)" in r.output and WITNESS.skey() not in r.output
    [app] = started
    witness = app.app.state.aborist.config.witness  # type: ignore[attr-defined]
    assert witness is not None and list(witness.logs) == [ORIGIN]
