"""The audit: ``aborist-ledger replay`` confirms every transition of the ledger from its
own bytes. See docs/replay.md."""

from aborist.audit.findings import Divergence, NotReexecuted, ReplayReport, VersionSkew
from aborist.audit.replay import parse_checkpoint, replay

__all__ = [
    "Divergence",
    "NotReexecuted",
    "ReplayReport",
    "VersionSkew",
    "parse_checkpoint",
    "replay",
]
