"""Bindings inside one sentence: which term a relation word or a number joins to which
(docs/verifier.md §19.19).

A bag of stems holds every word of "the *dev* profile Cargo uses when you run cargo build
*--release*" in "the dev profile Cargo uses when you run cargo build, and the release
profile Cargo uses when you run cargo build --release", and every word of "2
*milliseconds*" in "2 seconds (2,000 milliseconds)". The words are there; they are joined
to the wrong partners. Two checks read the *bindings* a sentence makes:

* :func:`relation_binding` — a relation word (:data:`BINDERS`: ``to from than over
  before after into onto under above below when for on of rather``) binds the terms on
  its left, within its clause, to the terms on its right. A claim binds ``x`` to ``y``
  across the relation. The sentence must make that binding somewhere, or at least not
  show another one: the claim is refused when no occurrence of the relation word in the
  sentence has ``x`` on its left and ``y`` on its right, but

  - one occurrence has them the other way round, ``y`` on its left and ``x`` on its right
    (an *inversion*: "slicing takes priority over subscription" where the sentence says
    "subscription takes priority over slicing", "from right to left" where it says
    "from left to right"), or
  - one occurrence binds ``x`` to something else and another binds something else to
    ``y`` (a *cross-binding*: "the ok_or method on Result" where the sentence says "the
    ok method on Result or the ok_or method on Option").

  A side of a relation word is at most ``window`` terms, and stops at a clause boundary
  (``, ; : ( )``), so a relation in one clause does not read the terms of the next. Terms
  on both sides of the claim's relation word are not read (they bind nothing to one
  side); code identifiers keep their underscores ("ok_or" is not "ok").
* :func:`number_unit` — the word right after a number is its unit, bound to it: a claim
  whose number is followed by a word that the sentence has after none of that number's
  occurrences, where the sentence puts another word there, and the claim's word is
  absent from the sentence or stands right after another number of it ("2
  milliseconds" for "2 seconds (2,000 milliseconds)", "26 mph" for "26 km/h").

* :func:`code_names` — a code identifier the claim names (``ok_or``, ``__exit__``,
  ``foo()``) is a name, not a word the coverage slack may leave out: some evidence text
  must name it.

With ``strict`` (``policy.relation_strict``, off by default) :func:`relation_binding` also
asks the sentence to *show* each binding: the claim's nearest terms on the two sides of a
relation word stand on the same sides of one of the sentence's occurrences of it.

All are pure functions of the texts; local support runs them on the passage it found
(:func:`misbound`; ``policy.relation_bindings``, ``policy.number_units``,
``policy.code_names``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from aborist.verify.rules.locality import Passage, SupportResult
from aborist.verify.rules.order import MEANINGFUL
from aborist.verify.rules.swaps import REARRANGED
from aborist.verify.text.items import item_order
from aborist.verify.text.stems import stem
from aborist.verify.text.textcanon import STOPWORDS, canonicalize

if TYPE_CHECKING:
    from aborist.verify.policy import VerifierPolicy

__all__ = [
    "BINDERS",
    "binding_tokens",
    "bound_support",
    "code_names",
    "misbound",
    "number_unit",
    "relation_binding",
]

#: Relation words whose left and right terms a claim must keep bound as its sentence does.
BINDERS: frozenset[str] = frozenset(
    "to from than over before after into onto under above below when for on of rather".split()  # noqa: SIM905
)
_BOUNDARY = frozenset(",;:()[]")
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|\w+|[,;:()\[\]]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*\Z")


def binding_tokens(text: str) -> tuple[str, ...]:
    """Lower-cased words (a code identifier with its inner underscores kept: ``ok_or``),
    numbers (``2,000`` whole) and the clause punctuation ``, ; : ( ) [ ]``."""
    out: list[str] = []
    for t in _TOKEN.findall(canonicalize(text)):
        t = t.strip("_").lower()
        if t:
            out.append(t)
    return tuple(out)


def _term(t: str) -> str:
    """The term a token is (its stem), or "" for a stopword, punctuation or a number."""
    if t in _BOUNDARY or _NUMBER.match(t):
        return ""
    if t in STOPWORDS and t not in MEANINGFUL:
        return ""
    return stem(t)


def _side(
    toks: Sequence[str], terms: Sequence[str], i: int, step: int, window: int
) -> dict[str, int]:
    """The nearest ``window`` terms on one side of ``i``, up to a clause boundary, each with
    its rank (1 = the nearest); an aside in brackets on the way is passed over ("from
    lowest precedence (least binding) to highest")."""
    out: dict[str, int] = {}
    opening, closing = ("(", ")") if step > 0 else (")", "(")
    j = i + step
    while 0 <= j < len(toks) and len(out) < window:
        if toks[j] == opening:
            while 0 <= j < len(toks) and toks[j] != closing:
                j += step
        elif toks[j] in _BOUNDARY:
            break
        elif terms[j] and terms[j] not in out:
            out[terms[j]] = len(out) + 1
        j += step
    return out


_Sides = tuple[dict[str, int], dict[str, int]]


def _joins(a: _Sides, b: _Sides, claim: _Sides, frame: int) -> bool:
    """Does the claim join occurrence ``a``'s left to occurrence ``b``'s right? The two
    share a frame (``frame`` terms or more on the same sides, held by the claim too), and
    the claim's left side agrees with ``a``'s better than with ``b``'s, its right side with
    ``b``'s better than with ``a``'s (so a claim that leaves one of two parallel bindings
    out is read against the one it keeps)."""
    shared = (a[0].keys() & b[0].keys()) | (a[1].keys() & b[1].keys())
    if len(shared & (claim[0].keys() | claim[1].keys())) < frame:
        return False
    left, right = claim[0].keys(), claim[1].keys()
    return len(left & a[0].keys()) > len(left & b[0].keys()) and len(right & b[1].keys()) > len(
        right & a[1].keys()
    )


def _mirrored(x_left: int, y_right: int, x_right: int | None, y_left: int | None) -> bool:
    """Do ``x`` and ``y`` stand in the sentence on the other sides, about as near the
    relation word as in the claim (rank within two)? A term far off on one side and
    near on the other is another relation, not the same one turned round."""
    if x_right is None or y_left is None:
        return False
    return abs(x_left - x_right) <= 2 and abs(y_right - y_left) <= 2


def relation_binding(
    claim_text: str, sentence_text: str, window: int = 4, frame: int = 2, strict: int = 0
) -> str:
    """Two terms the claim binds across a relation word that the sentence does not bind
    so, and binds otherwise (module docstring); ``""`` when there are none."""
    ct = binding_tokens(claim_text)
    if not any(t in BINDERS for t in ct):
        return ""
    st = binding_tokens(sentence_text)
    cterms, sterms = [_term(t) for t in ct], [_term(t) for t in st]
    held = frozenset(t for t in sterms if t)
    occurrences: dict[str, list[_Sides]] = {}
    for j, t in enumerate(st):
        if t in BINDERS:
            sides = (_side(st, sterms, j, -1, window), _side(st, sterms, j, 1, window))
            occurrences.setdefault(t, []).append(sides)
    if strict:
        why = _unbound(ct, cterms, st, sterms, held, strict)
        if why:
            return why
    for i, t in enumerate(ct):
        occ = occurrences.get(t)
        if t not in BINDERS or not occ:
            continue
        left, right = _side(ct, cterms, i, -1, window), _side(ct, cterms, i, 1, window)
        lefts = sorted((left.keys() - right.keys()) & held)
        rights = sorted((right.keys() - left.keys()) & held)
        for x in lefts:
            for y in rights:
                if any(x in ls and y in rs for ls, rs in occ):
                    continue
                if any(_mirrored(left[x], right[y], rs.get(x), ls.get(y)) for ls, rs in occ):
                    return f"{x!r} and {y!r} trade sides of {t!r} in the sentence"
                xs = [o for o in occ if x in o[0] and y not in o[1]]
                ys = [o for o in occ if y in o[1] and x not in o[0]]
                if any(a is not b and _joins(a, b, (left, right), frame) for a in xs for b in ys):
                    return (
                        f"the sentence binds {x!r} and {y!r} to other terms across {t!r}: "
                        "the claim joins two of its bindings"
                    )
    return ""


def _unbound(
    ct: Sequence[str],
    cterms: Sequence[str],
    st: Sequence[str],
    sterms: Sequence[str],
    held: frozenset[str],
    window: int,
) -> str:
    """The nearest terms on the two sides of a claim's relation word (that the sentence
    holds) that no occurrence of the word in the sentence has within ``window`` terms on
    the same sides."""
    occ = [
        (t, _side(st, sterms, j, -1, window), _side(st, sterms, j, 1, window))
        for j, t in enumerate(st)
        if t in BINDERS
    ]
    for i, t in enumerate(ct):
        if t not in BINDERS or not any(o[0] == t for o in occ):
            continue
        left, right = _side(ct, cterms, i, -1, 8), _side(ct, cterms, i, 1, 8)
        xs = [x for x in sorted(left, key=left.__getitem__) if x in held and x not in right]
        ys = [y for y in sorted(right, key=right.__getitem__) if y in held and y not in left]
        if not xs or not ys:
            continue
        x, y = xs[0], ys[0]
        if not any(u == t and x in ls and y in rs for u, ls, rs in occ):
            return f"the sentence does not bind {x!r} to {y!r} across {t!r}"
    return ""


def number_unit(claim_text: str, sentence_text: str) -> str:
    """A number of the claim whose unit (the word right after it) the sentence binds to
    another number, or does not hold, where it has another word after that number
    (module docstring); ``""`` when every unit stands as in the sentence."""
    ct = binding_tokens(claim_text)
    if not any(_NUMBER.match(t) for t in ct):
        return ""
    st = binding_tokens(sentence_text)
    after: dict[str, set[str]] = {}
    for j, t in enumerate(st[:-1]):
        if _NUMBER.match(t):
            after.setdefault(t, set()).add(st[j + 1])
    held = frozenset(st)
    for i, t in enumerate(ct[:-1]):
        unit = ct[i + 1]
        theirs = after.get(t)
        if not theirs or not _term(unit) or unit in theirs:
            continue
        if not any(_term(u) for u in theirs):
            continue  # the sentence has no unit after that number: nothing to compare
        others = {u for n, us in after.items() if n != t for u in us}
        if unit not in held or unit in others:
            there = sorted(u for u in theirs if _term(u))[0]
            return f"{t} {unit!r} where the sentence has {t} {there!r}"
    return ""


_IDENTIFIER = re.compile(r"\b_*[^\W\d_]\w*?(?:_\w+|\(\))|\b__\w+__")


def code_names(claim_text: str, documents: Sequence[str]) -> str:
    """A code identifier the claim names — a word with an inner underscore or two
    leading ones (``ok_or``, ``__exit__``), or a word called with ``()`` — that no
    evidence text (``documents``) names at all; ``""`` when there is none."""
    found = _IDENTIFIER.findall(canonicalize(claim_text))
    if not found:
        return ""
    held = frozenset(t for d in documents for t in binding_tokens(d))
    for raw in found:
        name = raw.removesuffix("()").strip("_").lower()
        if name and name not in held:
            return f"it names {raw!r}, which the evidence does not"
    return ""


def misbound(
    text: str,
    found: SupportResult,
    objects: Sequence[tuple[str, Passage]],
    policy: VerifierPolicy,
) -> SupportResult:
    """``found`` (the passage local support found for ``text``), or, when the passage binds
    the claim's terms otherwise or the claim names code the evidence does not
    (:func:`relation_binding`, :func:`number_unit`, :func:`code_names`, as ``policy``
    switches them on), a failed result that says why."""
    if not found.supported or not (
        policy.relation_bindings
        or policy.number_units
        or policy.code_names
        or policy.claim_item_order
    ):
        return found
    passage = next((p for ev_id, p in objects if ev_id == found.evidence_id), None)
    if passage is None:
        return found
    joined = " ".join(s.text for s in passage.sentences[found.first : found.last + 1])
    why = ""
    if policy.relation_bindings:
        why = relation_binding(
            text, joined, policy.relation_window, policy.relation_frame, policy.relation_strict
        )
    if not why and policy.number_units:
        why = number_unit(text, joined)
    if not why and policy.code_names:
        why = code_names(text, [s.text for _id, p in objects for s in p.sentences])
    if not why and policy.claim_item_order:
        why = item_order(text, joined)
    if not why:
        return found
    return replace(found, supported=False, reason=f"ANCHOR_MISMATCH: {REARRANGED}: {why}")


def bound_support(
    text: str,
    search: Callable[[Sequence[tuple[str, Passage]]], SupportResult],
    objects: Sequence[tuple[str, Passage]],
    policy: VerifierPolicy,
) -> SupportResult:
    """The first passage ``search`` finds for ``text`` in ``objects`` that :func:`misbound`
    lets stand: a passage refused is set aside with its object, and the other objects are
    searched again. When none is left, the first refusal (which says why)."""
    refused: SupportResult | None = None
    rest = list(objects)
    while True:
        found = search(rest)
        checked = misbound(text, found, objects, policy)
        if checked.supported or not found.supported:
            return refused if refused is not None and not checked.supported else checked
        refused = refused or checked
        rest = [o for o in rest if o[0] != found.evidence_id]
        if not rest:
            return refused
