"""Where a verbatim piece stops short of its sentence (docs/verifier.md §19.15).

A unit's token sequence can occur in a sentence and still not say what the sentence says:

* **A symbol is a word.** Punctuation is not a token, so ``!`` in "the type of guess is
  !" vanishes and the unit's tokens become a prefix of "… the type of guess is u32". A
  symbol that stands as a word of its own (``!``, ``?``, ``&``, ``->`` between spaces)
  must occur in the sentence's stretch as often as in the unit (:func:`symbols_agree`).
* **A list cut short.** A sentence-shaped unit ("We're only allowed to use it in a
  function that returns Result.") that stops where its sentence goes on with more items
  of the same list (", Option, or another type …", " or Option") does not state the
  sentence's claim (:func:`cuts_list`); with ``only`` (``solely``, ``exclusively``) it
  states the opposite, since the exclusive word then shuts out the items it dropped.

Both only ever take the verbatim grade away. Pure: the standard library and the
verifier's own text helpers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from aborist.verify.text.textcanon import STOPWORDS, canonicalize, tokens

__all__ = [
    "EXCLUSIVE",
    "cuts_list",
    "has_symbol_words",
    "inside_identifier",
    "occurrence_spans",
    "symbols_agree",
    "unit_pattern",
]

#: Words that shut out everything a claim does not name.
EXCLUSIVE = frozenset(["only", "solely", "exclusively"])
#: Marks that are not words even when they stand alone: quotes, brackets, dashes, dots.
_NOT_A_WORD = set("\"'()[]{}.,;:-–—…*")
_ITEM = re.compile(r"[^\W_][\w'’<>-]*")


#: A character that can make a symbol word: neither a word character, a space, nor a mark
#: of :data:`_NOT_A_WORD` (a text without one has no symbol word; most have none).
_SYMBOL_CHAR = re.compile(r"[^\w\s\"'()\[\]{}.,;:\-–—…*]")


def _symbols(text: str) -> Counter[str]:
    out: Counter[str] = Counter()
    canon = canonicalize(text)
    if not _SYMBOL_CHAR.search(canon):
        return out
    for word in canon.split():
        word = word.rstrip(".,;:") or word
        if not any(c.isalnum() or c == "_" for c in word) and not set(word) <= _NOT_A_WORD:
            out[word] += 1
    return out


def has_symbol_words(unit_text: str) -> bool:
    """Does the unit hold a symbol that stands as a word (what :func:`symbols_agree`
    checks)? A caller testing one unit against many passages asks once."""
    return bool(_symbols(unit_text))


def unit_pattern(toks: Sequence[str]) -> re.Pattern[str] | None:
    """The pattern :func:`occurrence_spans` searches for ``toks`` (``None`` for none); a
    caller testing one unit against many passages builds it once."""
    if not toks:
        return None
    body = r"[\W_]+".join(re.escape(t) for t in toks)
    return re.compile(r"(?i)(?<![^\W_])" + body + r"(?![^\W_])")


def occurrence_spans(
    toks: Sequence[str], text: str, pattern: re.Pattern[str] | None = None
) -> list[tuple[int, int]]:
    """``(start, end)`` in ``canonicalize(text)`` of every occurrence of the token
    sequence ``toks``: the tokens with anything but word characters between them
    (``pattern``, when given, is ``unit_pattern(toks)``)."""
    pattern = pattern or unit_pattern(toks)
    if pattern is None:
        return []
    return [(m.start(), m.end()) for m in pattern.finditer(canonicalize(text))]


def inside_identifier(unit_text: str, sentence_text: str) -> bool:
    """Does every occurrence of the unit's tokens in the sentence stand inside a longer
    identifier, joined to it by an underscore ("max" in ``config_max``, "init" in
    ``__init_subclass__``)? The underscore is no token, so the tokens match; the word the
    sentence writes is another name. A unit that writes the whole identifier itself
    (``__init__`` for ``__init__``) is not inside one. False when the tokens do not occur."""
    canon = canonicalize(sentence_text)
    if "_" not in canon:
        return False
    spans = occurrence_spans(tokens(unit_text), sentence_text)
    unit = canonicalize(unit_text).casefold()
    for start, end in spans:
        a, b = start, end
        while a > 0 and (canon[a - 1].isalnum() or canon[a - 1] == "_"):
            a -= 1
        while b < len(canon) and (canon[b].isalnum() or canon[b] == "_"):
            b += 1
        if (a, b) == (start, end) or canon[a:b].casefold() in unit:
            return False
    return bool(spans)


def symbols_agree(unit_text: str, sentence_text: str) -> bool:
    """Does some occurrence of the unit's tokens in the sentence carry, from its start to
    the next token after it, every symbol word of the unit (as often)? True when the unit
    has no symbol word, or its tokens do not occur (that is for the caller to find)."""
    want = _symbols(unit_text)
    if not want:
        return True
    canon = canonicalize(sentence_text)
    spans = occurrence_spans(tokens(unit_text), sentence_text)
    for start, end in spans:
        nxt = re.search(r"[^\W_]", canon[end:])
        stop = end + nxt.start() if nxt else len(canon)
        before = canon[:start].split()[-1:]  # a symbol word just before the first token
        have = _symbols(" ".join(before) + " " + canon[start:stop])
        if all(have[s] >= n for s, n in want.items()):
            return True
    return not spans


def cuts_list(unit_text: str, sentence_text: str, pattern: re.Pattern[str] | None = None) -> bool:
    """Does every occurrence of a sentence-shaped unit (it ends with ``.`` ``!`` ``?``)
    stop where the sentence goes on with more items of a list: ``, ITEM, or …`` /
    ``, ITEM, and …`` (each item one to three tokens, none a stopword) or `` or …``?"""
    if not unit_text.rstrip().endswith((".", "!", "?")):
        return False
    spans = occurrence_spans(tokens(unit_text), sentence_text, pattern)
    canon = canonicalize(sentence_text)
    return bool(spans) and all(_list_goes_on(canon[end:]) for _start, end in spans)


def _list_goes_on(rest: str) -> bool:
    if re.match(r"\s+or\s+[^\W_]", rest):
        return True
    parts = rest.split(",")
    if len(parts) < 3 or parts[0].strip():
        return False
    for items, part in enumerate(parts[1:]):
        words = _ITEM.findall(part)
        if words[:1] and words[0].lower() in ("or", "and"):
            return items > 0
        if not 1 <= len(words) <= 3 or any(w.lower() in STOPWORDS for w in words):
            return False
    return False


def cut_reason(unit_text: str, sentence_texts: Sequence[str]) -> str:
    """Why a unit whose tokens occur in these sentences is not their claim, when it is
    for a reason that rules out rung 2 as well: a symbol word the sentence does not have
    there, or a list cut short under an exclusive word. ``""`` otherwise."""
    toks = tokens(unit_text)
    if not sentence_texts:
        return ""
    if not any(symbols_agree(unit_text, s) for s in sentence_texts):
        return "ANCHOR_MISMATCH: a symbol of the unit stands where its sentence has another word"
    if EXCLUSIVE & set(toks) and all(cuts_list(unit_text, s) for s in sentence_texts):
        return (
            "ANCHOR_MISMATCH: the unit stops inside its sentence's list, and its exclusive "
            "word shuts out the items it drops"
        )
    return ""
