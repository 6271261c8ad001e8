"""The anchors of a claim: numbers, ordinals, times, months, comparative and direction
words (docs/verifier.md §19.4). A passage must hold every anchor of its claim."""

from __future__ import annotations

import re
from collections.abc import Iterable

from aborist.verify.text.textcanon import NUMBER_WORDS

__all__ = ["DIRECTION_WORDS", "QUANTIFIERS", "anchor_key", "value_keys"]


_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "last": -1,
}
#: How many times: "evaluated once" is not "evaluated twice".
_TIMES = {"once": 1, "twice": 2, "thrice": 3}
_ORDINAL_DIGITS = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("january",),
            ("february",),
            ("march",),
            ("april",),
            (),
            ("june",),
            ("july",),
            ("august",),
            ("september",),
            ("october",),
            ("november",),
            ("december",),
        ],
        start=1,
    )
    for m in names
}
#: Comparative, superlative and direction words: a claim's must be in its passage.
DIRECTION_WORDS: frozenset[str] = frozenset(
    """
    more less fewer most least larger largest smaller smallest bigger biggest greater
    greatest higher highest lower lowest longer longest shorter shortest earlier earliest
    later latest older oldest younger youngest newer newest faster fastest slower slowest
    better best worse worst before after above below inner outer innermost outermost
    uppermost lowermost nearest closest farthest furthest north south east west northern
    southern eastern western increase increases increased decrease decreases decreased
    minimum maximum only
    """.split()  # noqa: SIM905
)
#: Universal quantifiers and strong modals: a claim's must be in its passage, so "some
#: values" does not support "all values" nor "may block" support "always blocks" (words of
#: one meaning share a key: ``every`` and ``each`` are ``all``).
QUANTIFIERS: dict[str, str] = {
    "all": "all",
    "every": "all",
    "each": "all",
    "always": "always",
    "must": "must",
    "any": "any",
}
_DIGITS = re.compile(r"^\d+(?:[.,]\d+)*$")


def _number_key(tok: str) -> str | None:
    if _DIGITS.match(tok):
        if "," in tok and "." not in tok:
            tok = tok.replace(",", "")
        return "n:" + tok.lstrip("0") if tok.strip("0") else "n:0"
    if tok in NUMBER_WORDS:
        return "n:" + NUMBER_WORDS[tok]
    return None


def anchor_key(tok: str) -> str | None:
    num = _number_key(tok)
    if num is not None:
        return num
    if tok in _ORDINALS:
        return f"o:{_ORDINALS[tok]}"
    m = _ORDINAL_DIGITS.match(tok)
    if m:
        return f"o:{int(m.group(1))}"
    if tok in _TIMES:
        return f"x:{_TIMES[tok]}"
    if tok in _MONTHS:
        return f"m:{_MONTHS[tok]}"
    if tok in DIRECTION_WORDS:
        return "w:" + tok
    if tok in QUANTIFIERS:
        return "q:" + QUANTIFIERS[tok]
    return None


def value_keys(toks: Iterable[str]) -> frozenset[str]:
    """Number, ordinal, month and direction keys of ``toks`` (``7`` and ``seven`` agree)."""
    return frozenset(k for t in toks for k in (anchor_key(t),) if k is not None)
