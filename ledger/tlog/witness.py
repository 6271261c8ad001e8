"""A witness (c2sp.org/tlog-witness): it keeps the latest checkpoint it cosigned per log
origin, and cosigns a new one (c2sp.org/tlog-cosignature v1) only when a consistency proof
shows that it extends that one. A log that shows one witness a forked history is caught:
the witness refuses any second root for a size it has seen, and any tree that does not
contain the one it holds.

:meth:`Witness.add_checkpoint` takes the body of ``POST /add-checkpoint`` and returns the
HTTP status and body the spec names::

    200  one cosignature line per witness key
    400  malformed request, or old size above the checkpoint's size
    403  no valid signature by a key the witness trusts for that origin
    404  unknown origin
    409  old size is not the size the witness holds (the body is that size)
    422  a consistency proof that fails, a proof from size 0, a second root for one
         size, or a size-0 checkpoint whose root is not the empty tree's

The check and the update of the held checkpoint happen under one lock per origin (an
``flock`` on a file in the state directory), so two requests cannot roll the state back.
The log's side, :func:`request_cosignature`, retries once after a 409 with a proof from the
size the witness holds.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ledger.errors import (
    CheckpointError,
    InvalidSignatureError,
    MalformedNoteError,
    NoteError,
    UnverifiedNoteError,
)
from ledger.jsonsafe import parse_json
from ledger.tlog import merkle
from ledger.tlog.checkpoint_note import parse_body
from ledger.tlog.client_state import atomic_write
from ledger.tlog.note import (
    ALG_COSIGNATURE_V1,
    Signer,
    Verifier,
    open_note,
    parse_note,
    signature_line,
)

__all__ = [
    "SIZE_CONTENT_TYPE",
    "Witness",
    "WitnessReply",
    "add_cosignatures",
    "build_request",
    "request_cosignature",
]

SIZE_CONTENT_TYPE = "text/x.tlog.size"
MAX_PROOF_LINES = 63


@dataclass(frozen=True, slots=True)
class WitnessReply:
    status: int
    body: str
    content_type: str = "text/plain; charset=utf-8"


def _reply(status: int, why: str) -> WitnessReply:
    return WitnessReply(status, why.rstrip("\n") + "\n")


@dataclass(frozen=True, slots=True)
class _Request:
    old: int
    proof: list[bytes]
    note: str


def _parse_request(raw: bytes) -> _Request | WitnessReply:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _reply(400, "request is not UTF-8")
    head, sep, note = text.partition("\n\n")
    if not sep:
        return _reply(400, "request has no empty line before the checkpoint")
    lines = head.split("\n")
    old_line = lines[0]
    digits = old_line[4:]
    if (
        not old_line.startswith("old ")
        or not digits.isascii()
        or not digits.isdigit()
        or (len(digits) > 1 and digits[0] == "0")
    ):
        return _reply(400, "the first line must be 'old <size>'")
    if len(lines) - 1 > MAX_PROOF_LINES:
        return _reply(400, f"more than {MAX_PROOF_LINES} consistency proof lines")
    proof = []
    for line in lines[1:]:
        try:
            h = base64.b64decode(line.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            h = b""
        if len(h) != merkle.HASH_SIZE:
            return _reply(400, f"proof line {line[:60]!r} is not a base64 SHA-256 hash")
        proof.append(h)
    return _Request(int(digits), proof, note)


def build_request(old: int, proof: Sequence[bytes], note: str) -> bytes:
    """The body of ``POST /add-checkpoint``: ``old N``, the proof lines, a blank line, the
    checkpoint note."""
    lines = [f"old {old}", *(base64.b64encode(p).decode("ascii") for p in proof)]
    return ("\n".join(lines) + "\n\n" + note).encode("utf-8")


class Witness:
    """One witness: its cosigner key, the log keys it trusts per origin, its state dir."""

    def __init__(
        self,
        signer: Signer,
        logs: Mapping[str, Sequence[Verifier]],
        state_dir: Path,
        clock: Callable[[], int],
    ) -> None:
        if signer.alg != ALG_COSIGNATURE_V1:
            raise NoteError("a witness cosigns with a cosignature v1 (0x04) key")
        self.signer = signer
        self.logs = {origin: list(keys) for origin, keys in logs.items()}
        self.state_dir = state_dir
        self._clock = clock

    @staticmethod
    def origin_hash(origin: str) -> str:
        """Lowercase hex SHA-256 of the origin: the monitoring path's key, and the name
        of the origin's state file."""
        return hashlib.sha256(origin.encode("utf-8")).hexdigest()

    def _path(self, origin: str, suffix: str) -> Path:
        return self.state_dir / (self.origin_hash(origin) + suffix)

    @contextmanager
    def _locked(self, origin: str) -> Iterator[None]:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with open(self._path(origin, ".lock"), "a") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def held(self, origin: str) -> tuple[int, bytes, str] | None:
        """(size, root, cosigned note) last cosigned for ``origin``; None if never."""
        path = self._path(origin, ".json")
        try:
            data = parse_json(path.read_text(encoding="utf-8"), what="witness state")
            return int(data["size"]), base64.b64decode(data["root"]), str(data["note"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, binascii.Error) as e:
            raise NoteError(f"witness state {path} is unreadable: {e}") from e

    def add_checkpoint(self, raw: bytes) -> WitnessReply:
        parsed = _parse_request(raw)
        if isinstance(parsed, WitnessReply):
            return parsed
        try:
            text, _ = parse_note(parsed.note)
            body = parse_body(text)
        except (MalformedNoteError, CheckpointError) as e:
            return _reply(400, str(e))
        keys = self.logs.get(body.origin)
        if keys is None:
            return _reply(404, f"unknown log origin {body.origin!r}")
        try:
            open_note(parsed.note, keys)
        except (UnverifiedNoteError, InvalidSignatureError) as e:
            return _reply(403, str(e))
        except NoteError as e:
            return _reply(400, str(e))
        if parsed.old > body.size:
            return _reply(400, f"old size {parsed.old} is above the checkpoint's {body.size}")
        if len(body.root) != merkle.HASH_SIZE:
            return _reply(422, "the checkpoint root is not a SHA-256 hash")
        if body.size == 0 and body.root != merkle.EMPTY_ROOT:
            return _reply(422, "a checkpoint of size 0 must have the empty tree's root")
        with self._locked(body.origin):
            try:
                held = self.held(body.origin)
            except NoteError as e:
                return _reply(500, str(e))
            size, root = (held[0], held[1]) if held else (0, merkle.EMPTY_ROOT)
            if parsed.old != size:
                return WitnessReply(409, f"{size}\n", SIZE_CONTENT_TYPE)
            if parsed.old == 0:
                if parsed.proof:
                    return _reply(422, "a consistency proof from size 0 must be empty")
            elif parsed.old == body.size:
                if body.root != root:
                    return _reply(422, f"another root for size {body.size}: a fork")
                if parsed.proof:
                    return _reply(422, "a consistency proof between equal sizes must be empty")
            elif not merkle.verify_consistency(
                parsed.old, body.size, parsed.proof, root, body.root
            ):
                return _reply(422, f"the consistency proof {parsed.old}->{body.size} fails")
            line = signature_line(self.signer, text, timestamp=self._clock())
            state = {
                "origin": body.origin,
                "size": body.size,
                "root": base64.b64encode(body.root).decode("ascii"),
                "note": parsed.note + line,
            }
            try:
                atomic_write(self._path(body.origin, ".json"), json.dumps(state, indent=1) + "\n")
            except NoteError as e:
                return _reply(500, str(e))
        return WitnessReply(200, line)


Send = Callable[[bytes], tuple[int, str]]
"""Posts an add-checkpoint body to one witness; returns (status, response body)."""


def request_cosignature(
    note: str, prove: Callable[[int, int], Sequence[bytes]], send: Send, *, old: int = 0
) -> str:
    """The witness's cosignature line(s) for ``note``, from the log's side.

    Starts from ``old`` (0 when the log does not know what the witness holds); on a 409
    retries once from the size the witness names, with ``prove(old, size)``."""
    body = parse_body(parse_note(note)[0])
    for _attempt in range(2):
        proof = [] if old in (0, body.size) else list(prove(old, body.size))
        status, reply = send(build_request(old, proof, note))
        if status == 200:
            return reply
        if status == 409 and reply.strip().isdigit():
            old = int(reply.strip())
            if old > body.size:
                raise CheckpointError(
                    f"the witness holds size {old}, larger than this checkpoint's {body.size}"
                )
            continue
        raise CheckpointError(f"witness refused the checkpoint: {status} {reply.strip()}")
    raise CheckpointError("witness kept answering 409 Conflict")


def add_cosignatures(note: str, replies: Sequence[str]) -> str:
    """``note`` with the signature lines of witness ``replies`` appended (duplicates
    dropped). The lines are not verified here: verifying is the reader's job, with the
    witness keys it trusts."""
    text, sigs = parse_note(note)
    have = {s.line() for s in sigs}
    extra: list[str] = []
    for reply in replies:
        _, lines = parse_note(text + "\n" + reply)
        extra += [s.line() for s in lines if s.line() not in have and s.line() not in extra]
    return note + "".join(extra)
