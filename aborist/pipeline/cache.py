"""Serving a cache hit (ARCHITECTURE.md, "The pipeline"; seed map ``qa.runner``).

``providence_cache`` is a projection: it maps a cache key to the run whose answer can be
served. What is served is that run's own record (its ``qa.cache_written`` event, its
evidence blobs, its rendered citations), checked against the row first, so an edited
row is refused rather than served (:class:`~aborist.errors.ProjectionError`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aborist.errors import ProjectionError
from aborist.events import run_stream
from ledger.store import Ledger

__all__ = ["Served", "lookup", "served_run"]


def lookup(ledger: Ledger, key: str) -> dict[str, Any] | None:
    rows = ledger.fetch(
        "SELECT answer, audit_mode, label, run_id, run_dag_root FROM providence_cache "
        "WHERE cache_key = :k",
        {"k": key},
    )
    if not rows:
        return None
    return dict(
        zip(("answer", "audit_mode", "label", "run_id", "run_dag_root"), rows[0], strict=True)
    )


@dataclass
class Served:
    """What a hit serves besides the row's answer: the served run's evidence and citations."""

    evidence: list[dict[str, Any]]
    citations: list[dict[str, Any]]


#: The cache row's columns that must equal the served run's ``qa.cache_written``.
_CACHED = ("answer", "audit_mode", "label", "run_dag_root")


def served_run(ledger: Ledger, key: str, hit: dict[str, Any]) -> Served:
    """The run a cache hit serves, from its own events and blobs, checked against the
    ``providence_cache`` row that pointed at it.

    The row is a projection: anyone with write access to the database can edit it, and
    nothing in the row itself would show it. So before anything is served, the run's
    ``qa.cache_written`` event (hash-chained, append-only) must name the same key and
    hold the same answer, audit mode, label and DAG root; otherwise the hit fails with
    :class:`ProjectionError` and the run is recorded as failed at ``cache``."""
    run_id = hit["run_id"]
    evidence: list[dict[str, Any]] = []
    citations: list[dict[str, Any]] = []
    written: dict[str, Any] | None = None
    wanted = ["qa.evidence_mapped", "qa.context_assembled", "qa.answer_rendered",
              "qa.cache_written"]  # fmt: skip
    for ev in ledger.read(stream=run_stream(run_id), types=wanted):
        if ev.type == "qa.cache_written":
            written = ev.data
        elif ev.type in ("qa.evidence_mapped", "qa.context_assembled"):
            items = ev.data["evidence"]
            texts = ledger.get_blobs([item["text_blob"] for item in items])
            for item in items:
                public = {k: item[k] for k in ("pointer_id", "evidence_id", "source_uri",
                                                "title", "source_role")}  # fmt: skip
                if "locator" in item:
                    public["locator"] = item["locator"]
                public["text"] = texts[item["text_blob"]].decode("utf-8")
                evidence.append(public)
        elif ev.type == "qa.answer_rendered":
            citations = ev.data["citations"]
    fix = "run `aborist-ledger replay` to see what differs, `aborist-ledger rebuild` to restore"
    if written is None or written.get("cache_key") != key:
        raise ProjectionError(
            f"the answer cache row for key {key[:16]}… points at run {run_id}, whose events "
            f"record no cache write for that key; nothing was served ({fix})"
        )
    differs = [c for c in _CACHED if written.get(c) != hit[c]]
    if differs:
        raise ProjectionError(
            f"the answer cache row for key {key[:16]}… differs from run {run_id}'s "
            f"qa.cache_written event in {', '.join(differs)}; nothing was served ({fix})"
        )
    return Served(evidence, citations)
