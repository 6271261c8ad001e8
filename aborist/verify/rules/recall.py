"""When a short verbatim unit *is* shown to answer the question (docs/verifier.md §19.18).

The bare-span rules (§19.5, §19.9, §19.14) hold a unit of at most ``bare_span_max_tokens``
tokens to its sentence, because a name or a phrase restates no relation of its own. Some
short units do state one, and some sentences say what their neighbour says; each helper
here names one such case and only ever lets a unit keep the grade its verbatim occurrence
earned — none of them finds support where there is none (the word-for-word match and its
polarity are checked first). Five of them answer before the anchor, role and rival checks
run, or take a sentence out of the rivals, and are off by default (docs/verifier.md §19.18
says which, and shows the wrong answers they would vouch for):

* :func:`whole_sentence` — the unit is a *whole sentence* of the evidence (every token of
  it, ending as that sentence ends: a full stop for a full stop, none for a list item):
  it states that sentence's claim, not a piece picked out of its context
  ("Dictionaries preserve insertion order." beside the sentence after it).
* :func:`restates_question` — the unit holds two or more of the question's own content
  words besides its filler ("i takes the value 5" for "what value does i take?"): it is
  the question's relation with the gap filled, a clause, not a bare span.
* :func:`first_hop` — a rival clause (§19.14) that names the span's sentence's subject
  right after one of the question's own nouns ("… after its *chairman* Roy Jenkins" for
  "the chairman of the Jenkins Commission") is the first hop of a two-hop question: it
  says which thing the question asks about, and the span's sentence gives the fact.
* :func:`same_filler` — a rival clause whose filler is the span's own word in another
  form ("an *Australian* businessman" beside "Sydney, *Australia*") agrees with the span.
* :func:`definite_reach` — a name that is its sentence's subject reaches the next
  sentence when that one refers back to it by its head noun ("The *Institute* of Muslim
  Minority Affairs is … . … is Director of *the Institute*."): the next sentence says
  something of the span. (A pronoun after a name that is *not* its sentence's subject is
  not read as that name: "The film starred Walter Coy. He …" may be about the film's
  star or its subject — §19.5.)
* :func:`demonstrative_back` — a sentence that opens with a demonstrative subject and a
  copula ("*This is* known as propagating the error") names or describes what the
  sentence before it states: a span there reaches back to that sentence, as a pronoun-led
  sentence reaches the one naming its subject (§19.5's subject bridge).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from aborist.verify.rules.locality import stem
from aborist.verify.text.sentences import COPULAS, PRONOUNS, continues
from aborist.verify.text.textcanon import STOPWORDS, tokens

if TYPE_CHECKING:  # pragma: no cover
    from aborist.verify.rules.locality import Sentence

__all__ = [
    "DEMONSTRATIVES",
    "continues_after_fronted",
    "definite_reach",
    "demonstrative_back",
    "first_hop",
    "restates_question",
    "same_filler",
    "whole_sentence",
]

#: Demonstrative subjects that stand for the statement before them.
DEMONSTRATIVES = frozenset(["this", "that", "these", "those"])
#: The copulas after which a demonstrative is the subject ("This is …", "That was …").
_SENTENCE_END = (".", "!", "?")
_WORD = re.compile(r"[^\W\d_]+")


def whole_sentence(text: str, toks: Sequence[str], sentence: Sentence, min_tokens: int) -> bool:
    """Is the unit the whole of ``sentence`` (the same tokens, at least ``min_tokens``),
    both ending as a sentence ends — or both without a full stop, as a list item is
    written ("Write: Includes a single String")? A heading line is not a claim."""
    if len(toks) < min_tokens or tuple(toks) != sentence.toks:
        return False
    if sentence.text.lstrip().startswith("#"):
        return False
    mine = text.rstrip().endswith(_SENTENCE_END)
    theirs = sentence.text.rstrip().rstrip("\"')]").endswith(_SENTENCE_END)
    return mine == theirs


def restates_question(question: str, toks: Sequence[str]) -> bool:
    """Does the unit hold the noun the question's ``which``/``what`` asks for, a
    lower-case content word of the question outside that which-phrase (its relation), and
    a content word the question does not have (its filler)? Then the unit is the
    question's relation with its gap filled ("i takes the *value* 5" for "what *value*
    does i *take*?"; not "Liverpool *Football Club*" for "Which *football club* has won
    …?", whose question words are the kind asked for). Capitalized words of the question
    are its names, not its relation, and do not count."""
    qt = tokens(question)
    at = next((i for i, t in enumerate(qt[:-1]) if t in {"which", "what"}), -1)
    if at < 0 or qt[at + 1] in STOPWORDS:
        return False
    kind = {stem(qt[at + 1])}
    # the which-phrase: the words after "which"/"what" up to the first stopword ("which
    # football club"); the relation is a word outside it
    phrase = set()
    for t in qt[at + 1 :]:
        if t in STOPWORDS:
            break
        phrase.add(stem(t))
    asked = {stem(w.lower()) for w in _WORD.findall(question) if w[:1].islower()}
    asked -= {stem(t) for t in STOPWORDS}
    own = [stem(t) for t in toks if t not in STOPWORDS]
    shared = {s for s in own if s in asked}
    stems = {stem(t) for t in qt}
    # the filler: a word the question does not have, or digits it does not write ("5"
    # where the question names a variable "five")
    filler = [
        t
        for t in toks
        if t not in STOPWORDS and (stem(t) not in stems or (t[:1].isdigit() and t not in qt))
    ]
    return bool(shared & kind) and bool(shared - phrase) and bool(filler)


def demonstrative_back(sentences: Sequence[Sentence], k: int) -> int:
    """Start of the sentences a span in sentence ``k`` reaches back to: ``k - 1`` when
    sentence ``k`` opens with a demonstrative subject and a copula ("This is known as …")
    and sentence ``k - 1`` is not itself a question; else ``k``."""
    if k <= 0 or k >= len(sentences):
        return k
    head = sentences[k].toks
    if len(head) < 3 or head[0] not in DEMONSTRATIVES or head[1] not in COPULAS:
        return k
    if sentences[k - 1].text.rstrip().endswith("?"):
        return k
    return k - 1


#: A fronted phrase before the subject: everything up to the sentence's first comma
#: (no clause mark or bracket inside), at most 25 tokens.
_FRONTED = re.compile(r"^([^,;:()\[\]]+),\s+(.*)$", re.S)


def continues_after_fronted(before: Sequence[str], sentence: Sentence) -> bool:
    """Does ``sentence`` continue the subject of the sentence ``before`` it *after a fronted
    phrase* ("A Democrat from Texas, *he* also served …"; "Constructed in 1964 on the Ward
    Estate, *the center* was renamed …"): the words after its first comma open as §19.5's
    pronoun-led or "the"-kind continuation does? (A sentence that opens so itself is read
    by :func:`aborist.verify.text.sentences.continues`.)"""
    m = _FRONTED.match(sentence.text.strip())
    if m is None or len(tokens(m.group(1))) > 25:
        return False
    rest = tokens(m.group(2))
    if len(rest) < 2 or (rest[0] not in PRONOUNS and rest[0] != "the"):
        return False
    return continues(before, rest)


#: A sentence's subject name: a capitalized run at its start (after an optional "The").
_LEAD = re.compile(
    r"^[\"'(]*(?:The\s+)?((?:[A-Z][^\s,;:()\"]*)(?:\s+(?:of|de|van|von|[A-Z][^\s,;:()\"]*)){0,4})"
)
#: Words between a noun and the name it introduces: "her son James", "its chairman Roy".
_BETWEEN = frozenset(["the", "a", "an", "his", "her", "its", "their", "our", "whose", "of"])


def _lead_forms(sentence: Sentence) -> list[list[str]]:
    """The token forms a sentence's subject name is written in elsewhere: whole, and
    (for three words or more) its first and last word ("Roy Harris Jenkins" → "Roy
    Jenkins")."""
    m = _LEAD.match(sentence.text)
    if m is None:
        return []
    lead = [t for t in tokens(m.group(1)) if t not in STOPWORDS]
    if len(lead) < 2:
        return []  # one capitalized word is any sentence's first word
    return [lead, [lead[0], lead[-1]]] if len(lead) >= 3 else [lead]


def first_hop(question: str, anchors: frozenset[str], own: Sentence, other: Sentence) -> bool:
    """Does ``other`` name the subject of the span's sentence ``own`` right after a noun
    that is one of the question's terms (``anchors``), at most two determiners or
    possessives between ("her *son* James Chaney", "its *chairman* Roy Jenkins")? Then
    ``other`` is the hop that leads from the question to ``own``'s subject."""
    nouns = anchors & {stem(w.lower()) for w in _WORD.findall(question) if w[:1].islower()}
    if not nouns:
        return False
    toks = other.toks
    for form in _lead_forms(own):
        n = len(form)
        for i in range(1, len(toks) - n + 1):
            if list(toks[i : i + n]) != form:
                continue
            j = i - 1
            while j >= 0 and i - j <= 3 and toks[j] in _BETWEEN:
                j -= 1
            if j >= 0 and i - j <= 3 and stem(toks[j]) in nouns:
                return True
    return False


def same_filler(span_toks: Sequence[str], other: Sentence) -> bool:
    """Does ``other`` hold every content stem of a one-word span in another written form
    ("Australian" for "Australia")? Its filler is then the span's own word."""
    content = [t for t in span_toks if t not in STOPWORDS]
    if len(content) != 1 or not content[0].isalpha():
        return False
    word = content[0]
    return stem(word) in other.stems and word not in other.toks


def _head(span_toks: Sequence[str]) -> str:
    """The head noun of a name: the word before its first ``of`` ("Institute of Muslim
    Minority Affairs" → ``institute``), else its last word."""
    words = [t for t in span_toks if t not in ("the", "a", "an")]
    if "of" in words[1:]:
        return words[words.index("of", 1) - 1]
    return words[-1] if words else ""


def definite_reach(span: str, sentences: Sequence[Sentence], k: int) -> int:
    """End (exclusive) of the sentences a name in sentence ``k`` reaches: ``k + 2`` when
    the span (two words or more, capitalized) opens sentence ``k`` (after an optional
    "the") and sentence ``k + 1`` names "the <its head noun>" not followed by another
    capitalized word; else ``0``."""
    toks = tokens(span)
    words = [w for w in re.findall(r"[^\W_]+", span) if w.lower() not in ("the", "a", "an")]
    if len(toks) < 2 or not words or not all(w[:1].isupper() or w == "of" for w in words):
        return 0
    if k + 1 >= len(sentences):
        return 0
    own, nxt = sentences[k].toks, sentences[k + 1]
    lead = list(own[1:] if own[:1] == ("the",) and toks[:1] != ["the"] else own)
    if lead[: len(toks)] == list(toks):
        head = _head(toks)
        # "the Institute", not "the Institute of Technology" (the lookahead is case-sensitive)
        pat = re.compile(r"\b[Tt]he\s+(?i:" + re.escape(head) + r")\b(?!\s+(?:of\s+)?[A-Z])")
        if head and pat.search(nxt.text) and head.capitalize() in nxt.text:
            return k + 2
    return 0
