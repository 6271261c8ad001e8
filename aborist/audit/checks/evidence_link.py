"""The link between a run's retrieval record and its evidence: each evidence text must be
the chunk that retrieval selected (docs/replay.md, check 2).

The pipeline builds the evidence of a run (``qa.evidence_mapped`` in claim-lattice mode,
``qa.context_assembled`` in quote mode, for ``query`` and ``ask`` alike: ``ask`` retrieves
from a one-document shard through the same stages) from the chunks retrieval selected, in
the order ``qa.retrieval_completed`` lists them as the candidates whose ``decision`` is
``selected``. Each candidate records the ``chunk_hash`` ingest stored beside the chunk;
each evidence record the ``evidence_hash`` of the text the verifier was given (the sha256
of its UTF-8 bytes, which is what ``chunk_hash`` is too). Untampered they are equal, so a
difference means the text used was not the text ingest recorded: a shard edited after
ingest, which the recorded source root (over the chunk hashes) does not show.

Where the link is not defined nothing is checked: a run without both events (a cache
hit, a run that failed or stopped before the evidence stage).

It runs under ``replay --deep`` and in ``verify-bundle``, not in the plain DAG pass: the
retrieval record is the largest payload of a run (17 KB on average over the Rust book,
``bench/replay.py --corpus rust-book``), which no other check of that pass parses, and
parsing it made checks 1 and 2 about 16 % slower (paired median of 9 runs, 1,500 runs).

Pure: parsed payloads in, divergences out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aborist.audit.checks.run_events import RunEvents
from aborist.audit.findings import Divergence, clip
from aborist.events import EVIDENCE_STAGE, RetrievalCompleted
from ledger.envelope import RecordedEvent

__all__ = ["EVIDENCE_EVENTS", "LINK_EVENT_TYPES", "check_evidence_link", "run_evidence_link"]

#: The evidence event of each mode, and the DAG stage it is (the stage table's).
EVIDENCE_EVENTS = EVIDENCE_STAGE
#: The payloads the check parses.
LINK_EVENT_TYPES = frozenset({RetrievalCompleted.TYPE, *EVIDENCE_EVENTS})


def _selected(payload: Any) -> list[Any] | None:
    """The selected candidates of a ``qa.retrieval_completed`` payload (its ``retrieval``
    record), in order; None for a payload that is not the shape the pipeline writes."""
    retrieval = payload.get("retrieval") if isinstance(payload, dict) else None
    candidates = retrieval.get("candidates") if isinstance(retrieval, dict) else None
    if not isinstance(candidates, list):
        return None
    out = []
    for c in candidates:
        if not isinstance(c, dict):
            return None
        if c.get("decision") == "selected":
            out.append(c)
    return out


def check_evidence_link(
    run_id: str,
    retrieval: RecordedEvent,
    evidence: RecordedEvent,
    data: Callable[[RecordedEvent], Any],
    kind: str = "deep",
) -> list[Divergence]:
    """Each item of ``evidence``'s payload against the selected candidate of
    ``retrieval`` at the same position: the ``evidence_hash`` must be its ``chunk_hash``,
    and there must be as many of each. ``data`` parses a payload (a
    :class:`~aborist.audit.checks.run_events.RunEvents` passes its cache). Every mismatch is one
    divergence at the evidence event, naming the pointer and both hashes."""
    stage = EVIDENCE_EVENTS[evidence.type]
    out: list[Divergence] = []

    def diverge(expected: str, found: str, detail: str) -> None:
        out.append(Divergence(kind, evidence.seq, run_id, stage, expected, found, detail))

    selected = _selected(data(retrieval))
    payload = data(evidence)
    items = payload.get("evidence") if isinstance(payload, dict) else None
    if selected is None or not isinstance(items, list):
        diverge(
            "a retrieval record and an evidence list as the pipeline records them",
            clip(f"candidates {type(selected).__name__}, evidence {type(items).__name__}"),
            f"retrieval at seq {retrieval.seq}",
        )
        return out
    for i, item in enumerate(items):
        record = item if isinstance(item, dict) else {}
        pointer = clip(record.get("pointer_id", f"#{i + 1}"))
        found = record.get("evidence_hash")
        if i >= len(selected):
            diverge(
                "no evidence item past the selected candidates",
                clip(found),
                f"evidence {pointer}: {RetrievalCompleted.TYPE} (seq {retrieval.seq}) selected "
                f"{len(selected)} chunks",
            )
            continue
        want = selected[i].get("chunk_hash")
        if found != want:
            diverge(
                clip(want),
                clip(found),
                f"evidence {pointer}: evidence_hash is not the chunk_hash of selected "
                f"candidate {i + 1} of {RetrievalCompleted.TYPE} (seq {retrieval.seq})",
            )
    if len(selected) > len(items):
        missing = selected[len(items)]
        diverge(
            clip(missing.get("chunk_hash")),
            "no evidence item",
            f"selected candidate {len(items) + 1} of {RetrievalCompleted.TYPE} "
            f"(seq {retrieval.seq}) has no evidence item",
        )
    return out


def run_evidence_link(run: RunEvents, kind: str = "deep") -> list[Divergence]:
    """:func:`check_evidence_link` for ``run``'s last retrieval record and evidence event,
    where it has both (nothing otherwise)."""
    retrieval = run.last(RetrievalCompleted.TYPE)
    if retrieval is None:
        return []
    for type_ in EVIDENCE_EVENTS:
        evidence = run.last(type_)
        if evidence is not None:
            return check_evidence_link(run.run_id, retrieval, evidence, run.data, kind)
    return []
