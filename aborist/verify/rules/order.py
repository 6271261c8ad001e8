"""Word order: terms that trade sides of a relation word (docs/verifier.md §19.13).

A bag of stems cannot tell "a *pine* board outlasts an *oak* board" from "an *oak* board
outlasts a *pine* board", or "from *north* to *south*" from "from *south* to *north*".
Both claims hold every word of their sentence; what differs is which side of the
relation each term stands on.

:func:`role_swap` looks at every *pivot* of a claim: a content word, or a relation word
(:data:`RELATION_WORDS`: ``than before after to from into onto over under above below``),
that its sentence holds too. The pivot's *sides* are the nearest
``window`` terms (content words, and the comparative and direction words the stopword
list holds) before and after it. The claim swaps roles at the pivot when one term stands
before the pivot in the claim and only after it in the sentence, and another stands after
it in the claim and only before it in the sentence: the two traded places across the
relation — and every other term of the claim's sides that the sentence holds stands on
the same side there (a pure trade: a moved adverbial and a passive turned active
together move words further, and are not one). Where the pivot occurs more than once in
the sentence, the occurrence that agrees best with the claim (most terms on the same
sides) is compared — all of them, when several tie — so a word the sentence repeats does
not make a swap of its own.

Reordering that keeps each relation's arguments on their sides is not a swap: a moved
adverbial or an apposition moves *one* term, and a passive turned active ("the film was
directed by X" → "X directed the film") reads its sides the other way round (a pivot
after a form of *be*, or followed by ``by``, on one side only).
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

from aborist.verify.text.sentences import is_participle, passive_auxiliary
from aborist.verify.text.stems import stem
from aborist.verify.text.textcanon import STOPWORDS

__all__ = ["MEANINGFUL", "RELATION_WORDS", "parallel_clause", "role_swap"]

#: Function words that relate two terms: pivots, though they are stopwords.
RELATION_WORDS: frozenset[str] = frozenset(
    "than before after to from into onto over under above below".split()  # noqa: SIM905
)
#: Stopwords that are terms of a relation (a comparative, a direction, a restriction).
MEANINGFUL = frozenset(
    "more most before after above below over under only few against".split()  # noqa: SIM905
)


def _terms(toks: Sequence[str]) -> list[str]:
    """Each token's stem when it is a term (content word or :data:`_MEANINGFUL`), else ""."""
    return [stem(t) if t not in STOPWORDS or t in MEANINGFUL else "" for t in toks]


def _side(terms: Sequence[str], i: int, step: int, window: int) -> frozenset[str]:
    """The nearest ``window`` terms on one side of position ``i`` (the pivot's own stem
    left out)."""
    out: list[str] = []
    j = i + step
    while 0 <= j < len(terms) and len(out) < window:
        if terms[j] and terms[j] != terms[i]:
            out.append(terms[j])
        j += step
    return frozenset(out)


def _traded(
    lc: frozenset[str],
    rc: frozenset[str],
    ls: frozenset[str],
    rs: frozenset[str],
    held: frozenset[str],
) -> tuple[str, str] | None:
    """A term before the pivot in the claim and only after it in the sentence, and one
    after it in the claim and only before it in the sentence — while every other term of
    the claim's sides that the sentence holds (``held``) stays on its side. (Terms moved
    further away, as a moved adverbial and a passive turned active together do, are a
    reordering, not a trade.)"""
    moved_right = (lc - rc - ls) & rs
    moved_left = (rc - lc - rs) & ls
    if not moved_right or not moved_left or moved_right == moved_left:
        return None
    stays = (lc - moved_right) & held <= ls and (rc - moved_left) & held <= rs
    if not stays:
        return None
    x = min(moved_right)
    return x, min(moved_left - {x})


_BE = frozenset("is are was were be been being".split())  # noqa: SIM905


def _passive(toks: Sequence[str], i: int) -> bool:
    """Is the pivot at ``i`` a passive verb: followed by ``by`` ("the film directed by
    X"), or a participle after a form of *be* (an adverb between allowed: "is often
    managed")?"""
    if i + 1 < len(toks) and toks[i + 1] == "by":
        return True
    if not is_participle(toks[i]):
        return False
    if i >= 1 and toks[i - 1] in _BE:
        return True
    return i >= 2 and toks[i - 2] in _BE and passive_auxiliary(toks, i - 2)


#: Modal verbs stand beside the relation, they are not one: never pivots.
_MODALS = frozenset("must may might shall ought".split())  # noqa: SIM905


def role_swap(claim: Sequence[str], sentence: Sequence[str], window: int = 2) -> str:
    """Two terms of the claim that trade sides of a pivot its sentence shares (module
    docstring); ``""`` when none do."""
    ct, st = _terms(claim), _terms(sentence)
    held = frozenset(t for t in st if t)
    where: dict[str, list[int]] = {}
    for j, t in enumerate(sentence):
        key = st[j] or (t if t in RELATION_WORDS else "")
        if key:
            where.setdefault(key, []).append(j)
    for i, t in enumerate(claim):
        key = ct[i] or (t if t in RELATION_WORDS else "")
        js = where.get(key)
        if not js or t in _MODALS:
            continue
        lc, rc = _side(ct, i, -1, window), _side(ct, i, 1, window)
        if not lc or not rc:
            continue
        ranked: list[tuple[int, tuple[str, str] | None]] = []
        for j in js:
            ls, rs = _side(st, j, -1, window), _side(st, j, 1, window)
            if _passive(claim, i) != _passive(sentence, j):
                ls, rs = rs, ls
            ranked.append((len(lc & ls) + len(rc & rs), _traded(lc, rc, ls, rs, held)))
        top = max(n for n, _ in ranked)
        found = [tr for n, tr in ranked if n == top]
        if all(found) and found[0] is not None:
            x, y = found[0]
            return f"roles swapped around {t!r}: {x!r} and {y!r} trade sides of it"
    return ""


def parallel_clause(claim: Sequence[str], sentence: Sequence[str], names: frozenset[str]) -> str:
    """Does the claim join the head of one clause to the rest of a parallel one? Aligned
    on stems, the claim runs on from a shared run that holds a term, where its sentence
    skips a stretch that restates the claim's next words (two terms or more of the run
    that follows) around a term of its own — a name (``names``: the sentence's
    capitalized stems), a number, a comparative or direction word — that the claim does
    not hold: "Oak burns fast with little smoke" from "Oak burns slowly with little smoke;
    pine burns fast with much smoke; Birch burns fast with little smoke" (the head of the
    first clause, the rest of the third). A stretch left out that restates nothing ("The
    function takes a value and returns the value doubled" → "The function returns the
    value doubled") is a plain omission."""
    ct, st = _terms(claim), _terms(sentence)
    ops = SequenceMatcher(
        None, [stem(t) for t in claim], [stem(t) for t in sentence], autojunk=False
    ).get_opcodes()
    mine = frozenset(t for t in ct if t)
    for k in range(1, len(ops) - 1):
        tag, _i1, _i2, j1, j2 = ops[k]
        if tag != "insert" or ops[k - 1][0] != "equal" or ops[k + 1][0] != "equal":
            continue
        if not any(ct[ops[k - 1][1] : ops[k - 1][2]]):
            continue  # a run of stopwords anchors nothing
        skipped = frozenset(t for t in st[j1:j2] if t)
        _t, n1, n2, _m1, _m2 = ops[k + 1]
        restated = skipped & frozenset(t for t in ct[n1:n2] if t)
        own = [
            sentence[j]
            for j in range(j1, j2)
            if st[j]
            and st[j] not in mine
            and (st[j] in names or sentence[j] in MEANINGFUL or sentence[j][:1].isdigit())
        ]
        if len(restated) >= 2 and own:
            return (
                f"the claim runs past a parallel clause (about {own[0]!r}) that restates "
                f"{sorted(restated)}: its words come from two clauses"
            )
    return ""
