"""Quantities: a number's sign and what it counts (docs/verifier.md §19.13).

§19.4 asks that a passage hold every number of a claim *somewhere*. Two things it does not
look at:

* **The sign.** Punctuation is not a token, so ``-9`` and ``9`` are the same token ``9``.
  A number is *negative* when a minus sign is glued to its first digit and the minus is
  not itself glued to a word or a closing bracket (``-9``, ``10**-3``, ``(-5``; not the
  range ``1990-1995``, the reference ``6-6`` or ``x-1``). :func:`signed_tokens` marks
  them; :func:`signs_agree` tells a verbatim occurrence whose signs differ from one that
  is really verbatim.
* **What it counts.** A claim's number must stand where the passage's does: beside the
  same words. Each number of a claim has *neighbours* on each side — the token right
  next to it and the nearest content word, looking past other numbers (``12 + 30``,
  ``6-6``, ``[2..9]``) — and some occurrence of the same value (and sign) in the
  passage must share one of them on the same side (a month beside a date's day counts
  on either side, ``March 5`` = ``5 March``). "the value 30" is not supported by "12 +
  30 … evaluates to the value 42": the passage's 30 stands beside "12" and "expression",
  not after "value". A number without neighbours (a bare answer) is left to §19.5.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from aborist.verify.rules.order import MEANINGFUL
from aborist.verify.text.textcanon import NUMBER_WORDS, STOPWORDS, canonicalize, token_spans

__all__ = ["misplaced_number", "signed_tokens", "signs_agree"]

_DIGITS = re.compile(r"^\d+(?:[.,]\d+)*$")
_MONTHS = frozenset(
    """
    january february march april june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec
    """.split()  # noqa: SIM905
)


#: How far (in tokens) the nearest content word beside a number is looked for.
_REACH = 4


def _value(tok: str) -> str | None:
    """The value of a number token (``30,847`` = ``30847``, ``seven`` = ``7``), else None."""
    if _DIGITS.match(tok):
        if "," in tok and "." not in tok:
            tok = tok.replace(",", "")
        return tok.lstrip("0") or "0"
    return NUMBER_WORDS.get(tok)


def signed_tokens(text: str) -> list[str]:
    """The tokens of ``text`` (as :func:`aborist.verify.text.textcanon.tokens` cuts them), a
    negative number's with a leading ``-``."""
    canon = canonicalize(text)
    out: list[str] = []
    for tok, start, _end in token_spans(canon):
        minus = (
            tok[:1].isdigit()
            and start > 0
            and canon[start - 1] == "-"
            and (start == 1 or not (canon[start - 2].isalnum() or canon[start - 2] in ")]}_"))
        )
        out.append("-" + tok if minus else tok)
    return out


def signs_agree(unit_text: str, passage_text: str) -> bool:
    """Does some occurrence of the unit's token sequence in the passage carry the same
    signs? (True when the unit holds no number, or its tokens do not occur at all: that
    is for the caller to find.)"""
    if "-" not in canonicalize(unit_text) and "-" not in canonicalize(passage_text):
        return True
    unit = signed_tokens(unit_text)
    plain = [t.lstrip("-") for t in unit]
    sent = signed_tokens(passage_text)
    bare = [t.lstrip("-") for t in sent]
    k = len(unit)
    seen = False
    for i in range(len(sent) - k + 1):
        if bare[i : i + k] == plain:
            if sent[i : i + k] == unit:
                return True
            seen = True
    return not seen


def _is_number(tok: str) -> bool:
    return _value(tok.lstrip("-")) is not None


def _side(toks: Sequence[str], i: int, step: int) -> set[str]:
    """The neighbours of the number at ``i`` on one side (``step`` -1 or +1): past the
    numbers glued to it, the next token, and the nearest content word within
    :data:`_REACH` tokens — not past another number, whose word that is."""
    found: set[str] = set()
    j = i + step
    while 0 <= j < len(toks) and _is_number(toks[j]):
        j += step
    if 0 <= j < len(toks):
        found.add(toks[j])
    for k in range(j, j + step * _REACH, step):
        if not 0 <= k < len(toks) or _is_number(toks[k]):
            break
        if toks[k] not in STOPWORDS or toks[k] in MEANINGFUL:
            found.add(toks[k])
            break
    return found


def _context(toks: Sequence[str], i: int) -> set[tuple[str, str]]:
    """Side-tagged neighbours of the number at ``i``; a month is on either side (``*``)."""
    out = {("L", w) for w in _side(toks, i, -1)} | {("R", w) for w in _side(toks, i, 1)}
    return {("*", w) if w in _MONTHS else (s, w) for s, w in out}


def _key(tok: str) -> tuple[bool, str | None]:
    return tok.startswith("-"), _value(tok.lstrip("-"))


def misplaced_number(claim_text: str, passage_text: str) -> str:
    """A number of the claim that the passage does not hold with the same sign and beside
    the same words (module docstring); ``""`` when every number stands as in the
    passage."""
    claim, sent = signed_tokens(claim_text), signed_tokens(passage_text)
    where: dict[tuple[bool, str | None], list[set[tuple[str, str]]]] = {}
    for j, t in enumerate(sent):
        if _is_number(t):
            where.setdefault(_key(t), []).append(_context(sent, j))
    for i, t in enumerate(claim):
        if not _is_number(t):
            continue
        neg, value = _key(t)
        theirs = where.get((neg, value))
        if theirs is None:
            if (not neg, value) in where:
                return f"{t!r} has another sign in the passage"
            continue  # a number the passage lacks altogether is §19.4's to report
        mine = _context(claim, i)
        if not mine:
            continue
        if not any(_meets(mine, c) for c in theirs):
            return f"{t!r} does not stand beside the same words in the passage"
    return ""


def _meets(mine: set[tuple[str, str]], theirs: set[tuple[str, str]]) -> bool:
    for side, w in mine:
        if (side, w) in theirs or ("*", w) in theirs:
            return True
        if side == "*" and (("L", w) in theirs or ("R", w) in theirs):
            return True
    return False
