"""The signed-note vectors in ../shared/data/signed-note/vectors.json (golang.org/x/mod's
note tests, transparency-dev/formats, the C2SP spec) are the oracle for ledger/tlog/note.py and
ledger/tlog/checkpoint_note.py: every sign vector byte for byte, every open case as labelled,
every bad verifier key refused."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from ledger.errors import (
    InvalidSignatureError,
    KeyFormatError,
    MalformedNoteError,
    UnverifiedNoteError,
)
from ledger.tlog.checkpoint_note import body_of, parse_body
from ledger.tlog.note import (
    ALG_COSIGNATURE_V1,
    ALG_ED25519,
    cosignature_message,
    open_note,
    parse_note,
    parse_signer_key,
    parse_verifier_key,
    sign_note,
)
from tests.conftest import SHARED_DATA

VECTORS = SHARED_DATA / "signed-note" / "vectors.json"


def _vectors() -> dict[str, Any]:
    if not VECTORS.exists():
        pytest.skip(f"signed-note vectors not found at {VECTORS}")
    data: dict[str, Any] = json.loads(VECTORS.read_text(encoding="utf-8"))
    return data


def _cases(group: str) -> list[Any]:
    if not VECTORS.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{VECTORS} is absent"))]
    return list(json.loads(VECTORS.read_text(encoding="utf-8"))[group])


def test_every_vector_group_is_exercised() -> None:
    groups = set(_vectors()) - {"source"}
    assert groups == {
        "keys", "sign", "open_ok", "open_no_verifiable_signature", "open_invalid_signature",
        "open_malformed", "bad_vkeys", "cosignature_example",
    }  # fmt: skip


def test_keys_round_trip_and_pair_up() -> None:
    for name, pair in _vectors()["keys"].items():
        v = parse_verifier_key(pair["vkey"])
        assert (v.name, v.alg) == (name, ALG_ED25519)
        assert v.vkey() == pair["vkey"]
        if "skey" in pair:
            s = parse_signer_key(pair["skey"])
            assert s.skey() == pair["skey"]
            assert s.verifier() == v


@pytest.mark.parametrize("case", _cases("sign"))
def test_sign_vector_byte_for_byte(case: dict[str, Any]) -> None:
    signer = parse_signer_key(case["skey"])
    assert sign_note(case["text"], [signer]) == case["want_note"]


@pytest.mark.parametrize("case", _cases("open_ok"))
def test_open_ok(case: dict[str, Any]) -> None:
    keys = [parse_verifier_key(k) for k in case["vkeys"]]
    note = open_note(case["note"], keys)
    assert [s.name for s in note.sigs] == case["verified"]
    assert [s.name for s in note.unverified] == case["unverified"]
    assert case["note"].startswith(note.text)
    if "checkpoint" in case:
        body = parse_body(note.text)
        want = case["checkpoint"]
        assert (body.origin, body.size) == (want["origin"], want["size"])
        assert base64.b64encode(body.root).decode() == want["root_b64"]
        assert body.text() == note.text


@pytest.mark.parametrize("case", _cases("open_no_verifiable_signature"))
def test_open_no_verifiable_signature(case: dict[str, Any]) -> None:
    with pytest.raises(UnverifiedNoteError):
        open_note(case["note"], [parse_verifier_key(k) for k in case["vkeys"]])


@pytest.mark.parametrize("case", _cases("open_invalid_signature"))
def test_open_invalid_signature(case: dict[str, Any]) -> None:
    with pytest.raises(InvalidSignatureError):
        open_note(case["note"], [parse_verifier_key(k) for k in case["vkeys"]])


@pytest.mark.parametrize("case", _cases("open_malformed"))
def test_open_malformed(case: dict[str, Any]) -> None:
    with pytest.raises(MalformedNoteError):
        open_note(case["note"], [parse_verifier_key(k) for k in case["vkeys"]])
    with pytest.raises(MalformedNoteError):
        parse_note(case["note"])


@pytest.mark.parametrize("vkey", _cases("bad_vkeys"))
def test_bad_verifier_keys_are_refused(vkey: str) -> None:
    with pytest.raises(KeyFormatError):
        parse_verifier_key(vkey)


def test_cosignature_example_parses() -> None:
    ex = _vectors()["cosignature_example"]
    text, sigs = parse_note(ex["note"])
    body = body_of(ex["note"])
    assert (body.origin, body.size) == ("example.com/behind-the-sofa", 20852163)
    witness = [s for s in sigs if s.name == "witness.example.com/w1"]
    assert len(witness) == 1
    assert witness[0].timestamp() == ex["witness_signature_timestamp"]
    assert cosignature_message(ex["witness_signature_timestamp"], text).startswith(
        b"cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n"
    )


def test_cosigner_signs_and_verifies_under_the_cosignature_key_id() -> None:
    pair = _vectors()["keys"]["Log"]
    cosigner = parse_signer_key(pair["skey"], alg=ALG_COSIGNATURE_V1)
    plain = parse_signer_key(pair["skey"])
    assert cosigner.key_id != plain.key_id
    text = "Log\n123\nYmFuYW5hcw==\n"
    note = sign_note(text, [cosigner], timestamp=1679315147)
    opened = open_note(note, [cosigner.verifier()])
    assert opened.sigs[0].timestamp() == 1679315147
    with pytest.raises(UnverifiedNoteError):  # a note key does not pass for the cosigner
        open_note(note, [plain.verifier()])
