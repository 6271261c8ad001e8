"""Figures a sentence states for the thing it is about (docs/verifier.md §19.11): dates
and counts, each read as an interval, for :mod:`aborist.verify.rules.compare`.

* a life or run parenthetical right after a name: ``(born 21 August 1951)``, ``(born
  Mosze Lifszyc; 24 November 1908 in Kiev …)``, ``(2 November 1911 - 18 March 1996)``,
  ``(1844-1846)``, ``(2004)`` — its start;
* an event verb with its date: ``formed in 1994``, ``launched in September 1997``;
* a year before the kind: ``is a 2006 American documentary film``;
* a number right before a counted noun, at most two words between: ``48-56 species``,
  ``four accepted species``, ``more than 300 members`` (``[300, ∞)``).

A year alone is its whole year, a month its whole month. A hedged figure ("c. 1850",
"about 40 species") or a count of a part ("one of the 12 members") is ``None``: it
decides nothing. Pure: functions of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aborist.verify.text.stems import stem
from aborist.verify.text.textcanon import NUMBER_WORDS, STOPWORDS, tokens

__all__ = ["Figure", "count_figures", "parenthetical", "time_figures"]

_MONTHS_TEXT = (
    "january february march april may june july august september october november december"
)


@dataclass(frozen=True)
class Figure:
    """An interval ``[lo, hi]`` a text states for one alternative, and the words it was
    read from. Times are ``(year, month, day)`` tuples, counts numbers."""

    lo: tuple[float, ...]
    hi: tuple[float, ...]
    text: str


_MONTH_NAMES = _MONTHS_TEXT.split()
_MONTH = "|".join(m.capitalize() for m in _MONTH_NAMES)
_YEAR = r"(?<![\d.,])\d{4}(?![\d.,]?\d)"
_DATE = (
    rf"(?:(?P<d1>\d{{1,2}})\s+(?P<m1>{_MONTH})\s+|(?P<m2>{_MONTH})\s+(?:(?P<d2>\d{{1,2}}),?\s+)?"
    rf")?(?P<y>{_YEAR})"
)
_DATE_RE = re.compile(_DATE)
_HEDGE = re.compile(r"(?i)(?:\bc\.|\bca\.|\bcirca|\babout|\baround|\bapprox\w*|\?)\s*$")


def _date(m: re.Match[str]) -> Figure | None:
    """The interval a matched date covers (a year alone is its whole year); ``None`` for a
    hedged one ("c. 1850", "about 1850")."""
    groups = m.groupdict()
    starts = [m.start(g) for g in ("d1", "m2", "y") if groups.get(g)]
    at = min(starts) if starts else m.start()
    if _HEDGE.search(m.string[max(0, at - 12) : at]):
        return None
    year = float(groups["y"])
    month_name = groups.get("m1") or groups.get("m2")
    day = groups.get("d1") or groups.get("d2")
    shown = m.string[at : m.end("y")]
    if not month_name:
        return Figure((year, 1, 1), (year, 12, 31), shown)
    month = float(_MONTH_NAMES.index(month_name.lower()) + 1)
    if not day:
        return Figure((year, month, 1), (year, month, 31), shown)
    return Figure((year, month, float(day)), (year, month, float(day)), shown)


def parenthetical(lead: str, text: str) -> list[Figure | None]:
    """The start of a life or run stated in the bracket right after the name: ``(born
    DATE)``, ``(b. DATE)``, ``(DATE - DATE)`` or a bracket that is one year."""
    at = text.find(lead)
    rest = text[at + len(lead) :] if at >= 0 else ""
    m = re.match(r"\s*\(([^()]*)\)", rest)
    if m is None:
        return []
    inner = m.group(1)
    born = re.search(r"(?i)\b(?:born|b\.)\s", inner)
    if born:
        # "(born Mosze Lifszyc; 24 November 1908 in Kiev …)": the first date after "born"
        first = _DATE_RE.search(inner, born.end())
        return [_date(first)] if first else []
    dash = re.search(r"\s-\s|(?<=\d)-(?=\d)", inner)
    first = _DATE_RE.search(inner)
    if dash and first and first.end() <= dash.start():
        return [_date(first)]  # "(2 November 1911 - 18 March 1996)", "(1844-1846)"
    if re.fullmatch(rf"\s*{_YEAR}\s*", inner):
        year = float(inner.strip())
        return [Figure((year, 1, 1), (year, 12, 31), inner.strip())]
    return []


_EVENT = re.compile(rf"\b([A-Za-z]+)\s+(?:in\s+|on\s+|during\s+)?{_DATE}")
_KIND_YEAR = re.compile(rf"\b(?:is|was|are|were)\s+(?:an?|the)\s+(?P<y>{_YEAR})\s+[A-Za-z]")


def time_figures(lead: str, text: str, events: frozenset[str]) -> list[Figure | None]:
    found = parenthetical(lead, text) if lead else []
    # a bracket is read only right after the name; elsewhere it is about something else
    text = re.sub(r"\([^()]*\)", " ", text)
    for m in _EVENT.finditer(text):
        if stem(m.group(1).lower()) in events:
            found.append(_date(m))
    for m in _KIND_YEAR.finditer(text):
        found.append(_date(m))
    return found


_NUMBER_WORDS_RE = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_COUNT = re.compile(
    rf"(?i)(?<![\w.,])(?P<a>\d[\d,]*(?:\.\d+)?|{_NUMBER_WORDS_RE})"
    rf"(?:\s*-\s*(?P<b>\d[\d,]*(?:\.\d+)?|{_NUMBER_WORDS_RE}))?(?![\w.,]*\d)\b"
)


_SCALE = {"hundred": 100.0, "thousand": 1e3, "million": 1e6, "billion": 1e9}
#: Bounds before a number: "more than 300" is [300, inf), "up to 12" is [0, 12].
_AT_LEAST = ("more than", "at least", "over")
_AT_MOST = ("fewer than", "less than", "up to", "under")
_HEDGES = ("about", "around", "nearly", "almost", "approximately", "roughly", "some", "c")


def _number(tok: str) -> float:
    tok = tok.lower()
    return float(NUMBER_WORDS[tok]) if tok in NUMBER_WORDS else float(tok.replace(",", ""))


def _count_at(text: str, m: re.Match[str], noun: str) -> Figure | bool | None:
    """The count the number at ``m`` states of ``noun`` (at most two words between, none
    a stopword or a number); ``False`` when it counts something else, ``None`` when it
    is hedged ("about 40") or counts a part ("one of the 12 members")."""
    before = tokens(text[max(0, m.start() - 24) : m.start()])[-3:]
    if (
        m.group("a").lower() in _SCALE
        and before
        and (before[-1][:1].isdigit() or before[-1] in NUMBER_WORDS)
    ):
        return False  # "3 million": the scale of the number before it
    after = tokens(text[m.end() : m.end() + 80])[:4]
    scale = _SCALE.get(after[0], 1.0) if after else 1.0
    words = after[1:] if scale != 1.0 else after
    k = next((i for i, w in enumerate(words[:3]) if stem(w) == noun), -1)
    if k < 0 or any(w in STOPWORDS or w in NUMBER_WORDS or w[:1].isdigit() for w in words[:k]):
        return False
    lead = " ".join(before)
    if lead.endswith(("one of", "of the", "one of the", "among the")):
        return None
    lo = _number(m.group("a")) * scale
    hi = _number(m.group("b")) * scale if m.group("b") else lo
    if lead.endswith(_AT_LEAST):
        hi = float("inf")
    elif lead.endswith(_AT_MOST):
        lo = 0.0
    elif lead.endswith(_HEDGES):
        return None
    return Figure((lo,), (hi,), text[m.start() : m.end()] + " " + " ".join(words[: k + 1]))


def count_figures(text: str, noun: str) -> list[Figure | None]:
    """Numbers right before the counted noun."""
    found: list[Figure | None] = []
    for m in _COUNT.finditer(text):
        fig = _count_at(text, m, noun)
        if fig is not False:
            found.append(fig if isinstance(fig, Figure) else None)
    return found
