"""The order of a claim's items against its sentence (docs/verifier.md §19.22).

A reworded claim may move words about: "the film was directed by X" and "X directed the
film" say one thing. What the local-support test cannot see is *which* item a reworded
claim binds to which slot. "The H120 vaccine strain is its major parent and the SC021202
strain its minor parent" holds every word of "… with the SC021202 strain as a major
parent and the H120 vaccine strain as a minor parent"; so does "leaf has the value 5 …;
branch has the value 3" for "leaf with the value 3 …, and … branch with the value 5".
The words are there; the two items of one kind traded slots.

An **item** is a word that names one thing: a number (``5``, ``10,000``, ``1.4``), a
code-like token (``__getitem__()``, ``H120``, ``src/main.rs``) or a capitalized word that
does not open its sentence (``Harmon``, ``Federal``). Two items are of one **kind** when
both are numbers, both code, or both names.

:func:`item_order` refuses a claim that puts two items of one kind in the other order
than its sentence does — where each occurs once in the sentence, so the order is read
without a guess — unless the order says nothing: the sentence joins the two in one list
("Kepner, Avery, Karev and Webber": nothing but other items and list words between them);
one of them follows ``by``/``which``/``whom``/``whose`` (a passive's agent, a relative
clause's subject); or a finite copula stands between them in the sentence and in the
claim (an identity reads both ways). A claim that keeps its items in the sentence's
order is not judged here; a verbatim claim always does. The check only ever takes a rung
away. Pure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from aborist.verify.text.anchors import anchor_key
from aborist.verify.text.sentences import passive_auxiliary
from aborist.verify.text.stems import stem
from aborist.verify.text.textcanon import STOPWORDS, canonicalize, tokens

__all__ = ["claim_items", "item_order"]

#: One written word: letters, digits and the marks code and numbers hold.
_WORD = re.compile(r"[\w$][\w.,:/'’()<>-]*[\w)>]|[\w$]")
#: A number as written ("10,000", "1.4", "3rd" is not one).
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*\Z")
#: A code-like token: an inner underscore, two leading ones, a call, a path or a word
#: with a digit in it ("H120", "u32").
_CODE = re.compile(r"\w_\w|\A__\w|\(\)\Z|\w/\w|\A[A-Za-z]+\d+[A-Za-z\d]*\Z|::")
#: Words that turn a clause round: a passive's agent ("directed *by* X") and a relative
#: clause's subject ("literals, *which* Python used"). The item right after one stands
#: later than the thing it acts on, so the order of the two says nothing.
_TURNS = frozenset({"by", "which", "whom", "whose"})
_DETERMINERS = frozenset({"the", "a", "an"})
#: A finite copula: "X is Y" and "Y is X" identify the same two things.
_COPULAS = frozenset({"is", "are", "was", "were"})
#: Words between two items that still leave them in one list.
_LIST_WORDS = frozenset({"and", "or", "nor", "as", "well", "both", "either", "the", "a", "an"})


def _item(word: str, first: bool) -> tuple[str, str] | None:
    """``(kind, key)`` of one written word, or ``None`` when it is no item. A number's key
    is the verifier's value key (:func:`anchor_key`: "10,000" and "10000" agree)."""
    core = word.strip(".,:'’")
    if not core:
        return None
    if _NUMBER.match(core):
        return "number", anchor_key(core) or core
    if _CODE.search(core):
        return "code", core.lower()
    if core[0].isupper() and not first:
        low = tokens(core)
        if low and low[0] not in STOPWORDS:
            return "name", " ".join(stem(t) for t in low)
    return None


def claim_items(text: str, opening: bool = False) -> list[tuple[str, str, int, int]]:
    """``(kind, key, start, end)`` for every item of ``text`` in order. The opening word
    counts only with ``opening`` (a claim may open with a name; a sentence's first word
    is capitalized whatever it is)."""
    canon = canonicalize(text)
    out: list[tuple[str, str, int, int]] = []
    for n, m in enumerate(_WORD.finditer(canon)):
        item = _item(m.group(), first=n == 0 and not opening)
        if item:
            out.append((*item, m.start(), m.end()))
    return out


Item = tuple[str, str, int, int]

#: How many inversions one claim is read for; past that the check gives up (it only ever
#: takes a rung away, so giving up is the old behaviour, never a vouch).
MAX_INVERSIONS = 64


def _one_list(canon: str, held: Sequence[Item], a: Item, b: Item) -> bool:
    """Does nothing but other items (``held``, the sentence's), list words and punctuation
    stand between ``a`` and ``b`` in the sentence (``canon``, canonicalized)?"""
    lo, hi = sorted((a, b), key=lambda x: x[2])
    pieces, at = [], lo[3]
    for _k, _key, s, e in held:
        if lo[3] <= s and e <= hi[2]:
            pieces.append(canon[at:s])
            at = e
    pieces.append(canon[at : hi[2]])
    return all(t in _LIST_WORDS for t in tokens(" ".join(pieces)))


def _turned(canon: str, item: Item) -> bool:
    """Does a word of :data:`_TURNS` stand right before ``item`` in ``canon``, determiners
    and the capitalized words of the item's own name ("by Anna Holm") between them aside?"""
    words = canon[max(0, item[2] - 400) : item[2]].split()
    while words and (words[-1][:1].isupper() or words[-1].lower() in _DETERMINERS):
        words.pop()
    return bool(words) and words[-1].lower().strip(",;:") in _TURNS


def _copula_between(canon: str, a: Item, b: Item) -> bool:
    """Does a finite copula of identity stand between ``a`` and ``b`` in ``canon``? A
    form of *be* before a participle is a passive's auxiliary ("Detroit *was formed* in
    …"), not an identity: it does not read both ways."""
    lo, hi = sorted((a, b), key=lambda x: x[2])
    between = tokens(canon[lo[3] : hi[2]])
    return any(t in _COPULAS and not passive_auxiliary(between, k) for k, t in enumerate(between))


def item_order(claim: str, sentence: str) -> str:
    """Why the claim puts two items of one kind in the other order than ``sentence`` (see
    the module text), or ``""``. Each item is compared with the claim's previous item of
    its kind: any inversion among them shows as one between neighbours."""
    canon_s, canon_c = canonicalize(sentence), canonicalize(claim)
    held = claim_items(canon_s)
    count = Counter(it[:2] for it in held)
    where = {it[:2]: it for it in held}
    taken: set[tuple[str, str]] = set()
    last: dict[str, tuple[Item, Item]] = {}
    inversions = 0
    for item in claim_items(canon_c, opening=True):
        key = item[:2]
        if count.get(key) != 1 or key in taken:
            continue
        taken.add(key)
        prev, last[item[0]] = last.get(item[0]), (where[key], item)
        if prev is None:
            continue
        (a, ca), (b, cb) = prev, (where[key], item)  # a stands before b in the claim
        if a[2] < b[2]:
            continue
        inversions += 1
        if inversions > MAX_INVERSIONS:
            return ""
        if (
            _one_list(canon_s, held, a, b)
            or _turned(canon_s, a)
            or _turned(canon_c, cb)
            or (_copula_between(canon_s, a, b) and _copula_between(canon_c, ca, cb))
        ):
            continue
        first, then = canon_c[ca[2] : ca[3]], canon_c[cb[2] : cb[3]]
        return (
            f"the claim puts {first!r} before {then!r}; its sentence has them the other way round"
        )
    return ""
