"""Substitutions and role swaps between a claim and its sentence (docs/verifier.md §19.10)."""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from itertools import combinations

from aborist.verify.stems import stem
from aborist.verify.textcanon import STOPWORDS

__all__ = ["substitution"]


def _content_stems(toks: Sequence[str]) -> frozenset[str]:
    return frozenset(stem(t) for t in toks if t not in STOPWORDS)


def substitution(claim: Sequence[str], sentence: Sequence[str]) -> str:
    """Does the claim put a word in the place of one of its sentence's? Aligned on stems
    (:class:`difflib.SequenceMatcher`), a *replaced* run of at most three tokens on each
    side, between runs the two share, is a substitution when

    * its content words are not in the sentence at all ("the nearest enclosing
      *function*" for "the nearest enclosing *loop*"), or
    * two replaced runs trade places ("*Crates* … within a *module*" for "*Modules* …
      within a *crate*"; "the *second* argument … the *first*" for the reverse): a swap
      of roles.

    Words the claim *adds* (an insertion) are what the coverage slack is for; a word it
    *substitutes* is another claim. Returns a reason, or ``""``."""
    a = [stem(t) for t in claim]
    b = [stem(t) for t in sentence]
    ops = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    equal = sum(i2 - i1 for tag, i1, i2, _j1, _j2 in ops if tag == "equal")
    if equal < max(3, len(a) // 2):
        return ""
    sent_all = _content_stems(sentence)
    swaps: list[tuple[frozenset[str], frozenset[str]]] = []
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "replace" or i2 - i1 > 3 or j2 - j1 > 3:
            continue
        mine, theirs = _content_stems(claim[i1:i2]), _content_stems(sentence[j1:j2])
        if not mine or not theirs or mine & theirs:
            continue
        flanked = (k > 0 and ops[k - 1][0] == "equal") + (
            k + 1 < len(ops) and ops[k + 1][0] == "equal"
        )
        if flanked == 2 and not (mine & sent_all):
            said, there = " ".join(claim[i1:i2]), " ".join(sentence[j1:j2])
            return f"{said!r} stands where the sentence has {there!r}"
        if flanked:
            swaps.append((mine, theirs))
    for (m1, t1), (m2, t2) in combinations(swaps, 2):
        if m1 & t2 and m2 & t1:
            return f"roles swapped: {sorted(m1)} and {sorted(m2)} trade places with the sentence's"
    return ""
