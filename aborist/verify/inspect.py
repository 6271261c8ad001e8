"""The inspect sidecar (docs/verifier.md §16; docs/repair.md for the repair actions).

For every unit that kept the answer from STRICT (unverified, or verified only at partial
grade) it diagnoses *spans*: each quotation that is not verbatim, or — for a unit without
a failing quotation — the unit text. Each span gets exactly one ``kind``, tried in this
order, and the ``repair`` action the repair stage (``qa.repair.mechanical_repair``) keys on:

=================================  ==========================  ==========  =====================
kind                               test                        repair      mechanical
=================================  ==========================  ==========  =====================
verbatim_in_base                   span occurs verbatim in     cite_evidence     no
                                   some evidence object
verbatim_in_raw_only               occurs only in a raw        extend_evidence   no
                                   (pre-trim) source text
synthetic_elision_inside_quote     quote holds ``...``/``[...]``  split_elision  yes
                                   and every piece is verbatim
contradicted_polarity              a sentence of the evidence  drop_claim  yes
                                   holds the span's words but
                                   with the other polarity
mismatched_quantity                ... but another number,      drop_claim  yes
                                   count or ordinal
swapped_items                      ... but two of its numbers,  drop_claim  yes
                                   names or code tokens in
                                   the other order
trailing_artifact                  a prefix cut at punctuation  drop_trailing_artifact  yes
                                   is verbatim and covers
                                   >= half the span's tokens
include_aside_for_verbatim         span = A B, source has       include_aside  no
                                   A <aside> B, aside starts
                                   with ( [ , - ; : and has
                                   <= aside_max_tokens tokens
paraphrase                         one object covers >= 85 %    requote_from_source  no
                                   of its content tokens
partial_paraphrase                 >= 50 %                      reprompt     no
no_overlap                         below that                   drop_line    yes
=================================  ==========================  ==========  =====================

A *contradiction* (:func:`aborist.verify.rules.contradiction.contradiction`) is tested before any
repair that keeps part of the span: a span that says the opposite of a sentence of the
evidence is not an artifact to trim but a claim to drop (the rule is in that module).

Plus *deflection* (subject-anchor heuristic): the question's anchors (its Title-Case runs,
else its content words of 5+ letters) must reappear in an answer of at least
``deflection_min_answer_tokens`` tokens; an answer that mentions none of them is flagged
as a possible topic shift.

Read-only by construction: pure functions returning new objects; nothing here writes,
and nothing here changes a verdict or a label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aborist.verify.evidence import EvidenceObject, spotlight
from aborist.verify.policy import DEFAULT_POLICY, VerifierPolicy
from aborist.verify.rules.contradiction import contradiction
from aborist.verify.rules.warrant import proper_nouns
from aborist.verify.text.textcanon import (
    canonicalize,
    content_tokens,
    match_form,
    token_spans,
    tokens,
)
from aborist.verify.units import GRADE_VERBATIM, best_coverage, extract_quotes, verbatim_in
from aborist.verify.verify import VERIFIER_VERSION, Verdict

__all__ = [
    "CONTRADICTION_KINDS",
    "DIAGNOSIS_KINDS",
    "REPAIR_ACTIONS",
    "Deflection",
    "InspectReport",
    "SpanDiagnosis",
    "classify_span",
    "contradiction",
    "detect_deflection",
    "inspect_answer",
]

REPAIR_ACTIONS: dict[str, tuple[str, bool]] = {
    "verbatim_in_base": ("cite_evidence", False),
    "verbatim_in_raw_only": ("extend_evidence", False),
    "synthetic_elision_inside_quote": ("split_elision", True),
    "contradicted_polarity": ("drop_claim", True),
    "mismatched_quantity": ("drop_claim", True),
    "swapped_items": ("drop_claim", True),
    "trailing_artifact": ("drop_trailing_artifact", True),
    "include_aside_for_verbatim": ("include_aside", False),
    "paraphrase": ("requote_from_source", False),
    "partial_paraphrase": ("reprompt", False),
    "no_overlap": ("drop_line", True),
}
DIAGNOSIS_KINDS = tuple(REPAIR_ACTIONS)
CONTRADICTION_KINDS = ("contradicted_polarity", "mismatched_quantity", "swapped_items")

_ELISION = re.compile(r"\s*(?:\[\s*\.\.\.\s*\]|\(\s*\.\.\.\s*\)|\.\.\.)\s*")
_CUT = re.compile(r"(?<=[.;:,!?])\s|\s(?=[(\[])|\s-\s")
_ASIDE_OPENERS = ("(", "[", ",", "-", ";", ":")
_QUESTION_WORDS = frozenset({"which", "what", "where", "when", "whose", "there"})


@dataclass(frozen=True)
class SpanDiagnosis:
    """One diagnosed span and the repair the seed-001 stage may apply."""

    unit: int
    line_no: int
    span: str
    is_quote: bool
    unit_status: str
    kind: str
    repair: str
    mechanical: bool
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "line_no": self.line_no,
            "span": self.span,
            "is_quote": self.is_quote,
            "unit_status": self.unit_status,
            "kind": self.kind,
            "repair": self.repair,
            "mechanical": self.mechanical,
            "details": self.details,
        }


@dataclass(frozen=True)
class Deflection:
    """Whether the answer kept to the question's subject."""

    status: str
    anchors: tuple[str, ...] = ()
    matched: tuple[str, ...] = ()

    @property
    def deflected(self) -> bool:
        return self.status == "deflected"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "deflected": self.deflected,
            "anchors": list(self.anchors),
            "matched": list(self.matched),
        }


@dataclass(frozen=True)
class InspectReport:
    """Diagnoses for every non-verbatim unit plus the deflection check."""

    audit_mode: str
    diagnoses: tuple[SpanDiagnosis, ...]
    deflection: Deflection
    verifier_version: str = VERIFIER_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "verifier_version": self.verifier_version,
            "audit_mode": self.audit_mode,
            "diagnoses": [d.to_dict() for d in self.diagnoses],
            "deflection": self.deflection.to_dict(),
        }


def _pointer_ids(ids: Sequence[str], evidence: Sequence[EvidenceObject]) -> list[str]:
    wanted = set(ids)
    return [ev.pointer_id for ev in evidence if ev.evidence_id in wanted]


def _elision(span: str, evidence: Sequence[EvidenceObject]) -> dict[str, Any] | None:
    if not _ELISION.search(span):
        return None
    pieces = [p.strip(" ,;") for p in _ELISION.split(span)]
    pieces = [p for p in pieces if content_tokens(tokens(p))]
    if len(pieces) < 2 or not all(verbatim_in(p, evidence) for p in pieces):
        return None
    return {"pieces": pieces, "replacement": " ... ".join(f'"{p}"' for p in pieces)}


def _trailing(
    span: str, evidence: Sequence[EvidenceObject], policy: VerifierPolicy
) -> dict[str, Any] | None:
    total = len(tokens(span))
    for m in reversed(list(_CUT.finditer(span))):
        keep = span[: m.start()].rstrip(" -")
        keep_toks = tokens(keep)
        if len(content_tokens(keep_toks)) < policy.trailing_prefix_min_content_tokens:
            continue
        if 2 * len(keep_toks) < total:
            return None
        ids = verbatim_in(keep, evidence)
        if ids:
            return {"keep": keep, "drop": span[m.start() :].strip(), "evidence_ids": list(ids)}
    return None


def _aside(
    span: str, evidence: Sequence[EvidenceObject], policy: VerifierPolicy
) -> dict[str, Any] | None:
    toks = tokens(span)
    if len(toks) < 2:
        return None
    for ev in evidence:
        spans = None
        for k in range(1, len(toks)):
            head, tail = toks[:k], toks[k:]
            form = match_form(head)
            pos = ev.form.find(form)
            while pos != -1:
                idx = ev.form.count(" ", 0, pos)
                after = idx + k
                for gap in range(1, policy.aside_max_tokens + 1):
                    if list(ev.token_list[after + gap : after + gap + len(tail)]) == tail:
                        spans = spans or token_spans(ev.canonical_text)
                        aside = ev.canonical_text[spans[after - 1][2] : spans[after + gap][1]]
                        if aside.strip().startswith(_ASIDE_OPENERS):
                            last = spans[after + gap + len(tail) - 1][2]
                            return {
                                "source_span": ev.canonical_text[spans[idx][1] : last],
                                "aside": aside.strip(),
                                "evidence_id": ev.evidence_id,
                                "pointer_id": ev.pointer_id,
                            }
                pos = ev.form.find(form, pos + 1)
    return None


def classify_span(
    span: str,
    evidence: Sequence[EvidenceObject],
    *,
    is_quote: bool = False,
    raw_evidence: Sequence[str] | None = None,
    policy: VerifierPolicy | None = None,
) -> tuple[str, dict[str, Any]]:
    """The ``(kind, details)`` of one span, by the ordered tests in the module docstring."""
    pol = policy if policy is not None else DEFAULT_POLICY
    span = canonicalize(span)
    ids = verbatim_in(span, evidence)
    if ids:
        return "verbatim_in_base", {
            "evidence_ids": list(ids),
            "pointer_ids": _pointer_ids(ids, evidence),
        }
    if raw_evidence:
        form = match_form(tokens(span))
        for i, raw in enumerate(raw_evidence):
            if form != " " and form in match_form(tokens(raw)):
                return "verbatim_in_raw_only", {"raw_index": i}
    if is_quote:
        elided = _elision(span, evidence)
        if elided is not None:
            return "synthetic_elision_inside_quote", elided
    contradicted = contradiction(span, evidence)
    if contradicted is not None:
        return contradicted
    trailing = _trailing(span, evidence, pol)
    if trailing is not None:
        trailing["pointer_ids"] = _pointer_ids(trailing["evidence_ids"], evidence)
        return "trailing_artifact", trailing
    aside = _aside(span, evidence, pol)
    if aside is not None:
        return "include_aside_for_verbatim", aside
    cov, best = best_coverage(content_tokens(tokens(span)), evidence)
    if best and cov >= pol.partial_paraphrase_min_coverage:
        ev = next(e for e in evidence if e.evidence_id == best[0])
        details = {
            "coverage": round(cov, 4),
            "evidence_id": ev.evidence_id,
            "pointer_id": ev.pointer_id,
            "excerpt": spotlight(ev.text, span, pol.spotlight_window),
        }
        kind = "paraphrase" if cov >= pol.paraphrase_min_coverage else "partial_paraphrase"
        return kind, details
    return "no_overlap", {"coverage": round(cov, 4)}


def detect_deflection(
    answer: str, question: str | None, policy: VerifierPolicy | None = None
) -> Deflection:
    """Subject-anchor heuristic: does a long enough answer mention any question anchor?"""
    pol = policy if policy is not None else DEFAULT_POLICY
    if not question:
        return Deflection("not_applicable")
    anchors = [a for a in proper_nouns(question) if a.lower() not in _QUESTION_WORDS]
    if not anchors:
        anchors = sorted(
            {t for t in content_tokens(tokens(question)) if len(t) >= 5 and t.isalpha()}
        )
    answer_toks = tokens(answer)
    if not anchors or len(answer_toks) < pol.deflection_min_answer_tokens:
        return Deflection("not_applicable", tuple(anchors))
    answer_form = match_form(answer_toks)
    matched = tuple(a for a in anchors if match_form(tokens(a)) in answer_form)
    return Deflection("on_topic" if matched else "deflected", tuple(anchors), matched)


def inspect_answer(
    answer: str,
    evidence: Sequence[EvidenceObject],
    verdict: Verdict,
    *,
    raw_evidence: Sequence[str] | None = None,
    question: str | None = None,
    policy: VerifierPolicy | None = None,
) -> InspectReport:
    """Diagnose every unit of ``verdict`` that is not verified at verbatim grade."""
    pol = policy if policy is not None else DEFAULT_POLICY
    evidence = [ev for ev in evidence if pol.role_allowed(ev.source_role)]
    diagnoses: list[SpanDiagnosis] = []
    for unit in verdict.units:
        if unit.verified and unit.grade == GRADE_VERBATIM:
            continue
        status = "partial" if unit.verified else "unverified"
        quotes = [q for q in extract_quotes(unit.text) if not verbatim_in(q, evidence)]
        spans = [(q, True) for q in quotes] or [(unit.text, False)]
        for span, is_quote in spans:
            kind, details = classify_span(
                span, evidence, is_quote=is_quote, raw_evidence=raw_evidence, policy=pol
            )
            action, mechanical = REPAIR_ACTIONS[kind]
            diagnoses.append(
                SpanDiagnosis(
                    unit=unit.index,
                    line_no=unit.line_no,
                    span=span,
                    is_quote=is_quote,
                    unit_status=status,
                    kind=kind,
                    repair=action,
                    mechanical=mechanical,
                    details=details,
                )
            )
    return InspectReport(
        audit_mode=verdict.audit_mode,
        diagnoses=tuple(diagnoses),
        deflection=detect_deflection(answer, question, pol),
    )
