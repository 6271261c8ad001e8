"""Checkpoints in a replay (docs/replay.md, "Checkpoints"): the checkpoints the ledger
recorded, and one the auditor kept outside the database, each shown to be a prefix of
the current tree by an RFC 9162 consistency proof from its size to the head.

A checkpoint the auditor gives is read by :func:`parse_checkpoint` (the form
``aborist-ledger checkpoint --json`` prints); :func:`check_checkpoints` reports a
checkpoint larger than the ledger (history truncated) or without a consistency proof
(the first events rewritten) as a ``checkpoint`` divergence at its size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aborist.audit.findings import Divergence, ReplayReport, clip, clip_typed
from aborist.errors import InputError
from ledger.envelope_check import check_recorded_at
from ledger.errors import ProofError
from ledger.store import Checkpoint, Ledger
from ledger.tlog import merkle

__all__ = ["CHECKPOINT_FIELDS", "check_checkpoints", "parse_checkpoint"]


#: What ``aborist-ledger checkpoint --json`` prints (and a bundle's checkpoint holds); no
#: other field is read.
CHECKPOINT_FIELDS = frozenset({"tree_size", "root", "created_at"})


def parse_checkpoint(data: object) -> tuple[int, str]:
    """``(tree_size, root)`` from a checkpoint as ``aborist-ledger checkpoint --json``
    prints it; :class:`InputError` for anything else."""
    if not isinstance(data, Mapping):
        raise InputError("a checkpoint must be a JSON object with tree_size and root")
    unknown = sorted(map(str, set(data) - CHECKPOINT_FIELDS))
    if unknown:  # unsigned JSON: a "signature" in it was never checked, so it is refused
        raise InputError(
            f"checkpoint: unknown field(s) {clip(', '.join(unknown))} (it holds tree_size, "
            "root and created_at, as `checkpoint --json` prints)"
        )
    size, root = data.get("tree_size"), data.get("root")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InputError(
            f"checkpoint tree_size must be a positive integer, found {clip(repr(size))}"
        )
    if not isinstance(root, str) or len(root) != 64 or not _is_hex(root):
        raise InputError(f"checkpoint root must be 64 hex digits, found {clip(repr(root))}")
    at = data.get("created_at")
    if "created_at" in data and (type(at) is not str or check_recorded_at(at) is not None):
        # no check reads it, but a field carried unchecked would seem vouched for
        raise InputError(
            f"checkpoint created_at must be a timestamp as the ledger writes them, found "
            f"{clip(repr(at))}"
        )
    return size, root.lower()


def is_root_hex(value: object) -> bool:
    """Whether ``value`` is a root as the ledger records it: 64 lower-case hex digits."""
    return type(value) is str and len(value) == 64 and all(c in _LOWER_HEX for c in value)


_LOWER_HEX = frozenset("0123456789abcdef")


def _is_hex(s: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in s)


#: What became of one checkpoint in a replay (docs/replay.md, "Output"): held to the tree
#: of the hashes the chain check recomputed; held only by a consistency proof over the
#: stored hashes (past the events the chain re-hashed: a chain failure, or ``--since``);
#: rejected (a ``checkpoint`` divergence names it); or not checked at all (no tree to
#: hold it to: an event hash that is not hex).
CONFIRMED, UNREHASHED, REJECTED, UNCHECKED = "confirmed", "unrehashed", "rejected", "unchecked"


def check_checkpoints(
    ledger: Ledger, head_seq: int, checkpoint: tuple[int, str] | None, report: ReplayReport,
    verified: Mapping[int, str] | None = None, cps: Sequence[Checkpoint] | None = None,
    since: int = 0,
) -> None:  # fmt: skip
    """Each recorded checkpoint of ``ledger`` and ``checkpoint`` (``(tree_size, root)``,
    kept outside the database) against the tree of the events up to ``head_seq``.

    ``verified``: the roots the chain check folded, by size, from the hashes it
    recomputed (:attr:`ledger.chain.ChainReport.roots`). A checkpoint is held to those
    first: the hashes read again for the tree are the database's second answer, which an
    insider can make the original history's while the rows the chain read are a rewrite.

    ``cps``: the recorded checkpoints as read *before* ``head_seq`` was (read here when
    None): one recorded by a writer after the head was read is of later appends, and held
    to this head it would read as a truncation.

    ``since``: the chain re-hashed events after it only (``--since``), so the root it
    holds at a size up to ``since`` is of stored hashes alone: such a checkpoint is held
    only to the stored hashes, never confirmed.

    Every checkpoint gets one outcome (:data:`CONFIRMED`, :data:`UNREHASHED`,
    :data:`REJECTED`, :data:`UNCHECKED`), counted in the report; the file's is
    :attr:`ReplayReport.checkpoint_file`. A rejected one is never counted as checked."""
    cps = ledger.checkpoints() if cps is None else cps
    recorded = [(cp.tree_size, cp.root, "recorded checkpoint") for cp in cps]
    if checkpoint is not None:
        recorded.append((*checkpoint, "checkpoint file"))
    if not recorded:
        return
    verified = {k: v for k, v in (verified or {}).items() if k > since}
    first = [_verified_root(r, verified, report) for r in recorded]
    rest = [i for i, o in enumerate(first) if o is None]
    # sizes the chain did not verify to (past a failure or the head), or malformed
    held = iter(
        _check_roots(ledger, head_seq, [recorded[i] for i in rest], report,
                     verified.get(head_seq)) if rest else ()
    )  # fmt: skip
    outcomes = [o if o is not None else next(held) for o in first]
    for i, cp in enumerate(cps):  # when it was recorded, as the ledger writes it (the clock's form)
        why = check_recorded_at(cp.created_at)
        if why is not None:
            at = cp.tree_size if type(cp.tree_size) is int else None
            what = f"recorded checkpoint of size {clip(cp.tree_size)}"
            found = clip_typed(cp.created_at)
            why_at = f"{what}: created_at is not a timestamp the ledger writes"
            report.diverge(Divergence("checkpoint", at, None, None, why, found, why_at))
            outcomes[i] = REJECTED
    for o in outcomes:
        report.checkpoint_outcomes[o] = report.checkpoint_outcomes.get(o, 0) + 1
    if checkpoint is not None:
        report.checkpoint_file = outcomes[-1]


def _verified_root(
    cp: tuple[Any, Any, str], verified: Mapping[int, str], report: ReplayReport
) -> str | None:
    """``cp`` against the root the chain check folded at its size: :data:`CONFIRMED`
    (the tree of the events this replay verified is the one it committed to, and the
    head's tree extends it, being of the same events) or :data:`REJECTED` (one
    divergence). None when the chain did not verify that far, or the row is malformed:
    the caller checks those."""
    size, cp_root, what = cp
    mine = verified.get(size) if type(size) is int else None
    if mine is None or not is_root_hex(cp_root):
        return None
    if mine != cp_root:
        report.diverge(Divergence(
            "checkpoint", size, None, None, cp_root, mine,
            f"{what}: the events this replay verified (their hashes recomputed) give another "
            f"tree of size {size}; the history was rewritten"))  # fmt: skip
        return REJECTED
    return CONFIRMED


def _check_roots(
    ledger: Ledger, head_seq: int, recorded: list[tuple[Any, Any, str]], report: ReplayReport,
    verified_head: str | None = None,
) -> list[str]:  # fmt: skip
    """Each of ``recorded`` (size, root, what) against the tree of the events up to
    ``head_seq``: a consistency proof from its size must lead to the head's root; and the
    hashes read for it must give the head root the chain check verified, if it did.
    Returns each one's outcome, in order: a proof that holds holds it only to the stored
    hashes (:data:`UNREHASHED`), since the chain did not re-hash events that far."""
    try:
        hashes = ledger.event_hashes(head_seq)
    except ProofError as e:  # a hash that is not hex: no tree to hold any checkpoint against
        report.diverge(Divergence("checkpoint", None, None, None, "event hashes in hex",
                                  str(e), "no checkpoint can be checked"))  # fmt: skip
        return [UNCHECKED] * len(recorded)
    n = len(hashes)
    root = merkle.merkle_root(hashes) if n else b""
    if verified_head is not None and recorded and verified_head != root.hex():
        report.diverge(Divergence(
            "checkpoint", head_seq, None, None, verified_head, root.hex(),
            "the event hashes read for the tree are not the ones the chain check verified "
            "(the database answered two reads differently)"))  # fmt: skip
    return [_check_root(hashes, root, r, report) for r in recorded]


def _check_root(
    hashes: Sequence[bytes], root: bytes, cp: tuple[Any, Any, str], report: ReplayReport
) -> str:
    """One checkpoint (size, root, what) against the stored ``hashes`` (whose tree has
    ``root``): its outcome, and a divergence when it is :data:`REJECTED`."""
    size, cp_root, what = cp
    n = len(hashes)
    if type(size) is not int:  # a raw write's value (SQLite keeps any type)
        why = f"{what} of size {clip(size)}: the tree size is not an integer"
        want, found = "an integer size ≥ 1", clip_typed(size)
        report.diverge(Divergence("checkpoint", None, None, None, want, found, why))
        return REJECTED
    if not is_root_hex(cp_root):
        why = f"{what} of size {size}: the root is not 64 lower-case hex digits"
        want, found = "64 lower-case hex digits", clip_typed(cp_root)
        report.diverge(Divergence("checkpoint", size, None, None, want, found, why))
        return REJECTED
    if size < 1:
        why = f"{what} of size {size}: no tree has fewer than one leaf"
        report.diverge(Divergence("checkpoint", size, None, None, "size ≥ 1", str(size), why))
        return REJECTED
    if size > n:
        why = f"{what} of size {size}: history was truncated"
        want = f"at least {size} events"
        report.diverge(Divergence("checkpoint", size, None, None, want, f"{n} events", why))
        return REJECTED
    proof = merkle.consistency_proof(hashes, size, n)
    if not merkle.verify_consistency(size, n, proof, bytes.fromhex(cp_root), root):
        now = merkle.merkle_root(hashes[:size]).hex()
        report.diverge(Divergence(
            "checkpoint", size, None, None, cp_root, now,
            f"{what}: no consistency proof from size {size} to {n}; "
            "the first events were rewritten"))  # fmt: skip
        return REJECTED
    return UNREHASHED  # held against the stored hashes only: the chain did not recompute them
