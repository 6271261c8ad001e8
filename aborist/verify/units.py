"""Answer units, violations and the lexical support primitives the strategies share.

A prose answer (quote mode) is cut into *units*: each line (bullet marker removed) is cut
into sentences at ``.``, ``!`` or ``?`` followed by a space and an upper-case letter,
digit, quote or bracket — never inside a ``"…"`` quotation, and not after an ellipsis, a
one-letter initial or a common abbreviation (Mr., Dr., St., Inc., No., e.g. …). Pointer tags
``[E1]`` are removed first: quote mode ignores them. Lines without any letter or digit are
not units.

Support is decided on match forms (:mod:`aborist.verify.text.textcanon`): a unit's token sequence
either occurs contiguously in an evidence object (verbatim) or it does not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aborist.verify.claims import strip_pointer_tags
from aborist.verify.evidence import EvidenceObject
from aborist.verify.text.textcanon import canonicalize, content_tokens, match_form, tokens

__all__ = [
    "GRADE_NONE",
    "GRADE_PARTIAL",
    "GRADE_VERBATIM",
    "SEVERITY_ADVISORY",
    "SEVERITY_BLOCKING",
    "Unit",
    "UnitVerdict",
    "Violation",
    "best_coverage",
    "extract_quotes",
    "frame_tokens",
    "segment_prose",
    "verbatim_in",
]

GRADE_VERBATIM = "verbatim"
GRADE_PARTIAL = "partial"
GRADE_NONE = "none"
SEVERITY_BLOCKING = "blocking"
SEVERITY_ADVISORY = "advisory"

_QUOTE = re.compile(r'"([^"]+)"')
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")
_HAS_ALNUM = re.compile(r"[^\W_]")
_SENT_END = re.compile(r"(?<!\.\.)[.!?](?=\s+[A-Z0-9\"(\[])")
_ABBREV = frozenset(
    """
    mr mrs ms dr st jr sr vs etc inc co corp ltd no fig prof gen col lt sgt rev u.s e.g
    i.e approx dept est
    """.split()  # noqa: SIM905
)


@dataclass(frozen=True)
class Unit:
    """A piece of the answer that is checked on its own."""

    text: str
    line_no: int


@dataclass(frozen=True)
class Violation:
    """Why a unit (or the whole answer) falls short; ``blocking`` ones mean unsupported."""

    code: str
    severity: str
    unit: int | None
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "unit": self.unit,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class UnitVerdict:
    """How one unit was classified. ``grade`` is verbatim, partial or none."""

    index: int
    text: str
    strategy: str
    verified: bool
    grade: str
    line_no: int
    evidence_ids: tuple[str, ...] = ()
    pointer_ids: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    checks: tuple[tuple[str, str], ...] = ()
    violations: tuple[Violation, ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "line_no": self.line_no,
            "strategy": self.strategy,
            "verified": self.verified,
            "grade": self.grade,
            "evidence_ids": list(self.evidence_ids),
            "pointer_ids": list(self.pointer_ids),
            "reasons": list(self.reasons),
            "checks": [{"check": name, "status": status} for name, status in self.checks],
        }


def _split_sentences(line: str) -> list[str]:
    protected = list(line)
    for m in _QUOTE.finditer(line):
        for i in range(m.start(), m.end()):
            if protected[i] in ".!?":
                protected[i] = "\0"
    masked = "".join(protected)
    pieces: list[str] = []
    start = 0
    for m in _SENT_END.finditer(masked):
        before = masked[start : m.start()].rsplit(" ", 1)[-1].lower().lstrip("(\"'")
        if (len(before) == 1 and before.isalpha()) or before in _ABBREV:
            continue
        pieces.append(line[start : m.end()])
        start = m.end()
    pieces.append(line[start:])
    return [p.strip() for p in pieces if _HAS_ALNUM.search(p)]


def segment_prose(answer: str) -> list[Unit]:
    """Cut a prose answer into units (bullets, then sentences), tags removed."""
    units: list[Unit] = []
    for line_no, raw in enumerate(answer.splitlines(), start=1):
        line = strip_pointer_tags(raw)
        if not _HAS_ALNUM.search(line):
            continue
        units.extend(Unit(s, line_no) for s in _split_sentences(_BULLET.sub("", line)))
    return units


def extract_quotes(text: str) -> list[str]:
    """Double-quoted segments with at least one content token (canonical text)."""
    return [q.strip() for q in _QUOTE.findall(canonicalize(text)) if content_tokens(tokens(q))]


def frame_tokens(text: str) -> list[str]:
    """Content tokens of ``text`` outside its quotations (the quote's *frame*)."""
    return content_tokens(tokens(_QUOTE.sub(" ", canonicalize(text))))


def verbatim_in(text: str, evidence: Sequence[EvidenceObject]) -> tuple[str, ...]:
    """Evidence ids (sorted) of every object in which ``text``'s token sequence occurs."""
    form = match_form(tokens(text))
    if form == " ":
        return ()
    return tuple(sorted({ev.evidence_id for ev in evidence if form in ev.form}))


def best_coverage(
    content: Sequence[str], evidence: Sequence[EvidenceObject]
) -> tuple[float, tuple[str, ...]]:
    """Best single-object share of distinct content tokens present; ties by evidence id."""
    wanted = set(content)
    if not wanted:
        return 0.0, ()
    best = 0.0
    best_ids: list[str] = []
    for ev in evidence:
        cov = len(wanted & ev.token_set) / len(wanted)
        if cov > best:
            best, best_ids = cov, [ev.evidence_id]
        elif cov == best and cov > 0:
            best_ids.append(ev.evidence_id)
    return best, tuple(sorted(best_ids)[:1])
