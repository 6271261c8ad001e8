"""The server's transparency-log side (docs/serve.md, "Checkpoints and the witness"):

* ``GET /api/v1/checkpoint``: the latest recorded checkpoint, and, when a log key is
  configured, that checkpoint as a C2SP signed note (docs/ledger-format.md, "Signed
  checkpoints"); without one it says plainly that the checkpoint is unsigned;
* ``GET /api/v1/checkpoint/note``: the note alone, as ``text/plain`` (what a C2SP client
  fetches);
* a witness (c2sp.org/tlog-witness, :mod:`ledger.tlog.witness_http`) mounted at ``/witness``
  when a witness key and state directory are configured.

Keys are read from their files once, when the server starts (a bad one stops it there,
in one line). The private keys stay in memory (their ``repr`` never shows the seed) and
are never served, logged or recorded. Before signing, the recorded checkpoint's root is
checked against the tree of its size (O(log n) tile reads): the server signs only a
checkpoint its ledger gives, not whatever the ``checkpoints`` table says.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

from aborist.errors import AboristError
from aborist.server.config import LOG_KEY_ENV
from aborist.server.errors import ApiError
from aborist.server.state import AppState
from ledger.errors import NoteError, ProofError
from ledger.store import Checkpoint
from ledger.tlog.checkpoint_note import CheckpointBody, sign_checkpoint
from ledger.tlog.note import (
    ALG_COSIGNATURE_V1,
    ALG_ED25519,
    Signer,
    Verifier,
    parse_verifier_key,
    read_signer_file,
)
from ledger.tlog.witness import Witness

__all__ = [
    "UNSIGNED",
    "CheckpointView",
    "KeySetupError",
    "LogSigning",
    "checkpoint_html",
    "log_signing",
    "router",
    "witness_of",
]

UNSIGNED = (
    "unsigned: no log signing key is configured (aborist serve --log-key KEYFILE, or "
    f"{LOG_KEY_ENV}); this checkpoint is the database's own word"
)


class KeySetupError(AboristError):
    """A key file the server was configured with cannot be used (one line, no key)."""


@dataclass(frozen=True)
class LogSigning:
    """The log's signing key and the origin its checkpoints carry (the key's name)."""

    signer: Signer
    origin: str


def log_signing(key_file: Path, origin: str | None) -> LogSigning:
    """The log key in ``key_file``; ``origin`` (``ABORIST_LOG_ORIGIN``), when set, must
    be the key's name, as for ``aborist-ledger checkpoint --sign``."""
    try:
        signer = read_signer_file(key_file)
    except NoteError as e:
        raise KeySetupError(f"--log-key: {e}") from None
    if signer.alg != ALG_ED25519:
        raise KeySetupError(f"--log-key: {key_file} is a witness key; a log signs with Ed25519")
    if origin and origin != signer.name:
        raise KeySetupError(
            f"--log-key: {key_file} is the key of {signer.name!r}, but ABORIST_LOG_ORIGIN "
            f"is {origin!r}"
        )
    return LogSigning(signer, signer.name)


def _log_keys(paths: Sequence[str]) -> dict[str, list[Verifier]]:
    by_origin: dict[str, list[Verifier]] = {}
    for p in paths:
        try:
            text = Path(p).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise KeySetupError(f"--witness-log: cannot read {p}: {e}") from None
        for line in filter(None, (x.strip() for x in text.splitlines())):
            try:
                key = parse_verifier_key(line)
            except NoteError as e:
                raise KeySetupError(f"--witness-log: {p}: {e}") from None
            if key.alg != ALG_ED25519:
                raise KeySetupError(f"--witness-log: {p}: a log key is Ed25519 (type 0x01)")
            by_origin.setdefault(key.name, []).append(key)
    return by_origin


def witness_of(key_file: Path, log_keys: Sequence[str], state_dir: Path) -> Witness:
    """The witness: its cosigner key, the logs it cosigns for (their verifier keys, one
    or more per file), and where it keeps the latest checkpoint of each."""
    try:
        signer = read_signer_file(key_file, alg=ALG_COSIGNATURE_V1)
    except NoteError as e:
        raise KeySetupError(f"--witness-key: {e}") from None
    logs = _log_keys(log_keys)
    if not logs:
        raise KeySetupError("a witness needs the verifier key of a log: --witness-log VKEYFILE")
    if state_dir.exists() and not state_dir.is_dir():
        raise KeySetupError(f"--witness-state-dir: {state_dir} is not a directory")
    return Witness(signer, logs, state_dir, clock=lambda: int(time.time()))


class CheckpointView(BaseModel):
    """The latest checkpoint: what the ``checkpoints`` table holds and, when the server
    has a log key, the signed note of it (``signed``); ``unsigned_reason`` says why not."""

    tree_size: int
    root: str
    created_at: str
    signed: bool
    origin: str | None
    signed_by: str | None
    note: str | None
    unsigned_reason: str | None


def _sign(state: AppState, cp: Checkpoint, signing: LogSigning) -> str:
    from ledger.tlog.proofs import root_at

    try:
        root = root_at(state.ledger, cp.tree_size)
    except ProofError as e:
        raise ApiError(409, f"not signing the checkpoint of size {cp.tree_size}: {e}") from e
    if root.hex() != cp.root:
        raise ApiError(
            409,
            f"not signing the checkpoint of size {cp.tree_size}: it records root {cp.root}, "
            f"but the ledger's tree of that size has root {root.hex()}",
        )
    body = CheckpointBody(signing.origin, cp.tree_size, root)
    return sign_checkpoint(body, signing.signer)


def checkpoint_view(state: AppState) -> dict[str, Any] | None:
    """The latest checkpoint as :class:`CheckpointView` holds it; None if none."""
    checkpoints = state.ledger.checkpoints()
    if not checkpoints:
        return None
    cp = checkpoints[-1]
    signing = state.config.log_signing
    out: dict[str, Any] = {**cp.to_dict(), "signed": False, "origin": None, "signed_by": None,
                           "note": None, "unsigned_reason": UNSIGNED}  # fmt: skip
    if signing is not None:
        s = signing.signer
        out.update(signed=True, origin=signing.origin, signed_by=f"{s.name}+{s.key_id:08x}",
                   note=_sign(state, cp, signing), unsigned_reason=None)  # fmt: skip
    return out


router = APIRouter(prefix="/api/v1")


def _state(request: Request) -> AppState:
    state: AppState = request.app.state.aborist
    return state


def _latest(request: Request) -> dict[str, Any]:
    view = checkpoint_view(_state(request))
    if view is None:
        raise ApiError(404, "no checkpoint recorded yet; run `aborist-ledger checkpoint`")
    return view


@router.get(
    "/checkpoint",
    summary="The latest recorded checkpoint; a signed note when a log key is configured",
    response_model=CheckpointView,
)
def get_checkpoint(request: Request) -> dict[str, Any]:
    return _latest(request)


@router.get(
    "/checkpoint/note",
    summary="The latest checkpoint as a C2SP signed note (text/plain)",
    response_class=PlainTextResponse,
)
def get_checkpoint_note(request: Request) -> PlainTextResponse:
    view = _latest(request)
    if view["note"] is None:
        raise ApiError(404, UNSIGNED)
    return PlainTextResponse(view["note"])


def checkpoint_html(state: AppState) -> str:
    """The ledger page's "Latest checkpoint": the note when signed, and plainly
    "unsigned" when not."""
    try:
        view = checkpoint_view(state)
    except ApiError as e:
        return f'<p id="checkpoint" class="bad">{escape(e.detail)}</p>'
    if view is None:
        return ('<p id="checkpoint">No checkpoint recorded yet; run '
                "<code>aborist-ledger checkpoint</code>.</p>")  # fmt: skip
    facts = (f"tree size <b>{view['tree_size']}</b>, root <code>{escape(view['root'])}</code>, "
             f"recorded {escape(view['created_at'])}")  # fmt: skip
    if not view["signed"]:
        return (f'<p id="checkpoint">{facts}</p><p id="checkpoint-signed" class="meta">'
                f"{escape(UNSIGNED)}.</p>")  # fmt: skip
    return (
        f'<p id="checkpoint">{facts}</p><p id="checkpoint-signed" class="ok">signed by '
        f"<code>{escape(view['signed_by'])}</code> (origin <code>{escape(view['origin'])}"
        f'</code>); the note (<a href="/api/v1/checkpoint/note">text</a>):</p>'
        f'<pre id="checkpoint-note">{escape(view["note"])}</pre>'
    )
