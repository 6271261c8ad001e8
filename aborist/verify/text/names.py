"""A claim's multi-word names must be names of its passage (docs/verifier.md §19.21).

The support test finds a claim's capitalized words in its passage one by one, so a claim
may build a name the passage never gives out of the words of names it does give: "Lake
Erie State Park" from "Presque Isle State Park … juts into Lake Erie", "Panama City Air
Force Base" from "Tyndall Air Force Base … east of Panama City". A name is one thing,
not a bag of its words.

* A claim's **names** are its runs of two or more capitalized words, with the small
  words names hold inside them (``of``, ``de``, ``the``, ``and``, ``&``: "Bank of
  England", "Mumford & Sons"), and a nickname in quotation marks (Matthew "The Granimal"
  Granahan). A run that opens the claim may open with an ordinary word
  capitalized because it comes first ("Tyndall Air Force Base" is read as is; "Many
  Python users" as "Python").
* A name is **held** by a passage when its words (small words aside), in order, are all
  words of one capitalized run of the passage — a name written shorter ("Ricky Gervais"
  for "Ricky Dene Gervais") is held — or stand next to each other in one of its sentences
  (a passage that writes a name in lower case: "Mumford & sons").

Only ever takes support away; pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from aborist.verify.text.textcanon import STOPWORDS, tokens

__all__ = ["missing_name", "name_runs"]

#: A run of capitalized words, with the small words a name holds between them.
_RUN = re.compile(
    r"(?<![\w.])[A-Z][\w'’-]*"
    r"(?:\s+(?:(?:of|de|the|and|&)\s+|\"[^\"]{1,40}\"\s+)?[A-Z][\w'’-]*)*"
)


def _content(run: str) -> tuple[str, ...]:
    return tuple(t for t in tokens(run) if t not in STOPWORDS)


def name_runs(text: str) -> list[tuple[str, ...]]:
    """The content words of each multi-word name of ``text`` (see the module text)."""
    out: list[tuple[str, ...]] = []
    for m in _RUN.finditer(text):
        words = _content(m.group())
        if m.start() == len(text) - len(text.lstrip(" \"'(*")):
            words = words[1:] if len(words) > 2 else ()  # the first word may be any word
        if len(words) >= 2:
            out.append(words)
    return out


def _subsequence(want: Sequence[str], have: Sequence[str]) -> bool:
    it = iter(have)
    return all(w in it for w in want)


def missing_name(runs: Sequence[tuple[str, ...]], sentences: Sequence[str]) -> str:
    """The first name of ``runs`` that none of ``sentences`` holds, as text, or ``""``."""
    if not runs:
        return ""
    have = [_content(m.group()) for s in sentences for m in _RUN.finditer(s)]
    flat = [" " + " ".join(_content(s)) + " " for s in sentences]
    for run in runs:
        if any(_subsequence(run, h) for h in have):
            continue
        if any(" " + " ".join(run) + " " in f for f in flat):
            continue
        return " ".join(run)
    return ""
