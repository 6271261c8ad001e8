"""Signed notes (c2sp.org/signed-note), their keys, and Ed25519 cosignatures v1
(c2sp.org/tlog-cosignature).

A note is UTF-8 text ending in a newline, a blank line, then one or more signature lines
``— <key name> <base64(key ID ‖ signature)>``. A key is named by the pair (name, key ID),
where the key ID is ``SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4]``. Two signature types
are implemented, and only these:

* ``0x01`` Ed25519 over the note text (RFC 8032): the log's checkpoint signature;
* ``0x04`` timestamped Ed25519 cosignature v1: ``u64 timestamp ‖ Ed25519 signature`` over
  ``"cosignature/v1\\ntime <timestamp>\\n" ‖ note text``: a witness's statement.

Key encodings are Go's (golang.org/x/mod/sumdb/note), so keys move between this and any
Go transparency tool: the verifier key ``<name>+<hex key ID>+<base64(type ‖ public key)>``
and the signer key ``PRIVATE+KEY+<name>+<hex key ID>+<base64(type ‖ 32-byte seed)>``.

:func:`open_note` follows the signed-note rules exactly: signatures from unknown keys are
ignored (kept as ``unverified``), a known key's failing signature rejects the whole note,
and a note with no verified signature is rejected. Parsing and verifying are pure: no
clock, no I/O; a cosigner is given its timestamp.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import struct
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ledger.errors import (
    InvalidSignatureError,
    KeyFormatError,
    MalformedNoteError,
    NoteError,
    UnverifiedNoteError,
)
from ledger.jsonsafe import read_bounded

__all__ = [
    "ALG_COSIGNATURE_V1",
    "ALG_ED25519",
    "MAX_SIGNATURES",
    "Note",
    "Signature",
    "Signer",
    "Verifier",
    "generate_signer",
    "key_id",
    "open_note",
    "parse_note",
    "parse_signer_key",
    "parse_verifier_key",
    "read_signer_file",
    "sign_note",
]

ALG_ED25519 = 0x01
ALG_COSIGNATURE_V1 = 0x04
SIG_PREFIX = "— "
MAX_SIGNATURES = 100
"""Signature lines parsed at most (the spec asks for at least 16; Go's limit is 100)."""
#: A signer key file's largest size (a key is one line of about 100 characters): a pipe
#: or a device (``--sign /dev/zero``) was read whole, until a MemoryError traceback.
MAX_KEY_FILE_BYTES = 64 * 1024
MAX_TIMESTAMP = (1 << 63) - 1
COSIGNATURE_HEADER = "cosignature/v1\n"


def _is_space(ch: str) -> bool:
    # Go's unicode.IsSpace: the Unicode White_Space characters.
    return ch.isspace() or ch in "\x85\xa0" or unicodedata.category(ch) == "Zs"


def valid_key_name(name: str) -> bool:
    """Non-empty, no Unicode spaces and no ``+`` (c2sp.org/signed-note, "Format")."""
    return bool(name) and "+" not in name and not any(_is_space(c) for c in name)


def key_id(name: str, typed_key: bytes) -> int:
    """``SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4]`` as a big-endian uint32."""
    digest = hashlib.sha256(name.encode("utf-8") + b"\n" + typed_key).digest()
    return int.from_bytes(digest[:4], "big")


def _b64decode(text: str) -> bytes | None:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _parse_hex_id(hex_id: str) -> int | None:
    if len(hex_id) != 8 or any(c not in "0123456789abcdefABCDEF" for c in hex_id):
        return None
    return int(hex_id, 16)


def cosignature_message(timestamp: int, text: str) -> bytes:
    """What a cosignature v1 signs: the header and time lines, then the whole note text."""
    return f"{COSIGNATURE_HEADER}time {timestamp}\n".encode() + text.encode("utf-8")


@dataclass(frozen=True, slots=True)
class Verifier:
    """A public key that checks one kind of signature line: (name, key ID, type)."""

    name: str
    key_id: int
    alg: int
    public_key: bytes

    def vkey(self) -> str:
        typed = bytes([self.alg]) + self.public_key
        return f"{self.name}+{self.key_id:08x}+{_b64(typed)}"

    def verify(self, text: str, sig: bytes) -> bool:
        """Does ``sig`` (the bytes after the key ID) sign ``text``? Never raises."""
        if self.alg == ALG_ED25519:
            message, raw = text.encode("utf-8"), sig
        else:
            if len(sig) != 8 + 64 or text.count("\n") < 3:
                return False
            timestamp = struct.unpack(">Q", sig[:8])[0]
            if timestamp > MAX_TIMESTAMP:
                return False
            message, raw = cosignature_message(timestamp, text), sig[8:]
        if len(raw) != 64:
            return False
        try:
            Ed25519PublicKey.from_public_bytes(self.public_key).verify(raw, message)
        except (InvalidSignature, ValueError):
            return False
        return True


@dataclass(frozen=True, slots=True)
class Signer:
    """A private key: Ed25519 note signatures (0x01) or cosignatures v1 (0x04)."""

    name: str
    key_id: int
    alg: int
    seed: bytes = field(repr=False)

    def _key(self) -> Ed25519PrivateKey:
        return Ed25519PrivateKey.from_private_bytes(self.seed)

    def verifier(self) -> Verifier:
        public = self._key().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        return Verifier(self.name, self.key_id, self.alg, public)

    def skey(self) -> str:
        typed = bytes([self.alg]) + self.seed
        return f"PRIVATE+KEY+{self.name}+{self.key_id:08x}+{_b64(typed)}"

    def sign(self, text: str, *, timestamp: int | None = None) -> bytes:
        """The signature bytes (without the key ID) over ``text``; a cosigner needs the
        ``timestamp`` (POSIX seconds) it states."""
        if self.alg == ALG_ED25519:
            return self._key().sign(text.encode("utf-8"))
        if timestamp is None or not 0 < timestamp <= MAX_TIMESTAMP:
            raise KeyFormatError("a cosignature needs a timestamp within 1..2^63-1")
        if text.count("\n") < 3:
            raise MalformedNoteError("a cosigned note must be a checkpoint of three lines or more")
        raw = self._key().sign(cosignature_message(timestamp, text))
        return struct.pack(">Q", timestamp) + raw

    def __repr__(self) -> str:  # never print the seed
        return f"Signer({self.name!r}, {self.key_id:08x}, alg={self.alg})"


def _split_key(text: str, parts: int, what: str) -> list[str]:
    fields = text.split("+", parts - 1)
    if len(fields) != parts:
        raise KeyFormatError(f"{what} must have {parts} '+'-separated fields")
    return fields


def read_signer_file(path: str | os.PathLike[str], *, alg: int | None = None) -> Signer:
    """The signer key in the file at ``path`` (:func:`parse_signer_key`). Every failure
    is one :class:`KeyFormatError` line naming the file, never the key."""
    try:
        with open(path, "rb") as f:
            raw = read_bounded(f, MAX_KEY_FILE_BYTES)
        if raw is None:
            raise KeyFormatError(
                f"{os.fspath(path)} is not a key file: larger than {MAX_KEY_FILE_BYTES:,} bytes"
            )
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise KeyFormatError(f"no key file {os.fspath(path)}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise KeyFormatError(f"cannot read key file {os.fspath(path)}: {e}") from None
    try:
        return parse_signer_key(text, alg=alg)
    except NoteError as e:
        raise KeyFormatError(f"{os.fspath(path)}: {e}") from None


def parse_verifier_key(vkey: str) -> Verifier:
    """``<name>+<hex key ID>+<base64(type ‖ key)>``; Ed25519 (0x01) or cosignature v1 (0x04).

    Refuses a key whose ID is not the one its name, type and key give, an unknown type, or
    a key of the wrong length (the checks of Go's ``note.NewVerifier``)."""
    vkey = vkey.strip()
    name, hex_id, b64 = _split_key(vkey, 3, "a verifier key <name>+<key ID>+<key>")
    wanted = _parse_hex_id(hex_id)
    typed = _b64decode(b64)
    if not valid_key_name(name) or wanted is None or not typed:
        raise KeyFormatError(f"malformed verifier key {_shown(vkey)}")
    if key_id(name, typed) != wanted:
        raise KeyFormatError(
            f"verifier key {name}: key ID {hex_id} does not match its key "
            f"(expected {key_id(name, typed):08x})"
        )
    alg, key = typed[0], typed[1:]
    if alg not in (ALG_ED25519, ALG_COSIGNATURE_V1):
        raise KeyFormatError(f"verifier key {name}: unknown signature type 0x{alg:02x}")
    if len(key) != 32:
        raise KeyFormatError(f"verifier key {name}: Ed25519 key of {len(key)} bytes, not 32")
    return Verifier(name, wanted, alg, key)


def parse_signer_key(skey: str, *, alg: int | None = None) -> Signer:
    """``PRIVATE+KEY+<name>+<hex key ID>+<base64(type ‖ seed)>`` (Go's signer key form).

    ``alg`` re-types the key: an Ed25519 note key used as a cosigner (0x04) gets the
    cosignature key ID, as transparency-dev's ``NewSignerForCosignatureV1`` does."""
    skey = skey.strip()
    fields = _split_key(skey, 5, "a signer key PRIVATE+KEY+<name>+<key ID>+<key>")
    if fields[0] != "PRIVATE" or fields[1] != "KEY":
        raise KeyFormatError("a signer key must start with PRIVATE+KEY+")
    name, hex_id, b64 = fields[2], fields[3], fields[4]
    stated = _parse_hex_id(hex_id)
    typed = _b64decode(b64)
    if not valid_key_name(name) or stated is None or not typed:
        raise KeyFormatError("malformed signer key (its contents are not shown)")
    own_alg, seed = typed[0], typed[1:]
    if own_alg not in (ALG_ED25519, ALG_COSIGNATURE_V1):
        raise KeyFormatError(f"signer key {name}: unknown signature type 0x{own_alg:02x}")
    if len(seed) != 32:
        raise KeyFormatError(f"signer key {name}: Ed25519 seed of {len(seed)} bytes, not 32")
    key = Ed25519PrivateKey.from_private_bytes(seed)
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    if key_id(name, bytes([own_alg]) + public) != stated:
        raise KeyFormatError(f"signer key {name}: key ID {hex_id} does not match its key")
    use = own_alg if alg is None else alg
    return Signer(name, key_id(name, bytes([use]) + public), use, seed)


def generate_signer(name: str, *, alg: int = ALG_ED25519, seed: bytes | None = None) -> Signer:
    """A new key named ``name`` (fresh randomness unless ``seed`` is given)."""
    if not valid_key_name(name):
        raise KeyFormatError(f"key name {name!r} must be non-empty, without spaces or '+'")
    if alg not in (ALG_ED25519, ALG_COSIGNATURE_V1):
        raise KeyFormatError(f"unknown signature type 0x{alg:02x}")
    seed = os.urandom(32) if seed is None else seed
    key = Ed25519PrivateKey.from_private_bytes(seed)
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return Signer(name, key_id(name, bytes([alg]) + public), alg, seed)


@dataclass(frozen=True, slots=True)
class Signature:
    """One signature line: key name, key ID and the base64 of ``key ID ‖ signature``."""

    name: str
    key_id: int
    b64: str

    def line(self) -> str:
        return f"{SIG_PREFIX}{self.name} {self.b64}\n"

    def raw(self) -> bytes:
        data = _b64decode(self.b64)
        assert data is not None  # checked when parsed or made
        return data[4:]

    def timestamp(self) -> int | None:
        """The cosignature v1 timestamp, if the signature has that shape."""
        raw = self.raw()
        return struct.unpack(">Q", raw[:8])[0] if len(raw) == 72 else None


@dataclass(frozen=True, slots=True)
class Note:
    """An opened note: its text, and the signatures verified and not (unknown keys)."""

    text: str
    sigs: tuple[Signature, ...]
    unverified: tuple[Signature, ...] = ()

    def signed_by(self, name: str) -> bool:
        return any(s.name == name for s in self.sigs)


def _shown(text: str, width: int = 60) -> str:
    clean = "".join(c if c.isprintable() else "?" for c in text)
    return repr(clean if len(clean) <= width else clean[: width - 1] + "…")


def _check_characters(msg: str) -> None:
    for i, ch in enumerate(msg):
        if (ch < " " and ch != "\n") or "\ud800" <= ch <= "\udfff":
            raise MalformedNoteError(
                f"malformed note: control character U+{ord(ch):04X} at offset {i}"
            )


def parse_note(msg: str | bytes) -> tuple[str, list[Signature]]:
    """Split ``msg`` into its text and signature lines, checking the grammar only.

    The text ends at the last blank line; every line after it must be a signature line
    ending in a newline. Raises :class:`MalformedNoteError`."""
    if isinstance(msg, bytes):
        try:
            msg = msg.decode("utf-8")
        except UnicodeDecodeError as e:
            raise MalformedNoteError(f"malformed note: not UTF-8 at byte {e.start}") from e
    _check_characters(msg)
    split = msg.rfind("\n\n")
    if split < 0:
        raise MalformedNoteError("malformed note: no blank line before the signatures")
    text, block = msg[: split + 1], msg[split + 2 :]
    if not block or not block.endswith("\n"):
        raise MalformedNoteError("malformed note: no signature lines ending in a newline")
    sigs: list[Signature] = []
    for n, line in enumerate(block[:-1].split("\n"), start=1):
        if n > MAX_SIGNATURES:
            raise MalformedNoteError(f"malformed note: more than {MAX_SIGNATURES} signatures")
        if not line.startswith(SIG_PREFIX):
            raise MalformedNoteError(f"malformed note: not a signature line: {_shown(line)}")
        name, _, b64 = line[len(SIG_PREFIX) :].partition(" ")
        data = _b64decode(b64) if b64 else None
        if not valid_key_name(name) or data is None or len(data) < 5:
            raise MalformedNoteError(f"malformed note: bad signature line {_shown(line)}")
        sigs.append(Signature(name, int.from_bytes(data[:4], "big"), b64))
    return text, sigs


def _find(verifiers: Sequence[Verifier], name: str, kid: int) -> Verifier | None:
    found = [v for v in verifiers if v.name == name and v.key_id == kid]
    if len(found) > 1 and len(set(found)) > 1:
        raise KeyFormatError(f"two different verifier keys are named {name}+{kid:08x}")
    return found[0] if found else None


def open_note(msg: str | bytes, verifiers: Iterable[Verifier]) -> Note:
    """Parse ``msg`` and verify every signature from a known key (name and key ID).

    Unknown keys' signatures are kept as ``unverified`` (repeats dropped); a known key's
    signature that fails raises :class:`InvalidSignatureError`; no verified signature at
    all raises :class:`UnverifiedNoteError` (c2sp.org/signed-note, "Signatures")."""
    known = list(verifiers)
    text, lines = parse_note(msg)
    verified: list[Signature] = []
    unverified: list[Signature] = []
    seen: set[tuple[str, int]] = set()
    for sig in lines:
        v = _find(known, sig.name, sig.key_id)
        if v is None:
            if sig not in unverified:
                unverified.append(sig)
            continue
        if (sig.name, sig.key_id) in seen:
            continue
        seen.add((sig.name, sig.key_id))
        if not v.verify(text, sig.raw()):
            raise InvalidSignatureError(f"signature by {sig.name}+{sig.key_id:08x} does not verify")
        verified.append(sig)
    if not verified:
        names = ", ".join(f"{s.name}+{s.key_id:08x}" for s in unverified) or "none"
        expected = ", ".join(f"{v.name}+{v.key_id:08x}" for v in known) or "none given"
        raise UnverifiedNoteError(
            f"no signature from a known key (signed by: {names}; known keys: {expected})"
        )
    return Note(text, tuple(verified), tuple(unverified))


def check_text(text: str) -> None:
    """A note text: UTF-8, no control characters but newlines, ending in a newline."""
    _check_characters(text)
    if not text.endswith("\n"):
        raise MalformedNoteError("a note text must end with a newline")


def sign_note(
    text: str,
    signers: Sequence[Signer],
    *,
    timestamp: int | None = None,
    keep: Sequence[Signature] = (),
) -> str:
    """``text``, a blank line, one signature line per signer, then the ``keep`` lines.

    Ed25519 is deterministic, so the same text and key always give the same note."""
    check_text(text)
    have: set[tuple[str, int]] = set()
    lines = []
    for s in signers:
        if (s.name, s.key_id) in have:
            raise KeyFormatError(f"signer {s.name}+{s.key_id:08x} given twice")
        have.add((s.name, s.key_id))
        raw = s.sign(text, timestamp=timestamp)
        lines.append(Signature(s.name, s.key_id, _b64(struct.pack(">I", s.key_id) + raw)))
    lines += [k for k in keep if (k.name, k.key_id) not in have]
    if not lines:
        raise KeyFormatError("a note needs at least one signature")
    if len(lines) > MAX_SIGNATURES:
        raise MalformedNoteError(f"a note carries at most {MAX_SIGNATURES} signatures")
    return text + "\n" + "".join(s.line() for s in lines)


def signature_line(signer: Signer, text: str, *, timestamp: int | None = None) -> str:
    """One signature line by ``signer`` over ``text`` (a witness's add-checkpoint reply)."""
    check_text(text)
    raw = signer.sign(text, timestamp=timestamp)
    return Signature(
        signer.name, signer.key_id, _b64(struct.pack(">I", signer.key_id) + raw)
    ).line()
