"""Date forms and datelines for local support (docs/verifier.md §19.12).

Two rules, both about how a date is *written*, never about what a sentence says:

* **Date forms** (:func:`normalize_dates`). Claim and sentence are compared with their
  dates written out: a month abbreviated before a day or a year, or with its full stop
  (``Aug. 10, 2014``, ``Nov 4``), as the month's name; an ISO date (``2018-06-30``) as
  day, month and year; a year range with a two-digit end (``2018–19``) with the full end
  year (``2018-2019``).
* **Datelines** (:func:`is_dateline`, :func:`date_adjunct`). A sentence made only of a
  date (and time, weekday and the words of a byline's date: ``published``, ``updated``
  …) dates the text after it. A claim's *date adjunct* (``in 2016``, ``on 29 April
  2014``, ``since 2019``, ``In November 2013,``) is then a part of its own: it is
  supported by the nearest dateline before the passage that supports the rest of the
  claim when that dateline holds every number and month of the adjunct.

Pure functions of their text; memoized.
"""

from __future__ import annotations

import re
from functools import lru_cache

from aborist.verify.text.textcanon import NUMBER_WORDS, canonical_tokens, canonicalize

__all__ = [
    "MONTH_ABBREVIATIONS",
    "adjunct_keys",
    "date_adjunct",
    "dateline_keys",
    "dates_itself",
    "is_dateline",
    "normalize_dates",
]

_FULL_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
#: Abbreviation -> month number; only before a day or year, or with its full stop.
MONTH_ABBREVIATIONS: dict[str, int] = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_ABBREV = re.compile(
    r"\b(Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)(?:\.|(?=\s+\d{1,4}\b))", re.IGNORECASE
)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
#: ``2018-19`` (not ``2018-19-05``, not a phone-like ``2018-1900``)
_YEAR_RANGE = re.compile(r"\b(1[5-9]|20)(\d{2})\s?-\s?(\d{2})\b(?!-)")


def normalize_dates(text: str) -> str:
    """``text`` (canonicalized) with its dates written out: an abbreviated month before a
    day or year, or with its full stop, in full (``Aug. 10`` → ``August 10``); an ISO date
    as day, month and year (``2018-06-30`` → ``30 June 2018``); a two-digit range end in
    full (``2018–19`` → ``2018-2019``)."""
    return _normalize(canonicalize(text))


@lru_cache(maxsize=65536)
def _normalize(canon: str) -> str:
    def month(m: re.Match[str]) -> str:
        return _FULL_MONTHS[MONTH_ABBREVIATIONS[m.group(1).lower()] - 1].capitalize()

    def iso(m: re.Match[str]) -> str:
        mm = int(m.group(2))
        if not 1 <= mm <= 12:
            return m.group(0)
        return f"{int(m.group(3))} {_FULL_MONTHS[mm - 1].capitalize()} {m.group(1)}"

    def year_range(m: re.Match[str]) -> str:
        if int(m.group(3)) <= int(m.group(2)):
            return m.group(0)
        return f"{m.group(1)}{m.group(2)}-{m.group(1)}{m.group(3)}"

    out = _ABBREV.sub(month, canon)
    out = _ISO.sub(iso, out)
    return _YEAR_RANGE.sub(year_range, out)


_WEEKDAYS = frozenset(
    [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "mon",
        "tue",
        "tues",
        "wed",
        "thu",
        "thurs",
        "fri",
        "sat",
        "sun",
    ]
)
#: Words a dateline may hold besides the date itself (a byline's date, a time zone).
_DATELINE_WORDS = frozenset(
    """
    meta data datetime date published updated posted written originally last modified on
    at the of a am pm m p et est edt gmt utc bst cet pt pst pdt ct cst cdt
    """.split()  # noqa: SIM905
)
_CLOCK_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
_DAY_OR_YEAR = re.compile(r"^\d{1,4}$")
_CLOCK = re.compile(r"^\d{1,2}(?:am|pm)$")


def _date_token(tok: str) -> bool:
    return (
        bool(_DAY_OR_YEAR.match(tok) or _CLOCK.match(tok))
        or tok in _FULL_MONTHS
        or tok in MONTH_ABBREVIATIONS
        or tok in _WEEKDAYS
        or tok in _DATELINE_WORDS
    )


@lru_cache(maxsize=65536)
def is_dateline(text: str) -> bool:
    """Is ``text`` nothing but a date (with a time, a weekday, the words of a byline's
    date)? It must hold a year and a month, or a full ISO date."""
    toks = canonical_tokens(normalize_dates(text))
    if not toks or not all(_date_token(t) for t in toks):
        return False
    keys = _date_keys(toks)
    has_year = any(k.startswith("n:") and len(k) == 6 for k in keys)
    return has_year and any(k.startswith("m:") for k in keys)


def dateline_keys(text: str) -> frozenset[str]:
    """The numbers and months of a dateline (``May 20, 2019`` → ``n:20``, ``n:2019``,
    ``m:5``: in a dateline ``May`` is the month)."""
    return _date_keys(canonical_tokens(_CLOCK_TIME.sub(" ", normalize_dates(text))))


def _date_keys(toks: list[str]) -> frozenset[str]:
    keys: set[str] = set()
    for t in toks:
        if t.isdigit():
            keys.add("n:" + (t.lstrip("0") or "0"))
        elif t in _FULL_MONTHS and t != "may":
            keys.add(f"m:{_FULL_MONTHS.index(t) + 1}")
        elif t == "may":
            keys.add("m:5")  # a dateline is only dates: "May" is the month here
    return frozenset(keys)


_MONTH_RE = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November"
    r"|December)"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"\d{4}"
_ONE_DATE = (
    rf"(?:{_MONTH_RE}\s+{_DAY},?\s+{_YEAR}|{_DAY}\s+{_MONTH_RE},?\s+{_YEAR}"
    rf"|{_MONTH_RE},?\s+{_YEAR}|{_MONTH_RE}\s+{_DAY}|{_DAY}\s+{_MONTH_RE}|{_YEAR})"
)
#: A prepositional date phrase: "in 2016", "on 29 April 2014", "since 2019", "from August
#: through October 2007" (a comma after a leading one is part of it).
_ADJUNCT = re.compile(
    rf"(?:^|(?<=[\s,(]))(?:[Ii]n|[Oo]n|[Ss]ince|[Dd]uring|[Ff]rom)\s+(?:early\s+|late\s+)?"
    rf"{_ONE_DATE}(?:\s+(?:through|to|until|and)\s+{_ONE_DATE})?(?![\w-])(?:\s*,)?"
)


def date_adjunct(text: str) -> tuple[str, str] | None:
    """``(adjunct, rest)``: the claim's one prepositional date phrase and the claim
    without it, or None when it has none or more than one (a claim with two dates says
    which event had which; a dateline cannot tell)."""
    canon = canonicalize(text)
    found = list(_ADJUNCT.finditer(canon))
    if len(found) != 1:
        return None
    m = found[0]
    rest = (canon[: m.start()] + " " + canon[m.end() :]).strip()
    rest = re.sub(r"\s+([,.;:])", r"\1", re.sub(r"\s{2,}", " ", rest))
    if not any(ch.isalpha() for ch in rest):
        return None
    return m.group(0).strip(" ,"), rest


def adjunct_keys(adjunct: str) -> frozenset[str]:
    """The numbers and months a dateline must hold for ``adjunct`` (``on May 7, 2018`` →
    ``n:7``, ``n:2018``, ``m:5``)."""
    toks = canonical_tokens(canonicalize(adjunct))
    keys = set(_date_keys([t for t in toks if t not in NUMBER_WORDS]))
    for t in toks:
        day = re.match(r"^(\d{1,2})(?:st|nd|rd|th)$", t)
        if day:
            keys.add("n:" + day.group(1).lstrip("0"))
    return frozenset(keys)


#: Words by which a sentence dates its event relative to when it was written.
_RELATIVE = re.compile(
    r"\b(?:ago|(?:last|next|previous|following|coming|past|prior)\s+"
    r"(?:year|years|decade|decades|century|season|seasons))\b",
    re.IGNORECASE,
)


def dates_itself(text: str) -> bool:
    """Does ``text`` give its event a date of its own (a year, a month, or a time relative
    to when it was written: ``last year``, ``two years ago``)? Then a dateline does not
    date it."""
    toks = canonical_tokens(normalize_dates(text))
    if any(t.isdigit() and len(t) == 4 for t in toks) or _RELATIVE.search(text):
        return True
    return any(t in _FULL_MONTHS and t != "may" for t in toks)
