"""The chunk-hash list blob and its Merkle tree: the same root and inclusion proofs as
ledger.tlog.merkle (RFC 9162), built once."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from aborist.corpus.chunk_list import ChunkTree, decode_chunk_hashes, encode_chunk_hashes
from ledger.tlog.merkle import inclusion_proof, leaf_hash, merkle_root, verify_inclusion

hashes = st.lists(st.binary(min_size=32, max_size=32), max_size=70)


@given(hashes)
def test_tree_root_and_every_proof_match_rfc9162(entries: list[bytes]) -> None:
    tree = ChunkTree(entries)
    root = merkle_root(entries)
    assert tree.root == root
    for i, entry in enumerate(entries):
        proof = tree.proof(i)
        assert proof == inclusion_proof(entries, i)
        assert verify_inclusion(leaf_hash(entry), i, len(entries), proof, root)
        assert tree.proves(entry, root) == entries.index(entry)


@given(hashes, st.binary(min_size=32, max_size=32))
def test_a_hash_not_in_the_list_or_another_root_proves_nothing(
    entries: list[bytes], other: bytes
) -> None:
    tree = ChunkTree(entries)
    if other not in entries:
        assert tree.proves(other, tree.root) is None
    if entries:
        wrong = hashlib.sha256(tree.root).digest()
        assert tree.proves(entries[0], wrong) is None


@given(hashes)
def test_blob_round_trip(entries: list[bytes]) -> None:
    blob = encode_chunk_hashes([e.hex() for e in entries])
    assert len(blob) == 32 * len(entries)
    assert decode_chunk_hashes(blob) == entries


def test_a_blob_that_is_not_whole_hashes_is_refused() -> None:
    assert decode_chunk_hashes(b"\x00" * 33) is None
    assert decode_chunk_hashes(b"") == []
