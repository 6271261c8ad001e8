"""Anchor-class warrants (docs/verifier.md): hard check 7 of the claim lattice.

A warrant asks one lexical question: do the *anchors* of a claim (the words a reader would
check first) appear in the evidence the claim cites? Six classes, each switched on by the
shape of the question (or, for dates and negation, of the claim), each applicable only
when the claim has at least one anchor of its class:

=============  ==========================================  ====================================
class          switched on by                              passes when
=============  ==========================================  ====================================
proper_noun    question has who/whom/whose/which or        >= 1 Title-Case anchor of the claim
               relation/related                            occurs in some cited evidence
date           claim has a 4-digit year and a month name   year, month and day (if any) all
                                                           occur in one cited evidence
entity_list    question asks for a list (list / name the   >= 1 named entity occurs in some
               / which … are / what are the)               cited evidence; else DEMOTE
count          question has "how many" / "number of" /     the claim's count occurs in digit or
               "how much"                                  word form (7 == seven)
cause          question has "why" / "what caused" /        >= 1 cause anchor (proper noun or
               "reason"                                    >= 5-letter non-stopword) occurs
negation       claim has a negation cue (not, no, never,   the cited sentence that holds most
               n't, cannot, without, neither, nor, …)      of the claim's content words has
                                                           a negation cue too
=============  ==========================================  ====================================

Negation words are stopwords, so coverage (check 5) cannot see them: without the
``negation`` class, "X does not cause Y" was supported by "X causes Y". The reverse (an
affirmative claim from a negated sentence) is not checked: negation cues are common in
evidence sentences for reasons that have nothing to do with the claim.

No NLI and no embeddings: every test is a token-sequence match over canonicalized text
(:func:`aborist.verify.text.textcanon.match_form`). ``entity_list`` demotes (the claim can still be
verified, but not at verbatim grade) instead of rejecting: lists are often legitimately
partial.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aborist.verify.evidence import EvidenceObject
from aborist.verify.text.textcanon import NUMBER_WORDS, STOPWORDS, canonicalize, match_form, tokens

__all__ = [
    "WARRANT_DEMOTE",
    "WARRANT_FAIL",
    "WARRANT_NOT_APPLICABLE",
    "WARRANT_PASS",
    "WarrantResult",
    "check_warrant",
    "date_components",
    "proper_nouns",
    "question_shapes",
]

WARRANT_PASS = "pass"
WARRANT_FAIL = "fail"
WARRANT_DEMOTE = "demote"
WARRANT_NOT_APPLICABLE = "n/a"

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_RUN_GAP = re.compile(r"^(?: |-|\. | & )$")
_CONNECTORS = frozenset(
    {
        "of",
        "for",
        "de",
        "la",
        "le",
        "van",
        "von",
        "der",
        "den",
        "du",
        "del",
        "da",
        "di",
        "&",
        "the",
    }
)

_MONTHS: dict[str, int] = {}
for _i, _names in enumerate(
    [
        ("january", "jan"),
        ("february", "feb"),
        ("march", "mar"),
        ("april", "apr"),
        ("may",),
        ("june", "jun"),
        ("july", "jul"),
        ("august", "aug"),
        ("september", "sep", "sept"),
        ("october", "oct"),
        ("november", "nov"),
        ("december", "dec"),
    ],
    start=1,
):
    for _n in _names:
        _MONTHS[_n] = _i
_FULL_MONTHS = {n for n in _MONTHS if len(n) > 4 or n in {"may", "june", "july"}}
_YEAR = re.compile(r"^(?:1[0-9]{3}|20[0-9]{2})$")
_DAY = re.compile(r"^(?:[1-9]|[12][0-9]|3[01])(?:st|nd|rd|th)?$")
_WORD_OF_DIGITS = {v: k for k, v in NUMBER_WORDS.items() if k != "dozen"}

_SHAPES: dict[str, re.Pattern[str]] = {
    "proper_noun": re.compile(r"\b(?:who|whom|whose|which|relation|relationship|related)\b", re.I),
    "entity_list": re.compile(
        r"\b(?:list|name the|name all|which \w+ (?:are|were)|what are the|what were the)\b", re.I
    ),
    "count": re.compile(r"\b(?:how many|number of|how much)\b", re.I),
    "cause": re.compile(r"\b(?:why|what caused|reason)\b", re.I),
}


@dataclass(frozen=True)
class WarrantResult:
    """Outcome of hard check 7: ``status`` plus what each class found."""

    status: str
    classes: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "classes": list(self.classes),
            "reasons": list(self.reasons),
        }


def question_shapes(question: str | None) -> tuple[str, ...]:
    """The question-switched warrant classes that apply (sorted)."""
    if not question:
        return ()
    q = canonicalize(question)
    return tuple(sorted(name for name, rx in _SHAPES.items() if rx.search(q)))


def proper_nouns(text: str, *, multi_word_only: bool = False) -> list[str]:
    """Title-Case anchor runs of ``text``, in order, without duplicates.

    A run is a sequence of capitalized words separated only by a space, a hyphen or an
    initial's ". "; lower-case connectors (of, for, de, van, the, and …) may sit inside a
    run. Leading and trailing stopwords are trimmed (so sentence-initial "The" is not an
    anchor). ``multi_word_only`` keeps runs of two or more words (the entity strategy).
    """
    canon = canonicalize(text)
    runs: list[list[re.Match[str]]] = []
    current: list[re.Match[str]] = []
    pending: list[re.Match[str]] = []
    prev_end = -1
    for m in _WORD.finditer(canon):
        w = m.group()
        gap_ok = prev_end >= 0 and _RUN_GAP.match(canon[prev_end : m.start()]) is not None
        if w[0].isupper():
            if current and gap_ok:
                current.extend(pending)
                current.append(m)
            else:
                if current:
                    runs.append(current)
                current = [m]
            pending = []
        elif current and gap_ok and w.lower() in _CONNECTORS and not pending:
            pending = [m]
        else:
            if current:
                runs.append(current)
            current, pending = [], []
        prev_end = m.end()
    if current:
        runs.append(current)
    out: dict[str, None] = {}
    for run in runs:
        while run and run[0].group().lower() in STOPWORDS:
            run = run[1:]
        while run and run[-1].group().lower() in STOPWORDS:
            run = run[:-1]
        if not run or (multi_word_only and len(run) < 2):
            continue
        out.setdefault(canon[run[0].start() : run[-1].end()], None)
    return list(out)


def date_components(text: str) -> list[dict[str, int]]:
    """Dates in ``text`` that carry a 4-digit year and a month name (day optional)."""
    toks = tokens(text)
    years = [t for t in toks if len(t) == 4 and _YEAR.match(t)]
    if not years:
        return []
    found: list[dict[str, int]] = []
    for i, t in enumerate(toks):
        if t not in _FULL_MONTHS:
            continue
        comp: dict[str, int] = {"month": _MONTHS[t]}
        for j in (i + 1, i - 1):
            if 0 <= j < len(toks) and _DAY.match(toks[j]):
                comp["day"] = int(re.sub(r"\D", "", toks[j]))
                break
        near_year = any(_YEAR.match(toks[j]) for j in (i + 1, i - 1) if 0 <= j < len(toks))
        if t == "may" and "day" not in comp and not near_year:
            continue  # the modal verb, not the month
        year = next(
            (toks[j] for j in range(i + 1, min(len(toks), i + 4)) if _YEAR.match(toks[j])), None
        )
        if year is None:
            year = next(
                (toks[j] for j in range(i - 1, max(-1, i - 4), -1) if _YEAR.match(toks[j])),
                years[0],
            )
        comp["year"] = int(year)
        found.append(comp)
    return found


def _in_any(anchor: str, cited: Sequence[EvidenceObject]) -> bool:
    form = match_form(tokens(anchor))
    return form.strip() != "" and any(form in ev.form for ev in cited)


def _date_in(comp: dict[str, int], ev: EvidenceObject) -> bool:
    if str(comp["year"]) not in ev.token_set:
        return False
    if not any(name in ev.token_set for name, m in _MONTHS.items() if m == comp["month"]):
        return False
    if "day" in comp:
        day = str(comp["day"])
        return any(t in ev.token_set for t in (day, day + "st", day + "nd", day + "rd", day + "th"))
    return True


def _count_token(claim_toks: list[str]) -> str | None:
    for t in claim_toks:
        if t.replace(",", "").isdigit() or t in NUMBER_WORDS:
            return t
    return None


def _count_forms(tok: str) -> set[str]:
    digits = tok.replace(",", "")
    if digits.isdigit():
        forms = {tok, digits, f"{int(digits):,}"}
        if digits in _WORD_OF_DIGITS:
            forms.add(_WORD_OF_DIGITS[digits])
        return forms
    return {tok, NUMBER_WORDS[tok]}


#: Negation cues, matched case-insensitively (on the claim as written and on canonical
#: evidence text; ``n’t`` with a typographic apostrophe too).
_NEGATION = re.compile(
    r"(?i)\b(?:not|no|never|cannot|none|nobody|nothing|nowhere|neither|nor|without)\b"
    r"|n['\u2019]t\b"
)
#: A sentence ends at ``. ! ? ;`` before a capital, a digit or an opening quote or
#: bracket: ``U.S. states`` and ``i.e. growing`` stay whole.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9\"'(\[])")


def _best_sentence(claim_toks: Sequence[str], cited: Sequence[EvidenceObject]) -> str | None:
    """The sentence of the cited objects holding the most distinct content words of the
    claim (ties: the first); ``None`` when no sentence holds any."""
    wanted = {t for t in claim_toks if t not in STOPWORDS}
    best, best_n = None, 0
    for ev in cited:
        for sentence in _SENTENCE_END.split(ev.canonical_text):
            n = len(wanted.intersection(tokens(sentence)))
            if n > best_n:
                best, best_n = sentence, n
    return best


def check_warrant(
    claim: str, cited: Sequence[EvidenceObject], question: str | None = None
) -> WarrantResult:
    """Run every applicable anchor class; FAIL beats DEMOTE beats PASS."""
    shapes = set(question_shapes(question))
    claim_toks = tokens(claim)
    classes: list[str] = []
    fails: list[str] = []
    demotes: list[str] = []
    nouns = proper_nouns(claim) if shapes & {"proper_noun", "entity_list", "cause"} else []

    if "proper_noun" in shapes and nouns:
        classes.append("proper_noun")
        if not any(_in_any(n, cited) for n in nouns):
            fails.append(f"proper_noun: none of {nouns} occurs in the cited evidence")
    dates = date_components(claim)
    if dates:
        classes.append("date")
        for comp in dates:
            if not any(_date_in(comp, ev) for ev in cited):
                shown = "-".join(str(comp[k]) for k in ("year", "month", "day") if k in comp)
                fails.append(
                    f"date: {shown} (year, month, day) does not occur in one cited evidence"
                )
    if "entity_list" in shapes and nouns:
        classes.append("entity_list")
        if not any(_in_any(n, cited) for n in nouns):
            demotes.append(f"entity_list: none of {nouns} occurs in the cited evidence")
    count = _count_token(claim_toks) if "count" in shapes else None
    if count is not None:
        classes.append("count")
        forms = _count_forms(count)
        if not any(f in ev.token_set for ev in cited for f in forms):
            fails.append(f"count: {count!r} occurs in no cited evidence in digit or word form")
    if "cause" in shapes:
        anchors = nouns + [
            t for t in claim_toks if len(t) >= 5 and t not in STOPWORDS and t.isalpha()
        ]
        if anchors:
            classes.append("cause")
            if not any(_in_any(a, cited) for a in anchors):
                fails.append("cause: no cause anchor of the claim occurs in the cited evidence")

    if _NEGATION.search(claim):
        classes.append("negation")
        form = match_form(claim_toks)  # verbatim: its negation is in the evidence with it
        sentence = (
            None if any(form in ev.form for ev in cited) else _best_sentence(claim_toks, cited)
        )
        if sentence is not None and not _NEGATION.search(sentence):
            fails.append(
                "negation: the claim is negated but the cited sentence that holds most of it "
                f"is not ({sentence[:80]!r})"
            )

    if fails:
        status = WARRANT_FAIL
    elif demotes:
        status = WARRANT_DEMOTE
    elif classes:
        status = WARRANT_PASS
    else:
        status = WARRANT_NOT_APPLICABLE
    return WarrantResult(status, tuple(classes), tuple(fails + demotes))
