"""What :func:`aborist.audit.bundle.verify_bundle` found in an export bundle: each check's
outcome and first failure, how the run ends, and what vouches for its events — the
checkpoint the caller gave, or only the exporting database's own (docs/ledger-format.md,
"Export bundles")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aborist.audit.checks.run_end import RunEnd
from aborist.audit.findings import Divergence, ReplayReport

__all__ = ["BUNDLE_CHECKS", "BundleReport"]

#: The checks of :func:`verify_bundle`, in the order they run.
BUNDLE_CHECKS = (
    "format", "events", "history", "inclusion", "checkpoint", "blob", "dag", "cache", "deep",
)  # fmt: skip


@dataclass
class BundleReport:
    """What :func:`verify_bundle` found; ``ok`` when every check held.

    ``failures`` keeps the first failure of each check, in check order (``first`` is the
    one to name); ``deep`` carries the re-execution's version skew and skipped stages."""

    run_id: str = ""
    events: int = 0
    blobs: int = 0
    checkpoint: dict[str, Any] = field(default_factory=dict)
    trusted_checkpoint: int | None = None
    checks: dict[str, str] = field(default_factory=dict)
    failures: dict[str, Divergence] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    deep: ReplayReport = field(default_factory=ReplayReport)
    #: How the run's events end (None when they could not be read that far).
    end: RunEnd | None = None
    #: The seqs of the run's events in the bundle, in order.
    seqs: list[int] = field(default_factory=list)
    #: Shards the run read that no recorded ingest vouches for (``qa.cache_checked``).
    unrecorded_shards: list[str] = field(default_factory=list)
    #: A cache hit's served run (``served_from_run_id``): its answer, label and DAG root
    #: are that run's, which the bundle does not hold, so nothing here checked them.
    served_from: str | None = None

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def status(self) -> str | None:
        """completed | cached | failed | incomplete, from the run's events."""
        return self.end.status if self.end is not None else None

    @property
    def first(self) -> Divergence | None:
        return next((self.failures[k] for k in BUNDLE_CHECKS if k in self.failures), None)

    def fail(self, d: Divergence) -> None:
        self.failures.setdefault(d.kind, d)
        self.counts[d.kind] = self.counts.get(d.kind, 0) + 1

    def vouched_for(self) -> dict[str, Any]:
        """What vouches for the run's events: the checkpoint the caller gave covers those
        at seqs up to its size (once it held against the bundle's); the bundle's own
        checkpoint is the exporting database's word, so nothing outside that database
        vouches for the later ones, nor for any when no checkpoint was given."""
        size = self.trusted_checkpoint
        bundle_size = self.checkpoint.get("tree_size")
        if size is None:
            return {"anchored": False, "covered": [], "unanchored": list(self.seqs),
                    "text": f"self-consistent: the bundle's checkpoint (size {bundle_size}) "
                            "is the exporting database's own, not anchored to anything "
                            "outside it (give --checkpoint FILE, a checkpoint kept "
                            "elsewhere, to anchor it)"}  # fmt: skip
        if self.checks.get("checkpoint") != "held":
            return {
                "anchored": False,
                "covered": [],
                "unanchored": list(self.seqs),
                "text": f"the checkpoint you gave (size {size}) does not hold: nothing "
                "outside the exporting database vouches for these events",
            }
        # only the run's own events are in the bundle and re-hashed: the checkpoint covers
        # those of them up to its size, never "events 1–N"
        covered = [q for q in self.seqs if q <= size]
        after = [q for q in self.seqs if q > size]
        if covered:
            text = (f"this run's {len(covered)} event(s) at {_span(covered)} are covered by "
                    f"the checkpoint you gave (size {size})")  # fmt: skip
        else:
            text = f"none of this run's events is covered by the checkpoint you gave (size {size})"
        if after:
            text += (f"; its {len(after)} event(s) at {_span(after)} come after it and nothing "
                     "outside the exporting database vouches for them")  # fmt: skip
        return {"anchored": bool(covered), "covered": covered, "unanchored": after, "text": text}

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "run_id": self.run_id,
            "vouched_for": self.vouched_for(),
            "events": self.events,
            "blobs": self.blobs,
            "checkpoint": self.checkpoint,
            "trusted_checkpoint": self.trusted_checkpoint,
            "checks": dict(self.checks),
            "status": self.status,
            "end": self.end.to_dict() if self.end else None,
            "failures": [self.failures[k].to_dict() for k in BUNDLE_CHECKS if k in self.failures],
            "failure_counts": {k: self.counts[k] for k in BUNDLE_CHECKS if k in self.counts},
            "deep_stages": self.deep.deep_stages,
            "version_skew": [s.to_dict() for s in self.deep.version_skew],
            "not_reexecuted": [n.to_dict() for n in self.deep.not_reexecuted],
            "unrecorded_shards": list(self.unrecorded_shards),
            "served_from": self.served_from,
        }


def _span(seqs: list[int]) -> str:
    return f"seq {seqs[0]}" if len(seqs) == 1 else f"seqs {seqs[0]}–{seqs[-1]}"
