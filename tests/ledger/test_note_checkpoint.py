"""Checkpoint notes: the body grammar, the log signature, origin, and witness quorum."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.errors import (
    CheckpointError,
    InvalidSignatureError,
    KeyFormatError,
    MalformedNoteError,
    UnverifiedNoteError,
)
from ledger.tlog.checkpoint_note import (
    CheckpointBody,
    open_checkpoint,
    parse_body,
    sign_checkpoint,
)
from ledger.tlog.note import (
    ALG_COSIGNATURE_V1,
    generate_signer,
    open_note,
    parse_signer_key,
    parse_verifier_key,
    sign_note,
)

ROOT = hashlib.sha256(b"root").digest()
LOG = generate_signer("example.org/log", seed=b"\x01" * 32)
OTHER = generate_signer("example.org/other", seed=b"\x02" * 32)
W1 = generate_signer("w1.example", alg=ALG_COSIGNATURE_V1, seed=b"\x03" * 32)
W2 = generate_signer("w2.example", alg=ALG_COSIGNATURE_V1, seed=b"\x04" * 32)


def _note(size: int = 7, root: bytes = ROOT) -> str:
    return sign_checkpoint(CheckpointBody("example.org/log", size, root), LOG)


def _cosign(note: str, *witnesses: object, ts: int = 1700000000) -> str:
    opened = open_note(note, [LOG.verifier()])
    signers = [w for w in witnesses]
    return sign_note(opened.text, signers, timestamp=ts, keep=opened.sigs)  # type: ignore[arg-type]


def test_signed_checkpoint_opens_with_the_log_key() -> None:
    cp = open_checkpoint(_note(), [LOG.verifier()], origin="example.org/log")
    assert (cp.body.size, cp.body.root) == (7, ROOT)
    assert cp.text == _note()


def test_generated_keys_round_trip_through_their_text_forms() -> None:
    again = parse_signer_key(LOG.skey())
    assert again == LOG
    assert parse_verifier_key(LOG.verifier().vkey()) == LOG.verifier()
    assert parse_verifier_key(W1.verifier().vkey()).alg == ALG_COSIGNATURE_V1
    assert "PRIVATE" not in repr(LOG) and LOG.seed.hex() not in repr(LOG)


@pytest.mark.parametrize(
    "text",
    [
        "o\n7\n",  # two lines
        "\n7\nAAAA\n",  # empty origin
        "o\n07\nAAAA\n",  # leading zero
        "o\n-1\nAAAA\n",
        "o\n١٢\nAAAA\n",  # non-ASCII digits
        "o\n7\nnot base64!\n",
        "o\n7\nAAAA\n\n",  # empty extension line
        "o\n7\nAAAA",  # no final newline
    ],
)
def test_malformed_bodies_are_refused(text: str) -> None:
    with pytest.raises(CheckpointError):
        parse_body(text)


def test_zero_size_and_extensions_parse() -> None:
    body = parse_body("o\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\next\n")
    assert (body.size, body.extensions) == (0, ("ext",))
    assert body.text().endswith("\next\n")


def test_other_origin_is_refused() -> None:
    with pytest.raises(CheckpointError, match=r"origin .example\.org/log., expected"):
        open_checkpoint(_note(), [LOG.verifier()], origin="example.org/elsewhere")


def test_unknown_key_and_wrong_key_id_are_refused() -> None:
    with pytest.raises(UnverifiedNoteError, match="no signature from a known key"):
        open_checkpoint(_note(), [OTHER.verifier()])
    # Same name, another key: its key ID differs, so the line is from an unknown key.
    impostor = generate_signer("example.org/log", seed=b"\x09" * 32)
    with pytest.raises(UnverifiedNoteError):
        open_checkpoint(_note(), [impostor.verifier()])


def test_tampered_root_fails_the_signature() -> None:
    note = _note()
    text, sig = note.split("\n\n", 1)
    forged = text.replace(text.split("\n")[2], "A" * 43 + "=") + "\n\n" + sig
    with pytest.raises(InvalidSignatureError):
        open_checkpoint(forged, [LOG.verifier()])


def test_log_key_must_be_named_after_the_origin() -> None:
    with pytest.raises(CheckpointError, match="origin"):
        sign_checkpoint(CheckpointBody("example.org/log", 1, ROOT), OTHER)
    body = CheckpointBody("example.org/log", 1, ROOT)
    note = sign_note(body.text(), [OTHER])  # signed by a key of another name
    with pytest.raises(CheckpointError, match="not by the log"):
        open_checkpoint(note, [OTHER.verifier()])


def test_witness_quorum() -> None:
    note = _cosign(_note(), W1, W2)
    keys = [W1.verifier(), W2.verifier()]
    cp = open_checkpoint(note, [LOG.verifier()], witness_keys=keys, min_witnesses=2)
    assert {w.name for w in cp.witnesses} == {"w1.example", "w2.example"}
    assert all(w.timestamp == 1700000000 for w in cp.witnesses)
    with pytest.raises(CheckpointError, match="1 valid witness cosignature"):
        open_checkpoint(_cosign(_note(), W1), [LOG.verifier()], witness_keys=keys,
                        min_witnesses=2)  # fmt: skip
    with pytest.raises(CheckpointError, match="0 valid witness"):
        open_checkpoint(_note(), [LOG.verifier()], witness_keys=keys, min_witnesses=1)


def test_witness_cosignature_over_another_timestamp_fails() -> None:
    note = _cosign(_note(), W1, ts=1700000000)
    line = next(x for x in note.splitlines() if x.startswith("— w1.example "))
    other = _cosign(_note(), W1, ts=1700000001)
    other_line = next(x for x in other.splitlines() if x.startswith("— w1.example "))
    # Splice the signature of one timestamp under the timestamp bytes of the other.
    import base64

    a = base64.b64decode(line.split(" ")[2])
    b = base64.b64decode(other_line.split(" ")[2])
    spliced = base64.b64encode(a[:12] + b[12:]).decode()
    forged = note.replace(line, f"— w1.example {spliced}")
    with pytest.raises(InvalidSignatureError):
        open_checkpoint(forged, [LOG.verifier()], witness_keys=[W1.verifier()])


def test_signer_refuses_bad_text_and_duplicates() -> None:
    with pytest.raises(MalformedNoteError):
        sign_note("no newline", [LOG])
    with pytest.raises(MalformedNoteError):
        sign_note("tab\there\n", [LOG])
    with pytest.raises(KeyFormatError):
        sign_note("x\n", [LOG, LOG])
    with pytest.raises(KeyFormatError):
        generate_signer("has space")
    with pytest.raises(KeyFormatError):
        generate_signer("has+plus")


@pytest.mark.parametrize(
    "skey",
    [
        "PRIVATE+KEY+x",
        "PUBLIC+KEY+example.org/log+00000000+AQ==",
        LOG.skey().replace(f"+{LOG.key_id:08x}+", "+00000000+"),  # wrong key ID
        LOG.skey().replace(f"+{LOG.key_id:08x}+", "+0000000+"),  # short key ID
        LOG.skey()[:-4] + "AAA=",  # seed altered: the key ID no longer matches
    ],
)
def test_bad_signer_keys_are_refused(skey: str) -> None:
    with pytest.raises(KeyFormatError):
        parse_signer_key(skey)


@given(
    origin=st.text(
        st.characters(min_codepoint=0x21, max_codepoint=0x2FF, exclude_characters="+"),
        min_size=1,
        max_size=30,
    ),
    size=st.integers(min_value=0, max_value=(1 << 64) - 1),
    root=st.binary(min_size=32, max_size=32),
)
def test_body_round_trip(origin: str, size: int, root: bytes) -> None:
    body = CheckpointBody(origin, size, root)
    assert parse_body(body.text()) == body
