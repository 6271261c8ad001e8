"""A client's verified state: the largest checkpoint it has verified, per origin.

An auditor who keeps this file cannot be shown a rewritten history later, nor a smaller
tree: every new checkpoint meets the three-way rule against the one held,

* larger size: a consistency proof from the held checkpoint to the new one must hold;
* same size: the roots must be the same (two roots of one size are a fork);
* smaller size: refused (the log, or whoever serves it, is rolling back),

and the file is replaced atomically (write, fsync, rename) only after everything a command
checked has held. The format (docs/replay.md, "The state file") is one JSON object::

    {"format": "aborist.tlog-state.v1",
     "origins": {"<origin>": {"size": N, "root": "<base64>", "note": "<signed note>"}}}
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger import jsonsafe
from ledger.errors import CheckpointError, NoteError
from ledger.jsonsafe import parse_json
from ledger.tlog import merkle
from ledger.tlog.checkpoint_note import CheckpointBody, SignedCheckpoint

__all__ = ["STATE_FORMAT", "ClientState", "Held", "StateFileError", "check_advance"]

STATE_FORMAT = "aborist.tlog-state.v1"

ConsistencyProver = Callable[[int, int], Sequence[bytes] | None]
"""``(size1, size2) -> proof`` (None when the prover has no proof between those sizes)."""


class StateFileError(NoteError):
    """The state file cannot be read, is not a state file, or cannot be written."""


@dataclass(frozen=True, slots=True)
class Held:
    """The checkpoint held for one origin."""

    origin: str
    size: int
    root: bytes
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "root": base64.b64encode(self.root).decode("ascii"),
            "note": self.note,
        }


def check_advance(held: Held | None, new: CheckpointBody, prove: ConsistencyProver) -> str:
    """The three-way rule; returns what happened (``new``, ``same``, ``extended``) or raises
    :class:`CheckpointError` naming what failed. Pure apart from ``prove``."""
    if held is None:
        return "new"
    if new.size < held.size:
        raise CheckpointError(
            f"checkpoint of size {new.size} is older than the verified state's size "
            f"{held.size} for {held.origin!r}: refusing to roll back"
        )
    if new.size == held.size:
        if new.root != held.root:
            raise CheckpointError(
                f"fork: checkpoint of size {new.size} has root {new.root.hex()}, the verified "
                f"state holds {held.root.hex()} at that size"
            )
        return "same"
    if held.size == 0:
        return "extended"  # the empty tree is a prefix of every tree
    proof = prove(held.size, new.size)
    if proof is None:
        raise CheckpointError(
            f"no consistency proof from the verified state's size {held.size} to {new.size}"
        )
    if not merkle.verify_consistency(held.size, new.size, list(proof), held.root, new.root):
        raise CheckpointError(
            f"checkpoint of size {new.size} does not extend the verified state's size "
            f"{held.size} (the consistency proof fails: history was rewritten)"
        )
    return "extended"


class ClientState:
    """The state file at ``path`` (absent means empty); :meth:`save` is atomic."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.held: dict[str, Held] = {}
        self._load()

    def _load(self) -> None:
        limit = jsonsafe.MAX_FILE_BYTES
        try:
            with self.path.open("rb") as f:
                raw = jsonsafe.read_bounded(f, limit)
        except FileNotFoundError:
            return
        except OSError as e:
            raise StateFileError(f"cannot read state file {self.path}: {e.strerror}") from e
        if raw is None:
            raise StateFileError(f"state file {self.path} is larger than {limit:,} bytes")
        try:
            data = parse_json(raw.decode("utf-8"), what="state file")
        except (UnicodeDecodeError, ValueError) as e:
            raise StateFileError(f"state file {self.path} is not JSON ({e})") from e
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
            raise StateFileError(f"state file {self.path} is not a {STATE_FORMAT} file")
        origins = data.get("origins")
        if not isinstance(origins, dict):
            raise StateFileError(f"state file {self.path}: 'origins' must be an object")
        for origin, entry in origins.items():
            self.held[origin] = _held(self.path, origin, entry)

    def get(self, origin: str) -> Held | None:
        return self.held.get(origin)

    def advance(self, cp: SignedCheckpoint, prove: ConsistencyProver) -> str:
        """Apply the three-way rule to ``cp`` and hold it in memory (call :meth:`save`)."""
        body = cp.body
        outcome = check_advance(self.held.get(body.origin), body, prove)
        if outcome != "same":
            self.held[body.origin] = Held(body.origin, body.size, body.root, cp.text)
        return outcome

    def save(self) -> None:
        doc = {
            "format": STATE_FORMAT,
            "origins": {o: h.to_dict() for o, h in sorted(self.held.items())},
        }
        atomic_write(self.path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def _held(path: Path, origin: str, entry: object) -> Held:
    where = f"state file {path}, origin {origin!r}"
    if not isinstance(entry, dict):
        raise StateFileError(f"{where}: not an object")
    size, root, note = entry.get("size"), entry.get("root"), entry.get("note")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise StateFileError(f"{where}: size must be a non-negative integer")
    try:
        root_bytes = base64.b64decode(str(root).encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        root_bytes = b""
    if not isinstance(root, str) or len(root_bytes) != merkle.HASH_SIZE:
        raise StateFileError(f"{where}: root must be a base64 SHA-256 hash")
    if not isinstance(note, str):
        raise StateFileError(f"{where}: note must be the signed checkpoint text")
    return Held(origin, size, root_bytes, note)


def atomic_write(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``text`` all at once: a temporary file beside it, fsync,
    rename. A crash leaves the old file or the new one, never half of either."""
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as e:
        raise StateFileError(f"cannot write {path}: {e.strerror}") from e
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise StateFileError(f"cannot write {path}: {e.strerror}") from e
