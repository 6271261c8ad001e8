"""A shard's chunk-hash list as the ledger keeps it: the leaves of its ``source_root``.

Ingest stores the list as one blob (referenced from ``corpus.shard_ingested`` as
``chunk_hashes_blob``), so that an auditor holding only the ledger can show that a chunk a
run used is a leaf of the source root the run names (docs/corpus.md, "What binds a corpus
to the ledger"). The blob is the raw 32-byte sha256 chunk hashes concatenated in
document/chunk order, exactly the entries of the RFC 9162 §2.1.1 Merkle tree whose root is
``source_root`` (:func:`aborist.corpus.shard.merkle_root_hex`): 32 bytes a chunk, no
framing to parse, and its own sha256 is its blob address.

:class:`ChunkTree` holds the tree of one list, built once (O(n) hashes), so each
inclusion proof (RFC 9162 §2.1.3.1) costs O(log n) and is checked with
:func:`ledger.tlog.merkle.verify_inclusion` against the recorded root. Pure: bytes in, bytes
and booleans out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ledger.tlog.merkle import leaf_hash, node_hash, verify_inclusion

__all__ = ["HASH_BYTES", "ChunkTree", "decode_chunk_hashes", "encode_chunk_hashes"]

HASH_BYTES = 32


def encode_chunk_hashes(chunk_hashes: Sequence[str]) -> bytes:
    """The blob of a chunk-hash list: each lower-case hex sha256 as its 32 raw bytes."""
    return b"".join(bytes.fromhex(h) for h in chunk_hashes)


def decode_chunk_hashes(data: bytes) -> list[bytes] | None:
    """The raw chunk hashes of a blob; None when it is not a whole number of hashes."""
    if len(data) % HASH_BYTES:
        return None
    return [data[i : i + HASH_BYTES] for i in range(0, len(data), HASH_BYTES)]


class ChunkTree:
    """The RFC 9162 Merkle tree over one chunk-hash list.

    ``levels[0]`` are the leaf hashes HASH(0x00 || chunk_hash); each higher level pairs
    the one below and carries an odd last node up unchanged, which for every subtree a
    proof needs gives the same nodes as the RFC's split at the largest power of two (the
    left subtree of size k = 2^j is always complete).
    """

    def __init__(self, entries: Sequence[bytes]) -> None:
        self.size = len(entries)
        level = [leaf_hash(e) for e in entries]
        self.levels: list[list[bytes]] = [level]
        while len(level) > 1:
            nxt = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            self.levels.append(nxt)
            level = nxt
        self.index: dict[bytes, int] = {}
        for i, e in enumerate(entries):
            self.index.setdefault(e, i)
        self._proven: dict[tuple[bytes, bytes], int | None] = {}

    @property
    def root(self) -> bytes:
        """MTH of the list (RFC 9162 §2.1.1); the hash of the empty string when empty."""
        if not self.size:
            return hashlib.sha256(b"").digest()
        return self.levels[-1][0]

    def proof(self, index: int) -> list[bytes]:
        """PATH(index, D[n]) (RFC 9162 §2.1.3.1), leaf first."""
        path: list[bytes] = []
        i = index
        for level in self.levels[:-1]:
            sibling = i ^ 1
            if sibling < len(level):
                path.append(level[sibling])
            i >>= 1
        return path

    def proves(self, chunk_hash: bytes, root: bytes) -> int | None:
        """The leaf index of ``chunk_hash`` if an inclusion proof from it verifies against
        ``root``; None when the list does not hold it or the proof fails. The answer is a
        pure function of the list, the hash and the root, so it is worked out once per
        (hash, root): replay asks it of the same chunk for every run that used it."""
        key = (chunk_hash, root)
        if key in self._proven:
            return self._proven[key]
        i = self.index.get(chunk_hash)
        ok = i is not None and verify_inclusion(
            leaf_hash(chunk_hash), i, self.size, self.proof(i), root
        )
        found = i if ok else None
        self._proven[key] = found
        return found
