"""Substitutions and role swaps between a claim and its sentence (docs/verifier.md §19.10,
§19.13).

:func:`rearranged` is what local support asks of a passage that holds a claim's words:
does the claim say something else with them? It runs

* :func:`substitution` — a word put in the place of one of the sentence's, or two
  replaced runs that trade places (§19.10);
* :func:`aborist.verify.rules.order.role_swap` — two terms that trade sides of a relation word
  (§19.13);
* :func:`aborist.verify.rules.order.parallel_clause` — the head of one clause joined to the
  rest of a parallel one (§19.13);
* :func:`aborist.verify.text.quantity.misplaced_number` — a number with the other sign, or
  not beside the words it stands beside in the passage (§19.13).

:func:`dropped_cue` is the polarity test's per-cue check for negated claims (§19.13).

Every reason it returns holds :data:`REARRANGED`, so the multi-sentence rule (§19.7) does
not rebuild from clauses a claim that one sentence shows to be rearranged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from itertools import combinations

from aborist.verify.rules.order import MEANINGFUL, parallel_clause, role_swap
from aborist.verify.text.quantity import misplaced_number
from aborist.verify.text.stems import stem
from aborist.verify.text.textcanon import STOPWORDS, canonicalize

__all__ = ["REARRANGED", "dropped_cue", "rearranged", "substitution"]

#: The phrase every reason of :func:`rearranged` holds.
REARRANGED = "the claim rearranges its sentence"


def _content_stems(toks: Sequence[str]) -> frozenset[str]:
    return frozenset(stem(t) for t in toks if t not in STOPWORDS or t in MEANINGFUL)


def substitution(claim: Sequence[str], sentence: Sequence[str]) -> str:
    """Does the claim put a word in the place of one of its sentence's? Aligned on stems
    (:class:`difflib.SequenceMatcher`), a *replaced* run of at most three tokens on each
    side, between runs the two share (or after one, at the end of both), is a substitution when
    its content words (comparative and direction words included) are not those of the
    sentence's run:

    * not in the sentence at all ("the nearest enclosing *function*" for "the nearest
      enclosing *loop*"), or
    * elsewhere in the sentence ("if the valve is *closed* the pump stops" for "if the
      valve is *open* the pump stops; a closed valve …"): the word belongs to another
      slot of it;
    * and two replaced runs that trade places ("*Crates* … within a *module*" for
      "*Modules* … within a *crate*") are a swap of roles even where one is not flanked.

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
    misplaced = ""
    runs = [(k, i1, i2, j1, j2) for k, (tag, i1, i2, j1, j2) in enumerate(ops) if tag == "replace"]
    for k, i1, i2, j1, j2 in runs + _resynced(a, b, ops, claim):
        if i2 - i1 > 3 or j2 - j1 > 3:
            continue
        mine, theirs = _content_stems(claim[i1:i2]), _content_stems(sentence[j1:j2])
        if not mine or not theirs or mine & theirs:
            continue
        shared_before = k < 0 or (k > 0 and ops[k - 1][0] == "equal")
        shared_after = k < 0 or (k + 1 < len(ops) and ops[k + 1][0] == "equal")
        # both ends count as shared, not both starts: a paraphrase moves words to the front
        after = shared_after or (i2 == len(a) and j2 == len(b))
        said, there = " ".join(claim[i1:i2]), " ".join(sentence[j1:j2])
        if shared_before and after and not (mine & sent_all):
            return f"{said!r} stands where the sentence has {there!r} (is not in it)"
        if shared_before and after and not (shared_after and _stands_elsewhere(a, b, i1, i2)):
            misplaced = misplaced or f"{said!r} stands where the sentence has {there!r}"
        if shared_before or shared_after:
            swaps.append((mine, theirs))
    for (m1, t1), (m2, t2) in combinations(swaps, 2):
        if m1 & t2 and m2 & t1:
            return f"roles swapped: {sorted(m1)} and {sorted(m2)} trade places with the sentence's"
    return misplaced + " (belongs elsewhere in it)" if misplaced else ""


def _stands_elsewhere(a: Sequence[str], b: Sequence[str], i1: int, i2: int) -> bool:
    """Does the sentence hold the claim's run ``a[i1:i2]`` together with its neighbours in
    the claim — at least two of them, and four tokens in all, on either side? Then the run
    stands as in the sentence and only the aligner anchored it at another occurrence of a
    flanking word. (Not asked of a run that ends the claim where the sentence ends: both
    ends agree there.)"""
    n = len(b)
    k = max(2, 4 - (i2 - i1))
    for left in range(k + 1):
        lo, hi = i1 - left, i2 + k - left
        if lo < 0 or hi > len(a):
            continue
        want = list(a[lo:hi])
        if any(list(b[j : j + len(want)]) == want for j in range(n - len(want) + 1)):
            return True
    return False


def _resynced(
    a: Sequence[str],
    b: Sequence[str],
    ops: Sequence[tuple[str, int, int, int, int]],
    claim: Sequence[str],
) -> list[tuple[int, int, int, int, int]]:
    """Replaced runs the aligner does not report as such: after a shared run of two
    tokens or more, the next at most three tokens of each side differ and the two meet
    again at a content word (or both end). ``SequenceMatcher`` may instead match the
    claim's next word with a far occurrence of it ("… are *winter* tyres" for "… are
    *summer* tyres; they are swapped in *winter*"). Tagged ``k = -1``: both
    sides shared."""
    out: list[tuple[int, int, int, int, int]] = []
    for tag, _i1, i, _j1, j in ops:
        if tag != "equal" or i - _i1 < 2:
            continue
        for total in range(2, 7):
            hit = next(
                (
                    (p, total - p)
                    for p in range(max(1, total - 3), min(3, total - 1) + 1)
                    if _meet(a, b, i + p, j + total - p, claim)
                ),
                None,
            )
            if hit:
                out.append((-1, i, i + hit[0], j, j + hit[1]))
                break
    return out


def _meet(a: Sequence[str], b: Sequence[str], i: int, j: int, claim: Sequence[str]) -> bool:
    if i == len(a) and j == len(b):
        return True
    return i < len(a) and j < len(b) and a[i] == b[j] and claim[i] not in STOPWORDS


def rearranged(
    text: str, claim: Sequence[str], sentences: Sequence[tuple[str, Sequence[str]]]
) -> str:
    """``"ANCHOR_MISMATCH: …"`` when the claim (``text``, its tokens ``claim``) says
    something else with the words of its passage (``(text, tokens)`` of each sentence):
    a substitution, a role swap or a misplaced number; else ``""``."""
    toks = [t for _s, ts in sentences for t in ts]
    why = substitution(claim, toks) or role_swap(claim, toks)
    if not why:
        why = parallel_clause(claim, toks, _capitalized(" ".join(s for s, _ts in sentences)))
    if not why:
        why = misplaced_number(text, " ".join(s for s, _ts in sentences))
    return f"ANCHOR_MISMATCH: {REARRANGED}: {why}" if why else ""


_CAPWORD = re.compile(r"[^\W_]+")


def _capitalized(text: str) -> frozenset[str]:
    """Stems of the capitalized words of ``text`` that are not stopwords (names)."""
    return frozenset(
        stem(w.casefold())
        for w in _CAPWORD.findall(canonicalize(text))
        if w[0].isupper() and w.casefold() not in STOPWORDS
    )


def dropped_cue(
    claim_scope: frozenset[str], passage_scope: frozenset[str], claim_stems: frozenset[str]
) -> bool:
    """Does a polarity cue of the passage govern a word of a *negated* claim that no cue
    of the claim governs? "If no key is given, … it fails loudly" keeps the "no" of "If no
    key is given, … it never fails loudly" and drops its "never": each cue counts where it
    stands, not "some negation somewhere"."""
    return bool((passage_scope & claim_stems) - claim_scope)
