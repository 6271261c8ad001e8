"""Offline proofs of inclusion (c2sp.org/tlog-proof@v1): the entry's index, its RFC 6962
inclusion proof, and the signed (optionally cosigned) checkpoint, as one text::

    c2sp.org/tlog-proof@v1
    extra <base64>            (optional, unauthenticated)
    index <decimal>
    <base64 hash>             (zero or more, leaf side first)

    <checkpoint note>

Here an entry is an event hash, so the leaf is ``HASH(0x00 ‖ event hash)``; the proof of a
run is that of its last event, which chains every earlier event of the ledger.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ledger.errors import CheckpointError, MalformedNoteError
from ledger.tlog import merkle
from ledger.tlog.checkpoint_note import SignedCheckpoint, open_checkpoint
from ledger.tlog.note import Verifier

__all__ = ["PROOF_HEADER", "TlogProof", "format_proof", "parse_proof", "verify_proof"]

PROOF_HEADER = "c2sp.org/tlog-proof@v1"


@dataclass(frozen=True, slots=True)
class TlogProof:
    index: int
    proof: tuple[bytes, ...]
    note: str
    extra: bytes | None = None


def format_proof(
    index: int, proof: Sequence[bytes], note: str, *, extra: bytes | None = None
) -> str:
    lines = [PROOF_HEADER]
    if extra is not None:
        lines.append("extra " + base64.b64encode(extra).decode("ascii"))
    lines.append(f"index {index}")
    lines += [base64.b64encode(p).decode("ascii") for p in proof]
    return "\n".join(lines) + "\n\n" + note


def _b64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None


def parse_proof(text: str) -> TlogProof:
    """Raises :class:`MalformedNoteError` naming the line that is wrong."""
    head, sep, note = text.partition("\n\n")
    if not sep:
        raise MalformedNoteError("tlog-proof: no empty line before the checkpoint")
    lines = head.split("\n")
    if lines[0] != PROOF_HEADER:
        raise MalformedNoteError(f"tlog-proof: the first line must be {PROOF_HEADER}")
    rest = lines[1:]
    extra = None
    if rest and rest[0].startswith("extra "):
        extra = _b64(rest[0][6:])
        if extra is None:
            raise MalformedNoteError("tlog-proof: the extra line is not base64")
        rest = rest[1:]
    if not rest or not rest[0].startswith("index "):
        raise MalformedNoteError("tlog-proof: no 'index N' line")
    digits = rest[0][6:]
    if not digits.isascii() or not digits.isdigit() or (len(digits) > 1 and digits[0] == "0"):
        raise MalformedNoteError(f"tlog-proof: index {digits!r} is not a decimal number")
    proof = []
    for line in rest[1:]:
        h = _b64(line)
        if h is None or len(h) != merkle.HASH_SIZE:
            raise MalformedNoteError(f"tlog-proof: {line[:60]!r} is not a base64 SHA-256 hash")
        proof.append(h)
    return TlogProof(int(digits), tuple(proof), note, extra)


def verify_proof(
    text: str,
    entry: bytes,
    log_keys: Sequence[Verifier],
    *,
    origin: str | None = None,
    witness_keys: Iterable[Verifier] = (),
    min_witnesses: int = 0,
) -> SignedCheckpoint:
    """The checkpoint the proof binds ``entry`` (an event hash) to, once the log's
    signature, the witness quorum and the inclusion proof have all held."""
    proof = parse_proof(text)
    cp = open_checkpoint(
        proof.note, log_keys, origin=origin, witness_keys=witness_keys,
        min_witnesses=min_witnesses,
    )  # fmt: skip
    if not merkle.verify_inclusion(
        merkle.leaf_hash(entry), proof.index, cp.body.size, list(proof.proof), cp.body.root
    ):
        raise CheckpointError(
            f"tlog-proof: the entry is not at index {proof.index} of the tree of size "
            f"{cp.body.size} with root {cp.body.root.hex()}"
        )
    return cp
