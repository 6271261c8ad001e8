"""A yes/no particle that opens an answer (docs/verifier.md §19.16).

"No. Rust does not allow mixing borrowed and owned values." answers a yes/no question
with a particle and then a claim. The particle is not a word of the claim (read as one,
its "No" would be a second negation the evidence lacks), and it asserts something of its
own: *the question's proposition is true* (yes) or *false* (no). Lexically that can be
checked only where the claim restates the question: the claim holds at least two thirds
(and at least two) of the question's content stems, and its first clause exactly the
question's numbers, ordinals, comparatives and quantifiers ("the *second-highest* peak"
restates another proposition than "the highest peak"). The particle then agrees when a
"yes" comes with a claim of the question's polarity and a "no" with the opposite one
(:func:`particle_agrees`); otherwise it is unchecked (``None``) — never taken on trust.

Pure: the standard library and the verifier's own modules.
"""

from __future__ import annotations

import math
import re

from aborist.verify.rules.locality import content_stems, is_negated
from aborist.verify.text.anchors import value_keys
from aborist.verify.text.textcanon import tokens

__all__ = ["is_polar_question", "particle_agrees", "split_particle"]

#: "Yes." / "No," / "No:" at the start of a unit; not "No. 5" (a number's abbreviation).
_PARTICLE = re.compile(r"(?i)^\s*(yes|no)\s*[.,;:!]+(?!\s*\d)\s*(?=\S)")
_ALONE = re.compile(r"(?i)^\s*(yes|no)\s*[.,;:!]*\s*$")
_POLAR = re.compile(
    r"(?i)^\W*(?:is|are|was|were|am|do|does|did|can|could|will|would|should|shall|has|"
    r"have|had|must|may|might|isn't|aren't|doesn't|don't|didn't|can't|won't)\b"
)
#: Where a claim's first clause ends (its figures are compared with the question's).
_CLAUSE = re.compile(r"[,;:(]|\s(?:because|but|although|though|since|even|which|so)\s")
#: Words of a yes/no question that are no part of its proposition.
_FRAME = frozenset(["true", "possible", "allowed"])


def is_polar_question(question: str | None) -> bool:
    """Does ``question`` open with an auxiliary or copula ("Can I …?", "Is it true …?")?"""
    return bool(question) and _POLAR.match(question or "") is not None


def split_particle(text: str) -> tuple[str, str] | None:
    """``(particle, rest)`` when ``text`` opens with a yes/no particle (``rest`` is ``""``
    for a unit that is only the particle), else ``None``."""
    alone = _ALONE.match(text)
    if alone:
        return alone.group(1).lower(), ""
    m = _PARTICLE.match(text)
    if m is None:
        return None
    return m.group(1).lower(), text[m.end() :]


def particle_agrees(particle: str, question: str, claim: str) -> bool | None:
    """Whether the particle agrees with what the claim says of the question's proposition
    (see the module text); ``None`` when the claim does not restate the question."""
    q_toks, c_toks = tokens(question), tokens(claim)
    asked = content_stems(t for t in q_toks if t not in _FRAME)
    said = content_stems(c_toks)
    if len(asked) < 2 or len(asked & said) < max(2, math.ceil(2 * len(asked) / 3)):
        return None
    if value_keys(q_toks) != value_keys(tokens(_CLAUSE.split(claim, maxsplit=1)[0])):
        return None  # another number, ordinal or comparative: another proposition
    same = is_negated(question) == is_negated(claim)
    return same if particle == "yes" else not same
