"""RFC 6962 / RFC 9162 Merkle tree over the ledger's event hashes.

Checkpoints are ``(tree_size, root)``; inclusion proofs show that an event is under a
checkpoint and consistency proofs show that a later checkpoint extends an earlier one, so
history cannot be rewritten unnoticed (docs/ledger-format.md, "Merkle tree, checkpoints, proofs").

Every hash is a raw 32-byte SHA-256 digest. Leaves and interior nodes are hashed with
distinct one-byte prefixes (RFC 9162 §2.1.1) so a leaf can never pass for a node. The
builders (:func:`merkle_root`, :func:`inclusion_proof`, :func:`consistency_proof`) raise
:class:`~ledger.errors.ProofError` when asked for something the tree does not have; the
verifiers never raise: any malformed input simply does not verify.

The test oracle is the transparency-dev/merkle vector set in ``../shared/data/merkle-vectors``.
"""

from __future__ import annotations

__all__ = [
    "RootFold",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "merkle_root",
    "node_hash",
    "root_from_leaf_hashes",
    "verify_consistency",
    "verify_inclusion",
]

import hashlib
from collections.abc import Callable, Sequence

from ledger.errors import ProofError

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()
"""MTH({}) = HASH() -- the root of the empty tree (RFC 9162 §2.1.1)."""

_sha256 = hashlib.sha256
_BLOCK = 1 << 12
"""Leaves hashed per batch by the root fold; a power of two so each batch is a perfect subtree."""


def leaf_hash(entry: bytes) -> bytes:
    """MTH({d0}) = HASH(0x00 || d0) (RFC 9162 §2.1.1)."""
    return _sha256(LEAF_PREFIX + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """HASH(0x01 || left || right), the interior node of RFC 9162 §2.1.1."""
    return _sha256(NODE_PREFIX + left + right).digest()


def _pair_levels(level: list[bytes]) -> bytes:
    """MTH of a non-empty row of leaf hashes, pairing neighbours level by level.

    A trailing odd node is promoted unchanged; that yields exactly the "split at the largest
    power of two smaller than n" shape of RFC 9162 §2.1.1, without recursion.
    """
    while len(level) > 1:
        odd = level[-1:] if len(level) & 1 else []
        lefts, rights = level[0:-1:2], level[1::2]
        level = [
            _sha256(NODE_PREFIX + a + b).digest() for a, b in zip(lefts, rights, strict=True)
        ] + odd
    return level[0]


def _fold(size: int, leaf_block: Callable[[int, int], list[bytes]]) -> bytes:
    """MTH over ``size`` leaves, fed as blocks of leaf hashes ``leaf_block(start, stop)``.

    A compact-range stack: each full block of ``_BLOCK`` leaves is a perfect subtree and is
    merged like a binary counter; the short tail is its own subtree; the stack is then folded
    right to left. Memory stays O(block + log n) and no Python-level recursion is used.
    """
    if size == 0:
        return EMPTY_ROOT
    stack: list[bytes] = []
    full = size - size % _BLOCK
    for count, start in enumerate(range(0, full, _BLOCK), start=1):
        node = _pair_levels(leaf_block(start, start + _BLOCK))
        while not count & 1:
            node = node_hash(stack.pop(), node)
            count >>= 1
        stack.append(node)
    if full < size:
        stack.append(_pair_levels(leaf_block(full, size)))
    node = stack.pop()
    while stack:
        node = node_hash(stack.pop(), node)
    return node


def _leaf_hashes(entries: Sequence[bytes]) -> list[bytes]:
    return [_sha256(LEAF_PREFIX + e).digest() for e in entries]


def merkle_root(entries: Sequence[bytes]) -> bytes:
    """MTH(D[n]) of RFC 9162 §2.1.1 for raw ``entries`` (each is leaf-hashed here)."""
    return _fold(len(entries), lambda start, stop: _leaf_hashes(entries[start:stop]))


def root_from_leaf_hashes(leaf_hashes: Sequence[bytes]) -> bytes:
    """MTH (RFC 9162 §2.1.1) when the leaf hashes HASH(0x00 || d) are already known."""
    return _fold(len(leaf_hashes), lambda start, stop: list(leaf_hashes[start:stop]))


def _subtree_root(leaves: list[bytes], lo: int, hi: int) -> bytes:
    return _fold(hi - lo, lambda start, stop: leaves[lo + start : lo + stop])


def _split(n: int) -> int:
    """k, the largest power of two smaller than n (n >= 2), as in RFC 9162 §2.1.1."""
    return 1 << ((n - 1).bit_length() - 1)


def _tree_size(entries: Sequence[bytes], tree_size: int | None) -> int:
    size = len(entries) if tree_size is None else tree_size
    if not 0 <= size <= len(entries):
        raise ProofError(f"tree size must be within 0..{len(entries)}, found {size}")
    return size


def inclusion_proof(
    entries: Sequence[bytes], index: int, tree_size: int | None = None
) -> list[bytes]:
    """PATH(m, D[n]) of RFC 9162 §2.1.3.1 for the first ``tree_size`` entries, leaf first.

    Built top-down (each step keeps the half holding ``index`` and records the other half's
    root), then reversed, so the total work is O(n) hashes.
    """
    size = _tree_size(entries, tree_size)
    if not 0 <= index < size:
        raise ProofError(f"leaf index must be within 0..{size - 1}, found {index}")
    leaves = _leaf_hashes(entries[:size])
    path: list[bytes] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            path.append(_subtree_root(leaves, lo + k, hi))
            hi = lo + k
        else:
            path.append(_subtree_root(leaves, lo, lo + k))
            lo += k
    path.reverse()
    return path


def consistency_proof(
    entries: Sequence[bytes], size1: int, size2: int | None = None
) -> list[bytes]:
    """PROOF(m, D[n]) = SUBPROOF(m, D[n], true) of RFC 9162 §2.1.4.1, unrolled into a loop.

    Defined for 0 < size1 <= size2 (empty when the sizes are equal). A consistency proof from
    the empty tree proves nothing and :func:`verify_consistency` rejects size1 = 0, so asking
    for one is a :class:`ProofError` rather than an unverifiable result.
    """
    second = _tree_size(entries, size2)
    if not 0 < size1 <= second:
        raise ProofError(f"size1 must be within 1..{second} (size2), found {size1}")
    leaves = _leaf_hashes(entries[:second])
    tail: list[bytes] = []
    lo, hi, m, known = 0, second, size1, True
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            tail.append(_subtree_root(leaves, lo + k, hi))
            hi = lo + k
        else:
            tail.append(_subtree_root(leaves, lo, lo + k))
            lo, m, known = lo + k, m - k, False
    head = [] if known else [_subtree_root(leaves, lo, hi)]
    return head + tail[::-1]


def _is_hash(value: object) -> bool:
    return isinstance(value, bytes) and len(value) == HASH_SIZE


def _hash_list(proof: object) -> list[bytes] | None:
    """The proof as a list of 32-byte hashes, or None if it is not one (never raises)."""
    if proof is None:
        return []
    if isinstance(proof, bytes | str) or not isinstance(proof, Sequence):
        return None
    items = list(proof)
    return items if all(_is_hash(p) for p in items) else None


def _is_size(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def verify_inclusion(
    leaf_hash: bytes, index: int, tree_size: int, proof: Sequence[bytes], root: bytes
) -> bool:
    """RFC 9162 §2.1.3.2: does ``proof`` lead from ``leaf_hash`` at ``index`` to ``root``?

    ``leaf_hash`` is HASH(0x00 || entry), not the entry. Every hash must be 32 bytes and the
    path must have exactly the right length (the ``sn`` checks below enforce both ends).
    """
    if not (_is_size(index) and _is_size(tree_size) and index < tree_size):
        return False
    path = _hash_list(proof)
    if path is None or not (_is_hash(leaf_hash) and _is_hash(root)):
        return False
    fn, sn, r = index, tree_size - 1, leaf_hash
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while fn and not fn & 1:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(
    size1: int, size2: int, proof: Sequence[bytes], root1: bytes, root2: bytes
) -> bool:
    """RFC 9162 §2.1.4.2: is the tree (size2, root2) an append-only extension of (size1, root1)?

    Requires 0 < size1 (a proof from the empty tree is meaningless, and the transparency-dev
    vectors reject it). For size1 == size2 the proof must be empty and the roots identical;
    nothing is hashed then, so -- as in the vectors -- the roots are compared byte for byte
    without a length check. Otherwise every hash must be 32 bytes.
    """
    if not (_is_size(size1) and _is_size(size2) and 0 < size1 <= size2):
        return False
    path = _hash_list(proof)
    if path is None:
        return False
    if size1 == size2:
        return not path and isinstance(root1, bytes) and root1 == root2
    if not path or not (_is_hash(root1) and _is_hash(root2)):
        return False
    if size1 & (size1 - 1) == 0:
        path = [root1, *path]
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while fn and not fn & 1:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == root1 and sr == root2


class RootFold:
    """MTH (RFC 9162 §2.1.1) of a list of entries that grows one entry at a time, in
    O(log n) memory: a compact range, the roots of the perfect subtrees the entries so far
    make, largest first (appending merges equal heights, as a binary counter carries).
    :meth:`root` is the tree of the entries appended so far, for a caller that checks
    entries as they pass and wants the root of exactly those (``replay``'s chain)."""

    __slots__ = ("_stack", "size")

    def __init__(self, entries: Sequence[bytes] = ()) -> None:
        self.size = 0
        self._stack: list[tuple[int, bytes]] = []  # (height, subtree root)
        for e in entries:
            self.append(e)

    def append(self, entry: bytes) -> None:
        node, height, stack = _sha256(LEAF_PREFIX + entry).digest(), 0, self._stack
        while stack and stack[-1][0] == height:
            node = _sha256(NODE_PREFIX + stack.pop()[1] + node).digest()
            height += 1
        stack.append((height, node))
        self.size += 1

    def root(self) -> bytes:
        if not self._stack:
            return EMPTY_ROOT
        node = self._stack[-1][1]
        for _, left in reversed(self._stack[:-1]):
            node = node_hash(left, node)
        return node
