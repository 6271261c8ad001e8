"""Strategies 1–4 of the layered verifier (seed 000, section `qa.verify`): quote, span,
entity, paraphrase. The first strategy that applies classifies the unit.

* **quote** applies to every unit holding a ``"…"`` quotation with a content token, and is
  authoritative: a quotation asserts verbatim text, so a quote that is not verbatim makes
  the unit unsupported (``QUOTE_NOT_VERBATIM``) instead of falling through to weaker
  strategies.
* **span** — the unit's whole token sequence occurs in one evidence object: verbatim grade.
* **entity** — a multi-word proper noun of the unit occurs in evidence (with two or more,
  two must occur within ``entity_proximity_chars`` of each other in one object): partial.
* **paraphrase** — prose-shaped unit whose distinct content tokens are covered >= 85 % by
  one evidence object: partial.

Only quote and span give verbatim grade; entity and paraphrase can never make an answer
STRICT.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from aborist.verify.evidence import EvidenceObject
from aborist.verify.policy import VerifierPolicy
from aborist.verify.textcanon import canonicalize, content_tokens, match_form, tokens
from aborist.verify.units import (
    GRADE_NONE,
    GRADE_PARTIAL,
    GRADE_VERBATIM,
    SEVERITY_ADVISORY,
    SEVERITY_BLOCKING,
    Unit,
    UnitVerdict,
    Violation,
    best_coverage,
    extract_quotes,
    frame_tokens,
    verbatim_in,
)
from aborist.verify.warrant import proper_nouns

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")

__all__ = ["ATTRIBUTION_CUES", "classify_prose_unit", "is_title_span", "quote_grade"]


ATTRIBUTION_CUES: frozenset[str] = frozenset(
    """
    according accordance add added adds argue argued argues claim claimed claims declare
    declared declares describe described describes explain explained explains mention
    mentioned mentions note noted notes put puts quote quoted quotes read reads report
    reported reports said say says state stated states write writes written wrote
    article book chapter docs document documentation evidence excerpt faq guide handbook
    manual page paper passage reference section source spec specification standard study
    text tutorial
    """.split()  # noqa: SIM905
)


def quote_grade(
    text: str, evidence: Sequence[EvidenceObject], policy: VerifierPolicy
) -> tuple[str, tuple[str, ...], list[str]]:
    """Grade a unit holding quotations against ``evidence``.

    Returns ``(grade, evidence_ids, reasons)``:

    * none — some quotation does not occur verbatim in any object;
    * verbatim — every quotation occurs verbatim and either the whole unit occurs verbatim,
      or the *frame* (content tokens outside the quotes) is an anchored attribution: it is
      empty, or it holds an attribution cue (said, states, according, wrote …) and at most
      ``quote_frame_max_content_tokens`` other tokens, each present in an object (text or
      title) that supports a quotation;
    * partial — every quotation is verbatim but the frame asserts something of its own
      (``Holly Willoughby was in "Doctor Who"``).
    """
    quotes = extract_quotes(text)
    ids: set[str] = set()
    reasons: list[str] = []
    for q in quotes:
        found = verbatim_in(q, evidence)
        if not found:
            reasons.append(f"QUOTE_NOT_VERBATIM: {q!r}")
        ids.update(found)
    if reasons:
        return GRADE_NONE, tuple(sorted(ids)), reasons
    whole = verbatim_in(text, evidence)
    if whole:
        return (
            GRADE_VERBATIM,
            tuple(sorted(ids | set(whole))),
            ["unit verbatim, quotations included"],
        )
    frame = frame_tokens(text)
    if not frame:
        return GRADE_VERBATIM, tuple(sorted(ids)), ["all quotations verbatim; no frame"]
    cues = [t for t in frame if t in ATTRIBUTION_CUES]
    rest = [t for t in frame if t not in ATTRIBUTION_CUES]
    vocab: set[str] = set()
    for ev in evidence:
        if ev.evidence_id in ids:
            vocab |= ev.token_set
            vocab.update(tokens(ev.title))
    unanchored = sorted({t for t in rest if t not in vocab})
    if not cues:
        reasons.append(f"FRAME_UNVERIFIED: frame {sorted(set(frame))} is not an attribution")
    elif len(rest) > policy.quote_frame_max_content_tokens:
        reasons.append(
            f"FRAME_UNVERIFIED: {len(rest)} frame tokens besides the attribution cue "
            f"(max {policy.quote_frame_max_content_tokens})"
        )
    elif unanchored:
        reasons.append(f"FRAME_UNVERIFIED: frame tokens {unanchored} not in the quoted evidence")
    if reasons:
        return GRADE_PARTIAL, tuple(sorted(ids)), reasons
    return (
        GRADE_VERBATIM,
        tuple(sorted(ids)),
        ["all quotations verbatim; attribution frame anchored"],
    )


def _entity_support(
    unit_text: str, evidence: Sequence[EvidenceObject], policy: VerifierPolicy
) -> tuple[tuple[str, ...], list[str]]:
    entities = proper_nouns(unit_text, multi_word_only=True)
    if not entities:
        return (), []
    forms = [match_form(tokens(e)) for e in entities]
    found = [
        e for e, f in zip(entities, forms, strict=True) if any(f in ev.form for ev in evidence)
    ]
    if not found:
        return (), []
    if len(entities) == 1:
        ids = tuple(sorted(ev.evidence_id for ev in evidence if forms[0] in ev.form))
        return ids, [f"entity {entities[0]!r} occurs in evidence"]
    ids_set: set[str] = set()
    pair = ""
    for ev in evidence:
        positions: list[tuple[int, int]] = []
        for k, f in enumerate(forms):
            start = ev.form.find(f)
            while start != -1:
                positions.append((start, k))
                start = ev.form.find(f, start + 1)
        positions.sort()
        for (p1, k1), (p2, k2) in itertools.pairwise(positions):
            if k1 != k2 and p2 - p1 <= policy.entity_proximity_chars:
                ids_set.add(ev.evidence_id)
                pair = pair or f"{entities[k1]!r} and {entities[k2]!r}"
                break
    if not ids_set:
        return (), []
    return tuple(sorted(ids_set)), [
        f"entities {pair} occur within {policy.entity_proximity_chars} chars"
    ]


def is_title_span(text: str) -> bool:
    """A title made only of stopwords ("And There's More", "The Who"): two or more words,
    every word capitalized. Such a unit may be span-checked although it has no content
    token; a lower-case stopword run ("it is not") may not."""
    words = _WORD.findall(canonicalize(text))
    return len(words) >= 2 and all(w[0].isupper() for w in words)


def classify_prose_unit(
    index: int, unit: Unit, evidence: Sequence[EvidenceObject], policy: VerifierPolicy
) -> UnitVerdict:
    """Run quote → span → entity → paraphrase on one unit; the first that applies wins."""
    text = unit.text
    toks = tokens(text)
    content = content_tokens(toks)

    def verdict(strategy: str, grade: str, ids: tuple[str, ...], reasons: list[str]) -> UnitVerdict:
        violations: list[Violation] = []
        if grade == GRADE_PARTIAL:
            violations.append(
                Violation("PARTIAL_SUPPORT", SEVERITY_ADVISORY, index, f"{strategy}: not verbatim")
            )
        elif grade == GRADE_NONE:
            code = "QUOTE_NOT_VERBATIM" if strategy == "quote" else "UNSUPPORTED"
            violations.append(Violation(code, SEVERITY_BLOCKING, index, "; ".join(reasons)))
        return UnitVerdict(
            index=index,
            text=text,
            strategy=strategy,
            verified=grade != GRADE_NONE,
            grade=grade,
            line_no=unit.line_no,
            evidence_ids=ids,
            reasons=tuple(reasons),
            violations=tuple(violations),
        )

    if extract_quotes(text):
        grade, ids, reasons = quote_grade(text, evidence, policy)
        return verdict("quote", grade, ids, reasons)
    if len(content) >= policy.span_min_content_tokens or is_title_span(text):
        ids = verbatim_in(text, evidence)
        if ids:
            return verdict("span", GRADE_VERBATIM, ids, ["token sequence occurs verbatim"])
    ids, reasons = _entity_support(text, evidence, policy)
    if ids:
        return verdict("entity", GRADE_PARTIAL, ids, reasons)
    if (
        len(toks) >= policy.paraphrase_min_tokens
        and len(set(content)) >= policy.paraphrase_min_content_tokens
    ):
        cov, ids = best_coverage(content, evidence)
        if cov >= policy.paraphrase_min_coverage:
            return verdict("paraphrase", GRADE_PARTIAL, ids, [f"token coverage {cov:.3f}"])
    if not content:
        return verdict("none", GRADE_NONE, (), ["no content token (nothing to check)"])
    return verdict("none", GRADE_NONE, (), ["no strategy found evidence"])
