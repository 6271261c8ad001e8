"""The stemmer local support compares words with (docs/verifier.md §19.2)."""

from __future__ import annotations

import re
from functools import lru_cache

from aborist.verify.text.textcanon import NUMBER_WORDS

__all__ = ["stem"]

_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


@lru_cache(maxsize=65536)
def stem(tok: str) -> str:
    """A light suffix stripper (plural, -ed, -ing), then the first 7 letters; a number
    (``30,847``, ``seven``) stems to its digits (``30847``, ``7``)."""
    if tok in NUMBER_WORDS:
        return NUMBER_WORDS[tok]
    if not tok.isalpha():
        if _THOUSANDS.match(tok):
            return tok.replace(",", "")
        return tok
    if len(tok) > 5 and tok.endswith("ing"):
        tok = tok[:-3]
    elif len(tok) > 4 and tok.endswith("ied"):
        tok = tok[:-3] + "y"
    elif len(tok) > 4 and tok.endswith("ed"):
        tok = tok[:-2]
    elif len(tok) > 4 and tok.endswith("ies"):
        tok = tok[:-3] + "y"
    elif len(tok) > 4 and tok.endswith(("ches", "shes", "sses", "xes", "zes")):
        tok = tok[:-2]
    elif len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is")):
        tok = tok[:-1]
    if len(tok) > 4 and tok.endswith("e"):
        tok = tok[:-1]
    return tok[:7]
