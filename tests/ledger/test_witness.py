"""The witness (c2sp.org/tlog-witness): add-checkpoint status codes, a log and two
witnesses, a fork refused by the witness that saw the first branch, the HTTP app, and
verify-checkpoint requiring N cosignatures."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from cli.audit.ledger_cli import cli
from ledger.envelope import NewEvent
from ledger.errors import CheckpointError
from ledger.store import Ledger
from ledger.tlog import merkle
from ledger.tlog.checkpoint_note import CheckpointBody, open_checkpoint, sign_checkpoint
from ledger.tlog.note import ALG_COSIGNATURE_V1, generate_signer
from ledger.tlog.proofs import checkpoint, consistency_path
from ledger.tlog.witness import (
    SIZE_CONTENT_TYPE,
    Witness,
    add_cosignatures,
    build_request,
    request_cosignature,
)
from ledger.tlog.witness_http import witness_app

ORIGIN = "example.org/log"
LOG = generate_signer(ORIGIN, seed=b"\x11" * 32)
W1 = generate_signer("w1.example", alg=ALG_COSIGNATURE_V1, seed=b"\x12" * 32)
W2 = generate_signer("w2.example", alg=ALG_COSIGNATURE_V1, seed=b"\x13" * 32)
ENTRIES = [hashlib.sha256(bytes([i])).digest() for i in range(20)]


def note_of(size: int, entries: list[bytes] = ENTRIES) -> str:
    body = CheckpointBody(ORIGIN, size, merkle.merkle_root(entries[:size]))
    return sign_checkpoint(body, LOG)


def make_witness(tmp: Path, signer: object = W1, name: str = "w1") -> Witness:
    return Witness(signer, {ORIGIN: [LOG.verifier()]}, tmp / name, clock=lambda: 1700000000)  # type: ignore[arg-type]


def add(w: Witness, old: int, note: str, proof: list[bytes] | None = None) -> tuple[int, str]:
    reply = w.add_checkpoint(build_request(old, proof or [], note))
    return reply.status, reply.body


def test_first_checkpoint_then_an_extension(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    status, line = add(w, 0, note_of(5))
    assert status == 200 and line.startswith("— w1.example ")
    cosigned = note_of(5) + line
    cp = open_checkpoint(cosigned, [LOG.verifier()], witness_keys=[W1.verifier()],
                         min_witnesses=1)  # fmt: skip
    assert cp.witnesses[0].timestamp == 1700000000
    status, _ = add(w, 5, note_of(9), merkle.consistency_proof(ENTRIES, 5, 9))
    assert status == 200
    held = w.held(ORIGIN)
    assert held is not None and held[0] == 9


def test_status_codes(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    assert add(w, 0, note_of(5))[0] == 200
    # 409: the witness holds 5; the body is that size, with the spec's content type.
    reply = w.add_checkpoint(build_request(3, [], note_of(9)))
    assert (reply.status, reply.body, reply.content_type) == (409, "5\n", SIZE_CONTENT_TYPE)
    # 404: an origin the witness does not know.
    other = generate_signer("example.org/other", seed=b"\x14" * 32)
    stranger = sign_checkpoint(CheckpointBody("example.org/other", 1, ENTRIES[0]), other)
    assert add(w, 0, stranger)[0] == 404
    # 403: right origin, signed by a key the witness does not trust for it.
    impostor = generate_signer(ORIGIN, seed=b"\x15" * 32)
    assert add(w, 5, sign_checkpoint(CheckpointBody(ORIGIN, 9, ENTRIES[0]), impostor))[0] == 403
    forged = note_of(9).replace("\n9\n", "\n8\n", 1)
    assert add(w, 5, forged)[0] == 403  # a known key's signature that fails
    # 400: old above the size; a malformed request.
    assert add(w, 9, note_of(5))[0] == 400
    assert w.add_checkpoint(b"old 05\n\n" + note_of(5).encode()).status == 400
    assert w.add_checkpoint(b"new 5\n\n" + note_of(5).encode()).status == 400
    assert w.add_checkpoint(b"old 5\nnot-base64\n\n" + note_of(9).encode()).status == 400
    # 422: a proof that fails; same size, another root; a size-0 root that is not empty.
    bad_proof = merkle.consistency_proof(ENTRIES, 4, 9)
    assert add(w, 5, note_of(9), bad_proof)[0] == 422
    fork = sign_checkpoint(CheckpointBody(ORIGIN, 5, b"\x00" * 32), LOG)
    assert add(w, 5, fork)[0] == 422
    fresh = make_witness(tmp_path, name="fresh")
    assert add(fresh, 0, note_of(5), [ENTRIES[0]])[0] == 422  # proof from size 0
    empty = sign_checkpoint(CheckpointBody(ORIGIN, 0, ENTRIES[0]), LOG)
    assert add(fresh, 0, empty)[0] == 422
    held = w.held(ORIGIN)
    assert held is not None and held[0] == 5  # nothing refused moved the state


def append(url: str, n: int, stream: str = "s") -> None:
    lg = Ledger.open(url)
    try:
        for i in range(n):
            lg.append(stream, [NewEvent("test.happened", {"i": i, "s": stream})])
    finally:
        lg.close()


def sign_ledger(lg: Ledger) -> str:
    cp = checkpoint(lg)
    return sign_checkpoint(CheckpointBody(ORIGIN, cp.tree_size, bytes.fromhex(cp.root)), LOG)


def test_a_log_and_two_witnesses_and_a_fork(ledger_url: str, tmp_path: Path) -> None:
    w1, w2 = make_witness(tmp_path, W1, "w1"), make_witness(tmp_path, W2, "w2")

    def send(w: Witness):  # type: ignore[no-untyped-def]
        def post(body: bytes) -> tuple[int, str]:
            reply = w.add_checkpoint(body)
            return reply.status, reply.body

        return post

    append(ledger_url, 5)
    lg = Ledger.open(ledger_url)
    try:
        note = sign_ledger(lg)
        replies = [request_cosignature(note, lambda a, b: consistency_path(lg, a, b), send(w))
                   for w in (w1, w2)]  # fmt: skip
        first = add_cosignatures(note, replies)
    finally:
        lg.close()
    append(ledger_url, 4)
    lg = Ledger.open(ledger_url)
    try:
        note = sign_ledger(lg)
        # Both witnesses hold 5: old 0 gets a 409, then a proof 5 -> 9 from the ledger.
        replies = [request_cosignature(note, lambda a, b: consistency_path(lg, a, b), send(w))
                   for w in (w1, w2)]  # fmt: skip
        second = add_cosignatures(note, replies)
    finally:
        lg.close()
    keys = [W1.verifier(), W2.verifier()]
    cp = open_checkpoint(second, [LOG.verifier()], witness_keys=keys, min_witnesses=2)
    assert cp.body.size == 9 and len(cp.witnesses) == 2
    assert open_checkpoint(first, [LOG.verifier()], witness_keys=keys, min_witnesses=2)

    # The log forks: another history of 9 events, signed with the same key. Witness 1
    # saw the first branch and refuses it, whichever old size is claimed.
    forked_url = f"sqlite:///{tmp_path / 'forked.db'}"
    from tests.conftest import migrate_url

    migrate_url(forked_url)
    append(forked_url, 9, stream="forked")
    forked = Ledger.open(forked_url)
    try:
        fork_note = sign_ledger(forked)
        proof = consistency_path(forked, 5, 9)
    finally:
        forked.close()
    assert add(w1, 9, fork_note)[0] == 422  # same size, another root
    assert add(w1, 5, fork_note, proof)[0] == 409  # it holds 9 now, not 5
    with pytest.raises(CheckpointError, match="422"):
        request_cosignature(fork_note, lambda a, b: proof, send(w1))
    # A witness that never saw the log cosigns the fork; one cosignature is not two.
    w3 = make_witness(tmp_path, generate_signer("w3.example", alg=ALG_COSIGNATURE_V1), "w3")
    fork_line = request_cosignature(fork_note, lambda a, b: proof, send(w3))
    cosigned_fork = add_cosignatures(fork_note, [fork_line])
    with pytest.raises(CheckpointError, match="1 valid witness"):
        open_checkpoint(cosigned_fork, [LOG.verifier()],
                        witness_keys=[*keys, w3.signer.verifier()], min_witnesses=2)  # fmt: skip


def test_http_app(tmp_path: Path) -> None:
    w = make_witness(tmp_path)

    async def exchange() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=witness_app(w))
        async with httpx.AsyncClient(transport=transport, base_url="http://w") as client:
            return [
                await client.post("/add-checkpoint", content=build_request(0, [], note_of(5))),
                await client.post("/add-checkpoint", content=build_request(0, [], note_of(9))),
                await client.get(f"/{Witness.origin_hash(ORIGIN)}/checkpoint"),
                await client.get(f"/{'0' * 64}/checkpoint"),
                await client.post("/add-checkpoint", content=b"x" * (65 * 1024)),
                await client.get("/add-checkpoint"),
            ]

    ok, conflict, held, unknown, huge, wrong_method = asyncio.run(exchange())
    assert ok.status_code == 200 and ok.text.startswith("— w1.example ")
    assert conflict.status_code == 409 and conflict.text == "5\n"
    assert conflict.headers["content-type"].startswith(SIZE_CONTENT_TYPE)
    assert held.status_code == 200 and held.text == note_of(5) + ok.text
    assert unknown.status_code == 404
    assert huge.status_code == 413
    assert wrong_method.status_code == 405


def test_cli_over_files_and_verify_checkpoint_quorum(ledger_url: str, tmp_path: Path) -> None:
    def run(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == code, (result.stdout, result.stderr)
        assert "Traceback" not in result.stdout + result.stderr
        if code == 1:
            assert result.stderr.count("\n") == 1
        return result.stdout if code == 0 else result.stderr

    append(ledger_url, 6)
    log_key, w1_key, w2_key = tmp_path / "log.key", tmp_path / "w1.key", tmp_path / "w2.key"
    run("keygen", ORIGIN, "--out", str(log_key))
    run("keygen", "w1.example", "--witness", "--out", str(w1_key))
    run("keygen", "w2.example", "--witness", "--out", str(w2_key))
    note = tmp_path / "cp.note"
    note.write_text(run("checkpoint", "--db", ledger_url, "--sign", str(log_key)))
    req = tmp_path / "req.txt"
    req.write_text(run("witness", "request", str(note), "--db", ledger_url))
    replies = []
    for name, key in (("w1", w1_key), ("w2", w2_key)):
        reply = tmp_path / f"{name}.reply"
        state_dir = str(tmp_path / name)
        reply.write_text(run("witness", "add-checkpoint", str(req), "--key", str(key),
                             "--log", f"{log_key}.pub", "--state-dir", state_dir))  # fmt: skip
        replies.append(str(reply))
    cosigned = tmp_path / "cosigned.note"
    cosigned.write_text(run("witness", "merge", str(note), *replies))
    wk = ["--witness-key", f"{w1_key}.pub", "--witness-key", f"{w2_key}.pub"]
    out = run("verify-checkpoint", str(cosigned), "--key", f"{log_key}.pub", *wk,
              "--min-witnesses", "2", "--db", ledger_url)  # fmt: skip
    assert "2 witness cosignature(s)" in out
    err = run("verify-checkpoint", str(note), "--key", f"{log_key}.pub", *wk,
              "--min-witnesses", "1", "--db", ledger_url, code=1)  # fmt: skip
    assert "0 valid witness cosignature(s), 1 required" in err
    # An old size the witness does not hold is a 409, in one line.
    append(ledger_url, 2)
    note2 = tmp_path / "cp2.note"
    note2.write_text(run("checkpoint", "--db", ledger_url, "--sign", str(log_key)))
    req2 = tmp_path / "req2.txt"
    req2.write_text(run("witness", "request", str(note2), "--db", ledger_url))
    err = run("witness", "add-checkpoint", str(req2), "--key", str(w1_key), "--log",
              f"{log_key}.pub", "--state-dir", str(tmp_path / "w1"), code=1)  # fmt: skip
    assert "409 Conflict: the witness holds size 6" in err
    req2.write_text(run("witness", "request", str(note2), "--old", "6", "--db", ledger_url))
    run("witness", "add-checkpoint", str(req2), "--key", str(w1_key), "--log",
        f"{log_key}.pub", "--state-dir", str(tmp_path / "w1"))  # fmt: skip
    # A log key is not a witness key.
    run("witness", "add-checkpoint", str(req2), "--key", str(w1_key), "--log",
        f"{w2_key}.pub", "--state-dir", str(tmp_path / "w1"), code=2)  # fmt: skip


def test_corrupt_witness_state_is_a_500_and_one_line(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    assert add(w, 0, note_of(5))[0] == 200
    state = tmp_path / "w1" / f"{Witness.origin_hash(ORIGIN)}.json"
    state.write_text("{broken", encoding="utf-8")
    status, body = add(w, 5, note_of(9), merkle.consistency_proof(ENTRIES, 5, 9))
    assert status == 500 and "unreadable" in body and body.count("\n") == 1
    assert state.read_text(encoding="utf-8") == "{broken"  # left for the operator
