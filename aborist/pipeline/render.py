"""Rendering: the answer as the user sees it, with its citations (pure).

Each citation is one evidence object that a *verified* unit relied on, with the spotlight
excerpt for the units that cite it, so the printed answer shows the exact source text that
supports it. Pure function of (answer, verdict, evidence): ``replay --deep`` re-runs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aborist.verify.evidence import EvidenceObject, spotlight

__all__ = ["RENDER_VERSION", "render_answer"]

RENDER_VERSION = "render/1"


def render_answer(
    answer: str,
    verdict: Mapping[str, Any],
    evidence: Sequence[EvidenceObject],
    *,
    window: int = 400,
) -> dict[str, Any]:
    """``{"answer", "citations", "units", "render_version"}`` for the recorded verdict."""
    by_id = {ev.evidence_id: ev for ev in evidence}
    by_pointer = {ev.pointer_id: ev for ev in evidence}
    claims: dict[str, list[str]] = {}
    units = []
    for unit in verdict["units"]:
        cited: list[str] = []
        for eid in unit["evidence_ids"]:
            if eid in by_id:
                cited.append(eid)
        for pid in unit["pointer_ids"]:
            ev = by_pointer.get(pid)
            if ev is not None and ev.evidence_id not in cited and unit["verified"]:
                cited.append(ev.evidence_id)
        if unit["verified"]:
            for eid in cited:
                claims.setdefault(eid, []).append(unit["text"])
        units.append(
            {
                "index": unit["index"],
                "text": unit["text"],
                "verified": unit["verified"],
                "grade": unit["grade"],
                "strategy": unit["strategy"],
                "evidence_ids": cited,
            }
        )
    citations = []
    for ev in evidence:  # pointer order, so E1 before E2
        if ev.evidence_id not in claims:
            continue
        citations.append(
            {
                "pointer_id": ev.pointer_id,
                "evidence_id": ev.evidence_id,
                "source_uri": ev.source_uri,
                "title": ev.title,
                "excerpt": spotlight(ev.text, " ".join(claims[ev.evidence_id]), window),
                "units": [u["index"] for u in units if ev.evidence_id in u["evidence_ids"]],
            }
        )
    return {
        "render_version": RENDER_VERSION,
        "answer": answer,
        "citations": citations,
        "units": units,
    }
