"""Comparisons the evidence states in figures (docs/verifier.md §19.11).

A choice question whose relation is a comparison over a time ("Who is older, A or B?",
"Which was released first, A or B?") or a count ("Which genus has more species, A or
B?") is not answered by a sentence that merely *names* A: the answer is right only if
the figures the evidence states for A and for B say so. This module

* reads the comparison from the question (:func:`question_comparison`) and its two
  alternatives (:func:`choice_alternatives`);
* finds each alternative's figure (:func:`figure_of`) in the sentences *about* it — the
  sentences it opens as their subject (middle names allowed: ``Lee Mark Ranaldo`` for
  ``Lee Ranaldo``), and the pronoun-led sentences after them — from typed patterns only:
  a life or run parenthetical right after the name (``(born 21 August 1951)``, ``(2
  November 1911 - 18 March 1996)``, ``(1844-1846)``: its start), an event verb of the
  relation with its date (``formed in 1994``, ``launched in September 1997``), a year
  before the kind (``is a 2006 American documentary film``), or for a count a number
  right before the counted noun (``a genus of 48-56 species``, ``four accepted
  species``);
* decides (:func:`decide`): every figure is an *interval* (a year is its whole year, a
  range is its range, "more than 300" is ``[300, ∞)``), an alternative's candidates are
  joined into one interval, and one alternative wins only when its interval lies wholly
  on the winning side of the other's. Overlap, a missing figure or a hedged one
  ("about 40", "c. 1850") decides nothing.

A stray figure only widens an interval: beside the alternative's own figure it can turn a
decision into none, never into the opposite one. :func:`claim_comparison` applies the same
test to a sentence that asserts a comparison ("A is older than B", "A was released before
B", or with the question's alternatives "A was born first").

Pure: functions of the question, the text and the evidence objects.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from aborist.verify.evidence import EvidenceObject
from aborist.verify.text.figures import Figure, count_figures, parenthetical, time_figures
from aborist.verify.text.sentences import continues
from aborist.verify.text.stems import stem
from aborist.verify.text.textcanon import STOPWORDS, canonicalize, tokens

__all__ = [
    "Comparison",
    "Figure",
    "choice_alternatives",
    "claim_comparison",
    "compare_alternatives",
    "decide",
    "figure_of",
    "names_alternative",
    "question_comparison",
]


def _stems(words: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words.split())


#: Ages: the earlier origin is the older.
_OLDER = frozenset(["older", "oldest", "elder", "eldest"])
_YOUNGER = frozenset(["younger", "youngest"])
#: Order words after an event verb ("born first", "released earlier").
_EARLY = frozenset(["first", "earlier", "earliest", "sooner"])
_LATE = frozenset(["later", "latest", "last", "newer", "newest"])
#: Events that start a thing's existence, and events that make it public. A question's
#: event word admits the dates of its own group's verbs (and of its own word).
_ORIGIN = _stems(
    "born founded formed established started began begun created incorporated opened built "
    "constructed"
)
_RELEASE = _stems("released published launched introduced premiered debuted available issued aired")
_BORN = frozenset([stem("born")])
_MORE = frozenset(["more", "most", "greater", "larger", "higher", "bigger"])
_FEWER = frozenset(["fewer", "fewest", "less", "least", "smaller", "lower"])
_IRREGULAR_PLURALS = frozenset(["people", "children", "men", "women", "feet", "teeth"])
_NEGATED = re.compile(r"(?i)\b(?:not|never|no|n't|without)\b")


@dataclass(frozen=True)
class Comparison:
    """The relation a choice question asks about: over a ``time`` (``events``: the stems
    of the verbs whose dates count) or a ``count`` of ``noun`` (a stem); ``low_wins``
    when the smaller figure wins (older, first, fewer)."""

    kind: str
    low_wins: bool
    events: frozenset[str]
    noun: str
    words: str


_CAP = r"[A-Z0-9][^\s,;:?()\"]*"
_CONNECT = r"of|for|the|and|de|la|le|du|von|van|der|da|di|del|y|\"[^\"]{1,30}\""
_RUN_END = re.compile(rf"((?:{_CAP})(?:\s+(?:{_CONNECT}|{_CAP}))*)\W*$")
_RUN_START = re.compile(rf"^\W*((?:the\s+)?(?:{_CAP})(?:\s+(?:{_CONNECT}|{_CAP}))*)")
_OR = re.compile(r"(?i)\s+or\s+")
_LEAD_WORDS = frozenset(
    str.split("was is are were did does do has have had who which what whose how")
)


def choice_alternatives(question: str) -> tuple[str, str] | None:
    """The two names a question offers ("Who is older, Glenn Hughes or Ross Lynch?" →
    ``("Glenn Hughes", "Ross Lynch")``): the capitalized runs on each side of its ``or``;
    ``None`` without one, or for a list of three or more."""
    canon = canonicalize(question)
    found = list(_OR.finditer(canon))
    if len(found) != 1:
        return None
    m = found[0]
    left, right = canon[: m.start()].rstrip(" ,"), canon[m.end() :]
    a, b = _RUN_END.search(left), _RUN_START.match(right)
    if a is None or b is None:
        return None
    first = a.group(1)
    words = first.split()
    if a.start(1) == 0 and words and words[0].lower() in _LEAD_WORDS:
        first = " ".join(words[1:])  # "Was Beyond the Gates of Splendor": the "Was" leads
    if not first or re.search(rf"{_CAP}\s*,\s*$", left[: a.start(1)]):
        return None  # "A, B or C": more than two alternatives
    second = b.group(1).rstrip(" .")
    if not tokens(first) or not tokens(second):
        return None
    return first, second


def _relation_tokens(question: str, alternatives: tuple[str, str]) -> list[str]:
    text = canonicalize(question)
    for alt in alternatives:
        text = text.replace(alt, " , ")
    return tokens(text)


def question_comparison(question: str | None) -> Comparison | None:
    """The comparison a choice question asks about, or ``None`` (rules in the module
    docstring; a negated question compares nothing)."""
    if not question or _NEGATED.search(question):
        return None
    alts = choice_alternatives(question)
    if alts is None:
        return None
    toks = _relation_tokens(question, alts)
    stems = {stem(t) for t in toks}
    event = stems & (_ORIGIN | _RELEASE)
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if t in _OLDER | _YOUNGER and (not nxt or nxt in STOPWORDS):
            group = _ORIGIN | (_RELEASE if event & _RELEASE else frozenset())
            return Comparison("time", t in _OLDER, frozenset(group | event), "", t)
        if t == "recent" and i and toks[i - 1] in {"more", "most"} and event:
            return Comparison("time", False, _groups(event), "", f"{toks[i - 1]} recent")
        if t in _EARLY | _LATE and event:
            return Comparison("time", t in _EARLY, _groups(event), "", t)
    return _count_comparison(toks)


def _groups(event: set[str]) -> frozenset[str]:
    """The event stems whose dates count: the question's own, with their group; a birth
    counts only births (a person's other dates are not their age)."""
    if event & _BORN:
        return _BORN
    out = set(event)
    for group in (_ORIGIN, _RELEASE):
        if event & group:
            out |= group
    return frozenset(out)


def _plural(tok: str) -> bool:
    if tok in _IRREGULAR_PLURALS:
        return True
    return len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is"))


def _count_comparison(toks: list[str]) -> Comparison | None:
    """ "more species", "fewer members", "a greater number of books"."""
    for i, t in enumerate(toks):
        if t not in _MORE | _FEWER:
            continue
        rest = toks[i + 1 : i + 4]
        if rest[:2] == ["number", "of"] and len(rest) > 2:
            noun = rest[2]
        elif t in {"more", "most", "fewer", "fewest"} and rest:
            noun = rest[0]
        else:
            continue
        if noun in STOPWORDS or not _plural(noun):
            continue
        return Comparison("count", t in _FEWER, frozenset(), stem(noun), f"{t} {noun}")
    return None


#: Words before a name that are not part of it ("Sir Francis Nethersole").
_HONORIFICS = frozenset(["the", "sir", "dame", "lord", "lady", "dr", "mr", "mrs", "ms", "prof"])


def _key(toks: Sequence[str]) -> list[str]:
    out = [stem(t) for t in toks]
    while out[:1] and out[0] in _HONORIFICS:
        out = out[1:]
    return out


def names_alternative(name: str, lead: str) -> bool:
    """Does the name run ``lead`` name the alternative ``name``: the same words (by stem),
    or ``name``'s words in order with only middle words added, the first and last the
    same ("Lee Mark Ranaldo" names "Lee Ranaldo"; "Glenn Hughes Band" does not name
    "Glenn Hughes")?"""
    want, have = _key(tokens(name)), _key(tokens(lead))
    if not want or not have or want[0] != have[0] or want[-1] != have[-1]:
        return False
    k = 0
    for h in have:
        if k < len(want) and h == want[k]:
            k += 1
    return k == len(want)


_LEAD = re.compile(rf"^[\"']*((?:the\s+)?(?:{_CAP})(?:\s+(?:{_CONNECT}|{_CAP}))*)")


_NAMED_BRACKET = re.compile(rf"((?:{_CAP})(?:\s+(?:{_CONNECT}|{_CAP}))*)\s*\(")


def about(
    name: str, evidence: Sequence[EvidenceObject], bridge: int = 1
) -> list[tuple[str, str, bool]]:
    """``(lead, text, whole)`` of the sentences about ``name``: those it opens as their
    subject (``whole``: every pattern is read), each with up to ``bridge`` pronoun-led
    sentences after it (``lead`` empty); and those where it stands right before a bracket
    ("… the band Trapeze.Ross Shor Lynch (born 1995) …": only that bracket is read)."""
    out: list[tuple[str, str, bool]] = []
    for ev in sorted(evidence, key=lambda e: e.evidence_id):
        sents = ev.passage.sentences
        for i, s in enumerate(sents):
            m = _LEAD.match(s.text)
            if m is not None and names_alternative(name, m.group(1)):
                out.append((m.group(1), s.text, True))
                j = i + 1
                while (
                    j < len(sents)
                    and j - i <= bridge
                    and continues(sents[j - 1].toks, sents[j].toks)
                ):
                    out.append(("", sents[j].text, True))
                    j += 1
                continue
            for b in _NAMED_BRACKET.finditer(s.text):
                run = b.group(1)
                words = run.split()
                for k in range(len(words)):
                    tail = " ".join(words[k:])
                    if names_alternative(name, tail.rsplit(".", 1)[-1] if k == 0 else tail):
                        out.append((tail.rsplit(".", 1)[-1] if k == 0 else tail, s.text, False))
                        break
    return out


def figure_of(
    name: str, evidence: Sequence[EvidenceObject], comp: Comparison, bridge: int = 1
) -> Figure | None:
    """The interval the sentences about ``name`` state for the comparison (all candidates
    joined), or ``None`` when they state none, or a hedged one."""
    found: list[Figure | None] = []
    for lead, text, whole in about(name, evidence, bridge):
        if comp.kind == "time":
            found += time_figures(lead, text, comp.events) if whole else parenthetical(lead, text)
        elif whole:
            found += count_figures(text, comp.noun)
    if not found or any(f is None for f in found):
        return None
    figs = [f for f in found if f is not None]
    texts = sorted({f.text for f in figs})
    return Figure(min(f.lo for f in figs), max(f.hi for f in figs), "; ".join(texts))


def decide(comp: Comparison, chosen: Figure | None, other: Figure | None) -> str:
    """``"wins"`` when the figures put ``chosen`` wholly on the winning side of ``other``,
    ``"loses"`` when they put it wholly on the losing side, else ``"unknown"``."""
    if chosen is None or other is None:
        return "unknown"
    below = chosen.hi < other.lo
    above = other.hi < chosen.lo
    if not below and not above:
        return "unknown"
    return "wins" if below == comp.low_wins else "loses"


def compare_alternatives(
    span: str, question: str | None, evidence: Sequence[EvidenceObject], bridge: int = 1
) -> tuple[str, str]:
    """``(outcome, reason)`` for a bare span that is one alternative of a comparison
    question: ``"wins"``/``"loses"`` by the figures, ``"unknown"`` when a figure is
    missing or the intervals overlap, ``""`` when the question compares nothing or the
    span is no alternative."""
    comp = question_comparison(question)
    alts = choice_alternatives(question) if comp and question else None
    if comp is None or alts is None:
        return "", ""
    if names_alternative(alts[0], span) or names_alternative(span, alts[0]):
        chosen, other = alts
    elif names_alternative(alts[1], span) or names_alternative(span, alts[1]):
        other, chosen = alts
    else:
        return "", ""
    return _outcome(comp, chosen, other, evidence, bridge)


def _figures(
    comp: Comparison, chosen: str, other: str, evidence: Sequence[EvidenceObject], bridge: int
) -> tuple[Figure | None, Figure | None]:
    """Both alternatives' figures. An age compares births (and life brackets) when the
    evidence states one for either; a founding date only when it states none for both."""
    if comp.words in _OLDER | _YOUNGER:
        lives = Comparison(comp.kind, comp.low_wins, _BORN, comp.noun, comp.words)
        a, b = figure_of(chosen, evidence, lives, bridge), figure_of(other, evidence, lives, bridge)
        if a is not None or b is not None:
            return a, b
    return figure_of(chosen, evidence, comp, bridge), figure_of(other, evidence, comp, bridge)


def _outcome(
    comp: Comparison, chosen: str, other: str, evidence: Sequence[EvidenceObject], bridge: int
) -> tuple[str, str]:
    a, b = _figures(comp, chosen, other, evidence, bridge)
    verdict = decide(comp, a, b)
    if verdict == "unknown" and comp.kind == "time":
        said, where = _stated(comp, chosen, other, evidence, bridge)
        if said:
            return said, f"{comp.words}: the evidence says {where!r}"
    if verdict == "unknown":
        missing = [n for n, f in ((chosen, a), (other, b)) if f is None]
        why = f"no figure for {', '.join(missing)}" if missing else "the figures overlap"
        return "unknown", f"{comp.words}: {why}"
    assert a is not None and b is not None
    sign = "<" if a.hi < b.lo else ">"
    shown = f"{chosen} {a.text} {sign} {other} {b.text}"
    return verdict, f"{comp.words}: {shown}"


_SAID = re.compile(
    rf"(?i)\b(before|after|(?:earlier|later|older|younger|elder|sooner)\s+than)\s+"
    rf"((?:the\s+)?(?:{_CAP})(?:\s+(?:{_CONNECT}|{_CAP}))*)"
)


def _stated(
    comp: Comparison, chosen: str, other: str, evidence: Sequence[EvidenceObject], bridge: int
) -> tuple[str, str]:
    """A sentence about ``chosen`` that states the order itself, with an event word of
    the relation: "Glenn Hughes was born in 1951, *before Ross Lynch*"."""
    for _lead, text, whole in about(chosen, evidence, bridge):
        if not whole or _NEGATED.search(text):
            continue
        if not comp.events & {stem(t) for t in tokens(text)} and not _AGE.search(text):
            continue
        for m in _SAID.finditer(text):
            if names_alternative(other, m.group(2)):
                early = m.group(1).lower().split()[0] in {"before", "earlier", "older", "elder"}
                return ("wins" if early == comp.low_wins else "loses"), m.group(0)
    return "", ""


#: A claim can state a comparison of two named things only with one of these.
_CUE = re.compile(r"(?i)\b(?:than|before|after)\b")
_AGE = re.compile(r"(?i)\b(?:older|younger|elder)\s+than\b")
_THAN = re.compile(
    r"(?i)^(?P<a>.+?)\s+(?:is|was|are|were|has|had|have)\s+(?:(?:an?|the)\s+)?"
    r"(?P<rel>older|younger|elder)\s+than\s+(?P<b>.+?)\W*$"
)
_ORDER = re.compile(
    r"(?i)^(?P<a>.+?)\s+(?:is|was|are|were|has\s+been|had\s+been)?\s*(?P<ev>[a-z]+)\s+"
    r"(?P<rel>before|after|earlier\s+than|later\s+than)\s+(?P<b>.+?)\W*$"
)


def claim_comparison(
    text: str, evidence: Sequence[EvidenceObject], question: str | None = None, bridge: int = 1
) -> tuple[str, str]:
    """``(outcome, reason)`` for a sentence that asserts a comparison of two named
    things: "A is older than B", "A was released before B" — or, with a choice question
    that compares, "A was born first" / "A is younger" (B the other alternative).
    ``"wins"`` when the figures prove the claim, ``"loses"`` when they contradict it,
    ``"unknown"``/``""`` otherwise."""
    canon = canonicalize(text).strip()
    if _NEGATED.search(canon) or (question is None and not _CUE.search(canon)):
        return "", ""
    m = _THAN.match(canon)
    if m:
        older = m.group("rel").lower() != "younger"
        comp = Comparison("time", older, _ORIGIN, "", m.group("rel").lower())
        return _outcome(comp, m.group("a"), m.group("b"), evidence, bridge)
    m = _ORDER.match(canon)
    if m and stem(m.group("ev").lower()) in _ORIGIN | _RELEASE:
        rel = m.group("rel").lower()
        events = _groups({stem(m.group("ev").lower())})
        comp = Comparison("time", rel.startswith(("before", "earlier")), events, "", rel)
        return _outcome(comp, m.group("a"), m.group("b"), evidence, bridge)
    asked = question_comparison(question)
    alts = choice_alternatives(question) if asked and question else None
    if asked is None or alts is None:
        return "", ""
    for chosen, other in (alts, alts[::-1]):
        if _subject(canon, chosen) and _states(canon, asked):
            return _outcome(asked, chosen, other, evidence, bridge)
    return "", ""


def _subject(claim: str, name: str) -> bool:
    m = _LEAD.match(claim)
    return m is not None and names_alternative(name, m.group(1))


def _states(claim: str, comp: Comparison) -> bool:
    """Does the claim state the question's comparison word ("born *first*", "is
    *younger*", "has *more species*")?"""
    toks = tokens(claim)
    if comp.kind == "count":
        return comp.words.split()[0] in toks and comp.noun in {stem(t) for t in toks}
    return comp.words.split()[-1] in toks
