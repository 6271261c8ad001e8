"""Contradiction: whether a span says the opposite of the evidence (docs/verifier.md §16;
the inspect sidecar, :mod:`aborist.verify.inspect`, tests it before any repair that keeps
part of a span).

A *contradiction* (:func:`contradiction`) is tested before any repair that keeps part of
the span: a span that says the opposite of a sentence of the evidence is not an artifact
to trim but a claim to drop ("If any of the rules are violated, the program will compile."
against "… the program won't compile." must not become "If any of the rules are
violated,"). A sentence *holds* the span when it has at least
:data:`CONTRADICTION_MIN_COVERAGE` of the span's content words (negation cues and
quantities set aside, at least two of them). The span is contradicted when every sentence
holding it differs from it in polarity (a negation cue — not, no, never, none, without,
cannot, fails to, ``n't`` … — that governs one of the shared words, within
:data:`NEGATION_SCOPE` tokens after it in the same clause, in one and not the other) or in
quantity (the span states a number, count or ordinal, digits and words alike, that the
sentence does not, and the sentence states one the span does not: another value in its
place; a number the sentence simply lacks is unsupported, which the verifier judges) or
in the order of two of its items (two numbers, code tokens or names of one kind the span
puts in the other order than the sentence: :func:`aborist.verify.text.items.item_order`,
docs/verifier.md §19.22 — two items that traded slots).

Pure: functions of the span and the evidence objects.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from aborist.verify.evidence import EvidenceObject
from aborist.verify.text.items import item_order
from aborist.verify.text.textcanon import content_tokens, tokens

__all__ = ["CONTRADICTION_MIN_COVERAGE", "NEGATION_SCOPE", "contradiction"]

CONTRADICTION_MIN_COVERAGE = 0.75
NEGATION_SCOPE = 6

_NEGATION_CUE = re.compile(
    r"(?i)\b(?:not|no|never|cannot|none|nobody|nothing|nowhere|neither|nor|without"
    r"|fails?\s+to|failed\s+to|unable\s+to)\b|\b[^\W\d_]+n['\u2019]t\b"
)
_CUE = "negationcue"
_CLAUSE_BREAK = re.compile(r"[,;:]|\b(?:but|while|whereas)\b", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"(?:(?<=[.!?;])|(?<=[.!?;][\"']))\s+(?=[A-Z0-9\"'(\[])|\n+")
_NUMBER = re.compile(r"^\d+(?:,\d{3})*(?:\.\d+)?$")
_CARDINALS = {
    w: n
    for n, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_CARDINALS |= {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70}
_CARDINALS |= {"eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000}
_CARDINALS |= {"million": 10**6, "billion": 10**9, "dozen": 12, "twice": 2}
_ORDINALS = {
    w: n
    for n, w in enumerate(
        [
            "zeroth",
            "first",
            "second",
            "third",
            "fourth",
            "fifth",
            "sixth",
            "seventh",
            "eighth",
            "ninth",
            "tenth",
            "eleventh",
            "twelfth",
        ]
    )
}
_ORDINAL_DIGITS = re.compile(r"^(\d+)(?:st|nd|rd|th)$")


def _quantities(toks: Sequence[str]) -> frozenset[tuple[str, float]]:
    """Numbers, counts and ordinals of a token list, digits and words as one value."""
    out: set[tuple[str, float]] = set()
    for t in toks:
        if _NUMBER.match(t):
            out.add(("n", float(t.replace(",", ""))))
        elif t in _CARDINALS:
            out.add(("n", float(_CARDINALS[t])))
        elif t in _ORDINALS:
            out.add(("o", float(_ORDINALS[t])))
        elif (m := _ORDINAL_DIGITS.match(t)) is not None:
            out.add(("o", float(m.group(1))))
    return frozenset(out)


def _core(text: str) -> tuple[str, list[str], frozenset[str]]:
    """``text`` with its negation cues marked, its tokens, and its content words that are
    not quantities: what a claim and a sentence must share before their polarity and
    numbers are compared."""
    marked = _NEGATION_CUE.sub(f" {_CUE} ", text)
    toks = tokens(marked)
    words = frozenset(
        t
        for t in content_tokens(toks)
        if t != _CUE and not _quantities([t]) and t not in {"t", "s"}
    )
    return marked, toks, words


def _negated(marked: str, shared: frozenset[str]) -> bool:
    """Whether a negation cue governs one of the ``shared`` words: one follows it within
    :data:`NEGATION_SCOPE` tokens, in the same clause (a clause ends at ``, ; :`` and at
    "but", "while", "whereas")."""
    for clause in _CLAUSE_BREAK.split(marked):
        toks = tokens(clause)
        for i, t in enumerate(toks):
            if t == _CUE and shared.intersection(toks[i + 1 : i + 1 + NEGATION_SCOPE]):
                return True
    return False


def contradiction(
    span: str, evidence: Sequence[EvidenceObject]
) -> tuple[str, dict[str, Any]] | None:
    """``(kind, details)`` when ``span`` contradicts the evidence sentences that hold it
    (the rule in the module docstring), else ``None``. A span of several sentences is
    contradicted when one of them is. Pure."""
    parts = [p.strip(' "') for p in _SENTENCE_BREAK.split(span)]
    parts = [p for p in parts if p]
    if len(parts) > 1:
        for part in parts:
            found = _contradicted_sentence(part, evidence)
            if found is not None:
                return found
        return None
    return _contradicted_sentence(span, evidence)


def _contradicted_sentence(
    span: str, evidence: Sequence[EvidenceObject]
) -> tuple[str, dict[str, Any]] | None:
    span_marked, span_toks, span_words = _core(span)
    if len(span_words) < 2:
        return None
    span_qty = _quantities(span_toks)
    found: tuple[float, str, dict[str, Any]] | None = None
    for ev in evidence:
        for sentence in _SENTENCE_BREAK.split(ev.canonical_text):
            marked, toks, words = _core(sentence)
            shared = span_words & words
            coverage = len(shared) / len(span_words)
            if coverage < CONTRADICTION_MIN_COVERAGE:
                continue
            claim_neg, source_neg = _negated(span_marked, shared), _negated(marked, shared)
            sentence_qty = _quantities(toks)
            # a number the sentence does not state is unsupported, not contradicted: a
            # mismatch needs the sentence to give another value in its place
            missing = span_qty - sentence_qty if sentence_qty - span_qty else frozenset()
            swapped = item_order(span, sentence) if claim_neg == source_neg else ""
            if claim_neg == source_neg and not missing and not swapped:
                return None  # one sentence holds the span with its polarity, numbers, order
            details: dict[str, Any] = {
                "evidence_id": ev.evidence_id,
                "pointer_id": ev.pointer_id,
                "sentence": sentence.strip(),
                "coverage": round(coverage, 4),
            }
            if claim_neg != source_neg:
                kind = "contradicted_polarity"
                details["claim_negated"] = claim_neg
                details["evidence_negated"] = source_neg
            elif missing:
                kind = "mismatched_quantity"
                details["claim_quantities"] = sorted(_show(q) for q in missing)
                details["evidence_quantities"] = sorted(_show(q) for q in sentence_qty)
            else:
                kind = "swapped_items"
                details["order"] = swapped
            if found is None or coverage > found[0]:
                found = (coverage, kind, details)
    return (found[1], found[2]) if found is not None else None


def _show(q: tuple[str, float]) -> str:
    kind, value = q
    text = str(int(value)) if value == int(value) else str(value)
    return f"ordinal {text}" if kind == "o" else text
