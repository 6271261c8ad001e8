"""Checkpoints as signed notes (c2sp.org/tlog-checkpoint) and their witness cosignatures
(c2sp.org/tlog-cosignature).

The note text is three lines, ``<origin>\\n<tree size>\\n<base64 RFC 6962 root>\\n``,
optionally followed by extension lines (this log writes none). The log signs it with an
Ed25519 key (type 0x01) whose name is the origin; a witness adds a cosignature v1 line
(type 0x04) once it has checked that the checkpoint extends the last one it saw.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ledger.errors import CheckpointError, UnverifiedNoteError
from ledger.tlog.note import (
    ALG_COSIGNATURE_V1,
    ALG_ED25519,
    Note,
    Signer,
    Verifier,
    open_note,
    parse_note,
    sign_note,
)

__all__ = [
    "CheckpointBody",
    "SignedCheckpoint",
    "Witnessed",
    "open_checkpoint",
    "parse_body",
    "sign_checkpoint",
]


@dataclass(frozen=True, slots=True)
class CheckpointBody:
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        lines = [self.origin, str(self.size), base64.b64encode(self.root).decode("ascii")]
        return "\n".join([*lines, *self.extensions]) + "\n"

    @property
    def root_hex(self) -> str:
        return self.root.hex()

    def to_dict(self) -> dict[str, object]:
        return {"origin": self.origin, "tree_size": self.size, "root": self.root_hex}


def parse_body(text: str) -> CheckpointBody:
    """The checkpoint in a note's text; raises :class:`CheckpointError` naming what is wrong.

    The size is decimal without leading zeros; the root any non-empty standard base64
    (an RFC 6962 SHA-256 root is 32 bytes, and that is checked where the root is used)."""
    if not text.endswith("\n"):
        raise CheckpointError("a checkpoint text must end with a newline")
    lines = text[:-1].split("\n")
    if len(lines) < 3:
        raise CheckpointError(f"a checkpoint has at least 3 lines, found {len(lines)}")
    origin, size_text, root_text, *extensions = lines
    if not origin:
        raise CheckpointError("the checkpoint origin line is empty")
    if (
        not size_text.isascii()
        or not size_text.isdigit()
        or (len(size_text) > 1 and size_text[0] == "0")
    ):
        raise CheckpointError(f"checkpoint tree size {size_text!r} is not a decimal number")
    size = int(size_text)
    if size >= 1 << 64:
        raise CheckpointError(f"checkpoint tree size {size_text} does not fit in 64 bits")
    try:
        root = base64.b64decode(root_text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        root = b""
    if not root:
        raise CheckpointError(f"checkpoint root {root_text!r} is not base64")
    if any(not e for e in extensions):
        raise CheckpointError("checkpoint extension lines must not be empty")
    return CheckpointBody(origin, size, root, tuple(extensions))


@dataclass(frozen=True, slots=True)
class Witnessed:
    """A verified cosignature: the witness key's name and the time it states."""

    name: str
    key_id: int
    timestamp: int

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "key_id": f"{self.key_id:08x}", "timestamp": self.timestamp}


@dataclass(frozen=True, slots=True)
class SignedCheckpoint:
    body: CheckpointBody
    note: Note
    text: str
    """The whole note as received (text, blank line, signature lines)."""
    witnesses: tuple[Witnessed, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            **self.body.to_dict(),
            "signed_by": [f"{s.name}+{s.key_id:08x}" for s in self.note.sigs],
            "witnesses": [w.to_dict() for w in self.witnesses],
        }


def sign_checkpoint(body: CheckpointBody, signer: Signer) -> str:
    """The checkpoint as a note signed by the log key (Ed25519, its name the origin)."""
    if signer.alg != ALG_ED25519:
        raise CheckpointError("a log signs its checkpoints with an Ed25519 (0x01) key")
    if signer.name != body.origin:
        raise CheckpointError(
            f"the key is named {signer.name!r}, but the log's origin is {body.origin!r}"
        )
    return sign_note(body.text(), [signer])


def open_checkpoint(
    msg: str | bytes,
    log_keys: Sequence[Verifier],
    *,
    origin: str | None = None,
    witness_keys: Iterable[Verifier] = (),
    min_witnesses: int = 0,
) -> SignedCheckpoint:
    """Verify a checkpoint note: a signature by one of ``log_keys`` (Ed25519), the origin
    (``origin`` when given, and the log key's name), and at least ``min_witnesses`` valid
    cosignatures v1 from distinct ``witness_keys``.

    Raises a :class:`~ledger.errors.NoteError` subclass, naming what failed."""
    logs = [k for k in log_keys if k.alg == ALG_ED25519]
    if not logs:
        raise CheckpointError("no log verifier key (Ed25519, type 0x01) given")
    note = open_note(msg, logs)
    body = parse_body(note.text)
    if origin is not None and body.origin != origin:
        raise CheckpointError(f"checkpoint is for origin {body.origin!r}, expected {origin!r}")
    if not any(s.name == body.origin for s in note.sigs):
        signers = ", ".join(s.name for s in note.sigs)
        raise CheckpointError(
            f"checkpoint for origin {body.origin!r} is signed by {signers}, not by the log "
            "its origin names"
        )
    cosigners = [_as_cosigner(k) for k in witness_keys]
    witnessed: list[Witnessed] = []
    if cosigners:
        try:
            cosigned = open_note(msg, cosigners)
        except UnverifiedNoteError:
            cosigned = None
        if cosigned is not None:
            for s in cosigned.sigs:
                ts = s.timestamp()
                assert ts is not None  # a verified cosignature v1 has one
                witnessed.append(Witnessed(s.name, s.key_id, ts))
    distinct = {(w.name, w.key_id) for w in witnessed}
    if len(distinct) < min_witnesses:
        raise CheckpointError(
            f"checkpoint carries {len(distinct)} valid witness cosignature(s), "
            f"{min_witnesses} required"
        )
    text = msg.decode("utf-8") if isinstance(msg, bytes) else msg
    return SignedCheckpoint(body, note, text, tuple(witnessed))


def _as_cosigner(key: Verifier) -> Verifier:
    """A witness key as a cosignature v1 verifier; an Ed25519 (0x01) vkey is re-typed, as
    transparency-dev's ``NewVerifierForCosignatureV1`` does (it gets the 0x04 key ID)."""
    if key.alg == ALG_COSIGNATURE_V1:
        return key
    from ledger.tlog.note import key_id

    return Verifier(
        key.name, key_id(key.name, bytes([ALG_COSIGNATURE_V1]) + key.public_key),
        ALG_COSIGNATURE_V1, key.public_key,
    )  # fmt: skip


def body_of(msg: str | bytes) -> CheckpointBody:
    """The checkpoint body of a note, unverified (to route it, e.g. by origin)."""
    text, _ = parse_note(msg)
    return parse_body(text)
