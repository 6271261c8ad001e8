"""Checkpoints and proofs over the ledger's event hashes (RFC 9162 §2.1).

The Merkle tree's entries are the raw 32-byte event hashes in ``seq`` order, so a
checkpoint ``(tree_size, root)`` commits to the first ``tree_size`` events, and a
consistency proof between two checkpoints shows the later one extends the earlier one:
history was only appended to.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from ledger.errors import ProofError
from ledger.store import Checkpoint, Ledger
from ledger.tlog import merkle
from ledger.tlog.tiles import integrated, open_tree

__all__ = [
    "ConsistencyProof",
    "InclusionProof",
    "checkpoint",
    "consistency_path",
    "inclusion_path",
    "prove_consistency",
    "prove_inclusion",
    "root_at",
    "tree_root",
]


def _b64(items: list[bytes]) -> list[str]:
    return [base64.b64encode(x).decode("ascii") for x in items]


@dataclass(frozen=True, slots=True)
class InclusionProof:
    seq: int
    event_hash: str
    leaf_index: int
    leaf_hash: str
    tree_size: int
    root: str
    proof: list[str]  # hex
    checkpointed: bool

    def verify(self) -> bool:
        return merkle.verify_inclusion(
            bytes.fromhex(self.leaf_hash),
            self.leaf_index,
            self.tree_size,
            [bytes.fromhex(p) for p in self.proof],
            bytes.fromhex(self.root),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "event_hash": self.event_hash,
            "leaf_index": self.leaf_index,
            "leaf_hash": self.leaf_hash,
            "tree_size": self.tree_size,
            "root": self.root,
            "proof": self.proof,
            "proof_base64": _b64([bytes.fromhex(p) for p in self.proof]),
            "checkpointed": self.checkpointed,
            "verified": self.verify(),
        }


@dataclass(frozen=True, slots=True)
class ConsistencyProof:
    size1: int
    size2: int
    root1: str
    root2: str
    proof: list[str]

    def verify(self) -> bool:
        return merkle.verify_consistency(
            self.size1,
            self.size2,
            [bytes.fromhex(p) for p in self.proof],
            bytes.fromhex(self.root1),
            bytes.fromhex(self.root2),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "size1": self.size1,
            "size2": self.size2,
            "root1": self.root1,
            "root2": self.root2,
            "proof": self.proof,
            "proof_base64": _b64([bytes.fromhex(p) for p in self.proof]),
            "verified": self.verify(),
        }


def tree_root(hashes: list[bytes]) -> str:
    return merkle.merkle_root(hashes).hex()


def checkpoint(ledger: Ledger) -> Checkpoint:
    """Record a checkpoint of the whole ledger as it is now: the stored tiles are brought
    up to the head first (ledger/tlog/tiles.py), so this reads O(log n) rows plus the events
    appended since the last checkpoint. Integration and the checkpoint row are one
    durable transaction (one commit)."""
    with integrated(ledger, durable=True) as (tx, size, root):
        return ledger.record_checkpoint_in(tx, size, root.hex())


def _size_or_checkpoint(ledger: Ledger, size: int | None) -> tuple[int, bool]:
    if size is None:
        [(latest,)] = ledger.fetch("SELECT MAX(tree_size) FROM checkpoints", {})
        if latest is None:
            raise ProofError("no checkpoint recorded yet; run `aborist-ledger checkpoint`")
        return int(latest), True
    found = ledger.fetch("SELECT 1 FROM checkpoints WHERE tree_size = :n", {"n": size})
    return size, bool(found)


def prove_inclusion(ledger: Ledger, seq: int, size: int | None = None) -> InclusionProof:
    """Inclusion proof for event ``seq`` in the tree of ``size`` events (default: the
    latest checkpoint), from the stored tiles: O(log n) rows."""
    tree_size, checkpointed = _size_or_checkpoint(ledger, size)
    if tree_size < 1:
        raise ProofError(f"tree size must be at least 1, not {tree_size}")
    if not 1 <= seq <= tree_size:
        raise ProofError(f"event {seq} is not in a tree of {tree_size} events")
    with open_tree(ledger, tree_size) as tree:
        leaf = tree.leaf(seq - 1)
        [row] = tree.fetch("SELECT hash FROM events WHERE seq = :s", {"s": seq})
        root, path = tree.root(), tree.inclusion(seq - 1)
    return InclusionProof(
        seq=seq,
        event_hash=str(row[0]),
        leaf_index=seq - 1,
        leaf_hash=leaf.hex(),
        tree_size=tree_size,
        root=root.hex(),
        proof=[p.hex() for p in path],
        checkpointed=checkpointed,
    )


def prove_consistency(ledger: Ledger, size1: int, size2: int) -> ConsistencyProof:
    if not 1 <= size1 <= size2:
        raise ProofError(f"consistency needs 1 <= SIZE1 <= SIZE2, got {size1} and {size2}")
    with open_tree(ledger, size2) as tree:
        root1, root2, path = tree.root(size1), tree.root(), tree.consistency(size1)
    return ConsistencyProof(
        size1=size1,
        size2=size2,
        root1=root1.hex(),
        root2=root2.hex(),
        proof=[p.hex() for p in path],
    )


def root_at(ledger: Ledger, size: int) -> bytes:
    """MTH of the first ``size`` events; :class:`ProofError` if the ledger is shorter."""
    with open_tree(ledger, size) as tree:
        return tree.root()


def inclusion_path(ledger: Ledger, index: int, size: int) -> list[bytes]:
    """The raw RFC 9162 inclusion proof of leaf ``index`` (0-based) in the tree of ``size``."""
    with open_tree(ledger, size) as tree:
        return tree.inclusion(index)


def consistency_path(ledger: Ledger, size1: int, size2: int) -> list[bytes]:
    """The raw RFC 9162 consistency proof between two tree sizes of this ledger."""
    if not 1 <= size1 <= size2:
        raise ProofError(f"consistency needs 1 <= SIZE1 <= SIZE2, got {size1} and {size2}")
    with open_tree(ledger, size2) as tree:
        return tree.consistency(size1)
