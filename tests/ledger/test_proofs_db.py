"""Checkpoints and proofs over a real ledger (both backends)."""

from __future__ import annotations

import pytest

from ledger.envelope import NewEvent
from ledger.errors import ProofError
from ledger.store import Ledger
from ledger.tlog import merkle
from ledger.tlog.proofs import checkpoint, prove_consistency, prove_inclusion


def fill(lg: Ledger, n: int) -> None:
    lg.append("s", [NewEvent("test.happened", {"i": i}) for i in range(n)])


def test_checkpoint_commits_to_event_hashes(ledger: Ledger) -> None:
    fill(ledger, 11)
    cp = checkpoint(ledger)
    assert cp.tree_size == 11
    assert cp.root == merkle.merkle_root([bytes.fromhex(r.hash) for r in ledger.read()]).hex()
    assert checkpoint(ledger) == cp  # same size: the recorded one comes back
    fill(ledger, 2)
    assert checkpoint(ledger).tree_size == 13
    assert [c.tree_size for c in ledger.checkpoints()] == [11, 13]


def test_inclusion_against_checkpoint(ledger: Ledger) -> None:
    fill(ledger, 9)
    with pytest.raises(ProofError, match="no checkpoint"):
        prove_inclusion(ledger, 1)
    cp = checkpoint(ledger)
    fill(ledger, 5)
    for seq in range(1, 10):
        proof = prove_inclusion(ledger, seq)
        assert proof.tree_size == 9 and proof.root == cp.root and proof.checkpointed
        assert proof.verify()
    later = prove_inclusion(ledger, 12, size=14)
    assert later.verify() and not later.checkpointed
    with pytest.raises(ProofError):
        prove_inclusion(ledger, 10)  # not in the 9-event checkpoint
    with pytest.raises(ProofError):
        prove_inclusion(ledger, 3, size=99)


def test_consistency_between_checkpoints(ledger: Ledger) -> None:
    fill(ledger, 6)
    first = checkpoint(ledger)
    fill(ledger, 7)
    second = checkpoint(ledger)
    proof = prove_consistency(ledger, first.tree_size, second.tree_size)
    assert (proof.root1, proof.root2) == (first.root, second.root)
    assert proof.verify()
    assert not merkle.verify_consistency(
        6, 13, [bytes.fromhex(p) for p in proof.proof], bytes.fromhex(second.root),
        bytes.fromhex(first.root),
    )  # fmt: skip
    with pytest.raises(ProofError):
        prove_consistency(ledger, 7, 6)
    with pytest.raises(ProofError):
        prove_consistency(ledger, 1, 50)
