"""Properties of ledger.tlog.merkle, checked against a reference written straight from RFC 9162.

The reference functions below are the recursive definitions of RFC 9162 §2.1.1 (MTH),
§2.1.3.1 (PATH) and §2.1.4.1 (PROOF / SUBPROOF), using hashlib directly and nothing from
the module under test. The known roots are the RFC 6962 test tree of 8 entries published
with transparency-dev/merkle (proof/verify_test.go), whose vectors live in
``../shared/data/merkle-vectors``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.errors import ProofError
from ledger.tlog.merkle import (
    EMPTY_ROOT,
    RootFold,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    merkle_root,
    node_hash,
    root_from_leaf_hashes,
    verify_consistency,
    verify_inclusion,
)

VECTORS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "merkle-vectors"

# --- reference implementation, straight from the RFC text ------------------------------


def ref_mth(d: list[bytes]) -> bytes:
    n = len(d)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return hashlib.sha256(b"\x00" + d[0]).digest()
    k = ref_split(n)
    return hashlib.sha256(b"\x01" + ref_mth(d[:k]) + ref_mth(d[k:])).digest()


def ref_split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def ref_path(m: int, d: list[bytes]) -> list[bytes]:
    n = len(d)
    if n == 1:
        return []
    k = ref_split(n)
    if m < k:
        return [*ref_path(m, d[:k]), ref_mth(d[k:])]
    return [*ref_path(m - k, d[k:]), ref_mth(d[:k])]


def ref_subproof(m: int, d: list[bytes], b: bool) -> list[bytes]:
    n = len(d)
    if m == n:
        return [] if b else [ref_mth(d)]
    k = ref_split(n)
    if m <= k:
        return [*ref_subproof(m, d[:k], b), ref_mth(d[k:])]
    return [*ref_subproof(m - k, d[k:], False), ref_mth(d[:k])]


# --- strategies -------------------------------------------------------------------------


def distinct_entries(n: int, salt: bytes) -> list[bytes]:
    """n distinct entries (distinct leaves, so a proof can never fit another index by luck)."""
    return [salt + i.to_bytes(4, "big") for i in range(n)]


sizes = st.integers(min_value=1, max_value=300)
salts = st.binary(max_size=8)
FAST = settings(max_examples=60, deadline=None)


def flip_bit(proof: list[bytes], element: int, bit: int) -> list[bytes]:
    altered = list(proof)
    item = bytearray(altered[element])
    item[bit // 8] ^= 1 << (bit % 8)
    altered[element] = bytes(item)
    return altered


# --- the root ---------------------------------------------------------------------------


def test_empty_tree_root_is_hash_of_nothing() -> None:
    assert hashlib.sha256(b"").digest() == EMPTY_ROOT
    assert merkle_root([]) == EMPTY_ROOT == root_from_leaf_hashes([])


def test_leaf_and_node_hashes_use_distinct_prefixes() -> None:
    assert leaf_hash(b"x") == hashlib.sha256(b"\x00x").digest()
    assert (
        node_hash(b"a" * 32, b"b" * 32) == hashlib.sha256(b"\x01" + b"a" * 32 + b"b" * 32).digest()
    )


@FAST
@given(st.lists(st.binary(max_size=40), max_size=70))
def test_merkle_root_matches_the_rfc_definition(entries: list[bytes]) -> None:
    assert merkle_root(entries) == ref_mth(entries)


@FAST
@given(st.lists(st.binary(max_size=40), max_size=70))
def test_root_from_leaf_hashes_matches_merkle_root(entries: list[bytes]) -> None:
    assert root_from_leaf_hashes(list(map(leaf_hash, entries))) == merkle_root(entries)


@pytest.mark.parametrize("n", [4095, 4096, 4097, 8192, 3 * 4096 + 7, 5 * 4096 + 1])
def test_root_across_block_boundaries(n: int) -> None:
    """Sizes around the 4096-leaf batches of the fold, which the random sizes never reach."""
    entries = distinct_entries(n, b"blk")
    assert merkle_root(entries) == ref_mth(entries)
    assert root_from_leaf_hashes([leaf_hash(e) for e in entries]) == ref_mth(entries)


def test_proofs_across_block_boundaries() -> None:
    entries = distinct_entries(3 * 4096 + 7, b"blk")
    n = len(entries)
    root = ref_mth(entries)
    for index in (0, 4095, 4096, 8191, n - 1):
        proof = inclusion_proof(entries, index)
        assert proof == ref_path(index, entries)
        assert verify_inclusion(leaf_hash(entries[index]), index, n, proof, root)
    for m in (1, 4096, 4097, 8193, n - 1):
        proof = consistency_proof(entries, m)
        assert proof == ref_subproof(m, entries, True)
        assert verify_consistency(m, n, proof, ref_mth(entries[:m]), root)


# --- inclusion --------------------------------------------------------------------------


@FAST
@given(sizes, salts, st.data())
def test_inclusion_proof_verifies(n: int, salt: bytes, data: st.DataObject) -> None:
    entries = distinct_entries(n, salt)
    index = data.draw(st.integers(0, n - 1), label="index")
    proof = inclusion_proof(entries, index)
    assert proof == ref_path(index, entries)
    assert verify_inclusion(leaf_hash(entries[index]), index, n, proof, merkle_root(entries))


@FAST
@given(st.integers(2, 300), salts, st.data())
def test_inclusion_fails_for_a_flipped_bit(n: int, salt: bytes, data: st.DataObject) -> None:
    entries = distinct_entries(n, salt)
    index = data.draw(st.integers(0, n - 1), label="index")
    proof = inclusion_proof(entries, index)
    element = data.draw(st.integers(0, len(proof) - 1), label="element")
    bit = data.draw(st.integers(0, 255), label="bit")
    altered = flip_bit(proof, element, bit)
    assert not verify_inclusion(leaf_hash(entries[index]), index, n, altered, merkle_root(entries))


@FAST
@given(st.integers(2, 300), salts, st.data())
def test_inclusion_fails_for_a_wrong_index(n: int, salt: bytes, data: st.DataObject) -> None:
    entries = distinct_entries(n, salt)
    index = data.draw(st.integers(0, n - 1), label="index")
    other = data.draw(st.integers(0, n - 1).filter(lambda j: j != index), label="other")
    proof = inclusion_proof(entries, index)
    root = merkle_root(entries)
    assert not verify_inclusion(leaf_hash(entries[index]), other, n, proof, root)
    assert not verify_inclusion(leaf_hash(entries[other]), other, n, proof, root)


@FAST
@given(sizes, salts, st.data())
def test_inclusion_fails_for_a_wrong_size(n: int, salt: bytes, data: st.DataObject) -> None:
    """A proof for (index, n) does not fit the checkpoint (m, MTH(D[0:m])) of any other m."""
    entries = distinct_entries(600, salt)
    index = data.draw(st.integers(0, n - 1), label="index")
    m = data.draw(st.integers(index + 1, 600).filter(lambda s: s != n), label="wrong size")
    proof = inclusion_proof(entries, index, n)
    lh = leaf_hash(entries[index])
    assert not verify_inclusion(lh, index, m, proof, merkle_root(entries[:m]))
    if len(proof) != len(inclusion_proof(entries, index, m)):
        assert not verify_inclusion(lh, index, m, proof, merkle_root(entries[:n]))


def test_tree_size_is_bound_by_the_root_not_the_path() -> None:
    """RFC 9162 paths for leaf 0 in trees of 5 and 6 have the same shape, so a proof against
    root(5) also "verifies" with tree_size 6. Only the signed (size, root) pair binds the
    size: callers must take both from one checkpoint."""
    entries = distinct_entries(6, b"")
    proof = inclusion_proof(entries, 0, 5)
    root5 = merkle_root(entries[:5])
    assert verify_inclusion(leaf_hash(entries[0]), 0, 5, proof, root5)
    assert verify_inclusion(leaf_hash(entries[0]), 0, 6, proof, root5)
    assert not verify_inclusion(leaf_hash(entries[0]), 0, 6, proof, merkle_root(entries))


# --- consistency ------------------------------------------------------------------------


@FAST
@given(sizes, salts, st.data())
def test_consistency_proof_verifies(n: int, salt: bytes, data: st.DataObject) -> None:
    entries = distinct_entries(n, salt)
    m = data.draw(st.integers(1, n), label="size1")
    proof = consistency_proof(entries, m)
    assert proof == ref_subproof(m, entries, True)
    assert verify_consistency(m, n, proof, merkle_root(entries[:m]), merkle_root(entries))


@FAST
@given(st.integers(2, 300), salts, st.data())
def test_consistency_fails_for_a_flipped_bit(n: int, salt: bytes, data: st.DataObject) -> None:
    entries = distinct_entries(n, salt)
    m = data.draw(st.integers(1, n - 1), label="size1")
    proof = consistency_proof(entries, m)
    element = data.draw(st.integers(0, len(proof) - 1), label="element")
    bit = data.draw(st.integers(0, 255), label="bit")
    altered = flip_bit(proof, element, bit)
    root1, root2 = merkle_root(entries[:m]), merkle_root(entries)
    assert not verify_consistency(m, n, altered, root1, root2)


@FAST
@given(st.integers(2, 300), salts, st.data())
def test_consistency_fails_for_a_rewritten_history(
    n: int, salt: bytes, data: st.DataObject
) -> None:
    entries = distinct_entries(n, salt)
    m = data.draw(st.integers(1, n - 1), label="size1")
    victim = data.draw(st.integers(0, m - 1), label="rewritten entry")
    forged = [*entries[:victim], b"forged", *entries[victim + 1 :]]
    proof = consistency_proof(forged, m)
    assert not verify_consistency(m, n, proof, merkle_root(entries[:m]), merkle_root(forged))


# --- errors and malformed input ---------------------------------------------------------


@pytest.mark.parametrize(("index", "size"), [(3, 3), (0, 0), (-1, 3), (0, 4), (0, -1)], ids=str)
def test_impossible_inclusion_request_raises(index: int, size: int) -> None:
    with pytest.raises(ProofError):
        inclusion_proof(distinct_entries(3, b""), index, size)


@pytest.mark.parametrize(("size1", "size2"), [(4, 3), (0, 3), (-1, 3), (2, 4), (1, -1)], ids=str)
def test_impossible_consistency_request_raises(size1: int, size2: int) -> None:
    with pytest.raises(ProofError):
        consistency_proof(distinct_entries(3, b""), size1, size2)


def test_verifiers_reject_malformed_input_without_raising() -> None:
    entries = distinct_entries(5, b"")
    root, lh = merkle_root(entries), leaf_hash(entries[2])
    proof = inclusion_proof(entries, 2)
    assert verify_inclusion(lh, 2, 5, proof, root)
    junk: list[Any] = [None, *proof[1:]]
    assert not verify_inclusion(lh, 2, 5, junk, root)
    assert not verify_inclusion(lh, 2, 5, [p.hex() for p in proof], root)  # type: ignore[misc]
    assert not verify_inclusion(lh, 2, 5, [*proof[:-1], proof[-1][:31]], root)
    assert not verify_inclusion(lh, -1, 5, proof, root)
    assert not verify_inclusion(lh, 2, 2**70, proof, root)
    assert not verify_inclusion(lh.hex(), 2, 5, proof, root)  # type: ignore[arg-type]
    assert not verify_inclusion(lh, 2, 5, None, root)  # type: ignore[arg-type]
    cproof = consistency_proof(entries, 3)
    root3 = merkle_root(entries[:3])
    assert verify_consistency(3, 5, cproof, root3, root)
    assert not verify_consistency(3, 5, [*cproof[:-1], b""], root3, root)
    assert not verify_consistency(3, 5, cproof, root3[:31], root)
    assert not verify_consistency(-3, 5, cproof, root3, root)
    assert not verify_consistency(3, 5, b"".join(cproof), root3, root)  # type: ignore[arg-type]
    assert not verify_consistency(True, 5, cproof, root3, root)


# --- the RFC 6962 test tree of 8 entries ------------------------------------------------

LEAVES = [
    b"",
    b"\x00",
    b"\x10",
    b"\x20\x21",
    b"\x30\x31",
    b"\x40\x41\x42\x43",
    b"\x50\x51\x52\x53\x54\x55\x56\x57",
    b"\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f",
]
KNOWN_ROOTS = [  # MTH(LEAVES[:n]) for n = 1..8, as published in transparency-dev/merkle
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


@pytest.mark.parametrize("n", range(1, 9))
def test_known_roots_of_the_rfc6962_test_tree(n: int) -> None:
    assert merkle_root(LEAVES[:n]).hex() == KNOWN_ROOTS[n - 1]


def _happy_paths(kind: str) -> list[Any]:
    files = sorted(VECTORS.glob(f"{kind}/[0-9]*/happy-path.json"))
    return [pytest.param(p, id=p.relative_to(VECTORS).as_posix()) for p in files] or [
        pytest.param(None, marks=pytest.mark.skip(reason=f"Merkle vectors not found at {VECTORS}"))
    ]


def _b64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


@pytest.mark.parametrize("path", _happy_paths("inclusion"))
def test_inclusion_happy_path_is_the_test_tree(path: Path) -> None:
    """The vector's root, leaf hash and proof are what this module builds from LEAVES."""
    v = json.loads(path.read_text())
    size, index = v["treeSize"], v["leafIdx"]
    assert _b64(v["root"]) == merkle_root(LEAVES[:size])
    assert _b64(v["leafHash"]) == leaf_hash(LEAVES[index])
    assert inclusion_proof(LEAVES, index, size) == [_b64(p) for p in v["proof"] or []]


@pytest.mark.parametrize("path", _happy_paths("consistency"))
def test_consistency_happy_path_is_the_test_tree(path: Path) -> None:
    v = json.loads(path.read_text())
    size1, size2 = v["size1"], v["size2"]
    assert _b64(v["root1"]) == merkle_root(LEAVES[:size1])
    assert _b64(v["root2"]) == merkle_root(LEAVES[:size2])
    assert consistency_proof(LEAVES, size1, size2) == [_b64(p) for p in v["proof"] or []]


def test_the_root_fold_is_the_tree_of_what_was_appended() -> None:
    """:class:`RootFold` (replay's chain folds it from the hashes it verifies) gives the
    RFC 9162 root of the entries appended so far, at every size, against the reference."""
    entries = [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(300)]
    fold = RootFold()
    assert fold.root() == EMPTY_ROOT == ref_mth([])
    for n, e in enumerate(entries, start=1):
        fold.append(e)
        assert fold.size == n
        assert fold.root() == ref_mth(entries[:n]), n
    assert RootFold(entries[:77]).root() == merkle_root(entries[:77])
