"""A generic append-only, hash-chained event store; it knows nothing of questions.

The public surface is below; everything else is private to the package. Names load on
first use (PEP 562), so ``import ledger.canonical`` stays as cheap as it was::

    from ledger import Ledger, NewEvent

    with Ledger.open("sqlite:///ledger.db") as lg:
        lg.append("orders:7", [NewEvent("order.placed", {"total": 12})])

Errors: every one is a :class:`LedgerError` (see :mod:`ledger.errors` for the tree).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

#: public name -> the module that defines it
_SURFACE = {
    "BlobNotFoundError": "ledger.errors",
    "Checkpoint": "ledger.store",
    "ConcurrencyError": "ledger.errors",
    "ConfigurationError": "ledger.errors",
    "ConsistencyProof": "ledger.tlog.proofs",
    "GENESIS_HASH": "ledger.envelope",
    "ImmutabilityError": "ledger.errors",
    "InclusionProof": "ledger.tlog.proofs",
    "Ledger": "ledger.store",
    "LedgerError": "ledger.errors",
    "LedgerReport": "ledger.verify",
    "NewEvent": "ledger.envelope",
    "NotMigratedError": "ledger.errors",
    "PayloadError": "ledger.errors",
    "Projection": "ledger.store",
    "ProofError": "ledger.errors",
    "RecordedEvent": "ledger.envelope",
    "UnavailableError": "ledger.errors",
    "canonical_json": "ledger.canonical",
    "checkpoint": "ledger.tlog.proofs",
    "prove_consistency": "ledger.tlog.proofs",
    "prove_inclusion": "ledger.tlog.proofs",
    "sha256_hex": "ledger.canonical",
    "tree_root": "ledger.tlog.proofs",
    "upgrade": "ledger.migrate",
    "verify_consistency": "ledger.tlog.merkle",
    "verify_inclusion": "ledger.tlog.merkle",
    "verify_ledger": "ledger.verify",
}

__all__ = [
    "GENESIS_HASH",
    "BlobNotFoundError",
    "Checkpoint",
    "ConcurrencyError",
    "ConfigurationError",
    "ConsistencyProof",
    "ImmutabilityError",
    "InclusionProof",
    "Ledger",
    "LedgerError",
    "LedgerReport",
    "NewEvent",
    "NotMigratedError",
    "PayloadError",
    "Projection",
    "ProofError",
    "RecordedEvent",
    "UnavailableError",
    "canonical_json",
    "checkpoint",
    "prove_consistency",
    "prove_inclusion",
    "sha256_hex",
    "tree_root",
    "upgrade",
    "verify_consistency",
    "verify_inclusion",
    "verify_ledger",
]

if TYPE_CHECKING:
    from ledger.canonical import canonical_json, sha256_hex
    from ledger.envelope import GENESIS_HASH, NewEvent, RecordedEvent
    from ledger.errors import (
        BlobNotFoundError,
        ConcurrencyError,
        ConfigurationError,
        ImmutabilityError,
        LedgerError,
        NotMigratedError,
        PayloadError,
        ProofError,
        UnavailableError,
    )
    from ledger.migrate import upgrade
    from ledger.store import Checkpoint, Ledger, Projection
    from ledger.tlog.merkle import verify_consistency, verify_inclusion
    from ledger.tlog.proofs import (
        ConsistencyProof,
        InclusionProof,
        checkpoint,
        prove_consistency,
        prove_inclusion,
        tree_root,
    )
    from ledger.verify import LedgerReport, verify_ledger


def __getattr__(name: str) -> Any:
    module = _SURFACE.get(name)
    if module is None:
        raise AttributeError(f"module 'ledger' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
