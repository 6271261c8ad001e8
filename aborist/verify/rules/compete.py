"""A bare span against every candidate of its kind in the cited evidence
(docs/verifier.md §19.20).

The rival tests of :mod:`aborist.verify.rules.rival` ask whether one other clause holds
more of the question's terms *and* the relation the span's clause holds. This test asks
the wider question directly: of all the candidates of the span's kind the cited evidence
offers (numbers and dates, code-like tokens, capitalized names: :func:`aborist.verify.
rules.rival.span_kind`), is the span the one whose local context holds the most of the
question?

* A candidate's **context** is its clause — its sentence cut at ``;``, a colon, a dash,
  ``but``/``whereas``/``while``/``although`` and ``, and``/``, or`` — together with the
  first clause of its sentence, which names what the sentence is about.
* A context's **score** is the sum, over the question's terms it holds, of an IDF-like
  weight: ``log((n + 1) / df)`` for ``n`` cited sentences of which ``df`` hold the term.
  A term in every sentence tells the candidates apart hardly at all; a rare one does.
* The span's context also holds the sentences its support test reached (the bridges of
  §19.5 and §19.18): the two-hop answer is read with the sentence that leads to it.
* **Not rivals:** a candidate that shares a word with the span, that the question names,
  that the span's own sentence names (the bridge of a two-hop question), that stands in a
  sentence the span's test reached (the subject the span's sentence refers back to), or
  in a sentence that names the span itself.

The span loses when a rival's context holds at least two of the question's terms and two
of its relation terms (words of no name or code-like token of the question), every term
the span's context holds, more relation terms than it, and scores more than ``margin``
times the span's score: the two hops of a question (each sentence holding terms the other
lacks) never compete, and a near tie never takes a rung away. Only ever takes a rung
away; it cannot vouch for anything. Pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from aborist.verify.rules.frames import asked_type
from aborist.verify.rules.locality import Sentence, stem
from aborist.verify.rules.rival import kind_fillers, relation_terms, span_kind
from aborist.verify.text.anchors import value_keys
from aborist.verify.text.sentences import continues
from aborist.verify.text.textcanon import STOPWORDS, canonicalize, match_form, tokens

__all__ = ["clause_pieces", "competing_candidate", "term_weights"]

#: Where a sentence's clauses meet for the competition.
_CUT = re.compile(
    r"\s*(?:;|:(?=\s)|\s[-–—]\s|,\s+(?:and|or|but)\s+|"
    r"\b(?:but|whereas|while|although|though)\b)\s*",
    re.IGNORECASE,
)


def clause_pieces(text: str) -> list[str]:
    """The clauses of one sentence, cut where clauses meet (see the module text)."""
    return [c for c in (p.strip(" ,") for p in _CUT.split(canonicalize(text))) if c]


def term_weights(anchors: frozenset[str], sentences: Sequence[Sentence]) -> dict[str, float]:
    """``log((n + 1) / df)`` for every question term some of the ``n`` sentences hold."""
    n = len(sentences)
    out: dict[str, float] = {}
    for a in anchors:
        df = sum(1 for s in sentences if a in s.stems)
        if df:
            out[a] = math.log((n + 1) / df)
    return out


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(t) for t in tokens(text))


#: A capitalized word anywhere in a sentence, its first word too.
_CAP = re.compile(r"(?<![\w.])[A-Z][\w'’-]*")


def _names(text: str) -> frozenset[str]:
    """Stems of the capitalized words of ``text`` that are not stopwords."""
    words = (t for m in _CAP.finditer(canonicalize(text)) for t in tokens(m.group()))
    return frozenset(stem(t) for t in words if t not in STOPWORDS)


def _chain(cited: Sequence[Sentence], own: Sequence[Sentence]) -> set[int]:
    """Indices (in ``cited``) of the sentences that go on about the subject of the span's
    sentence: the run of sentences around it that each continue the one before (a
    pronoun or a definite reference, :func:`continues`), with the sentence they start from."""
    ids = {id(s) for s in own}
    at = [i for i, s in enumerate(cited) if id(s) in ids]
    out: set[int] = set(at)
    for i in at:
        lo = i
        while lo > 0 and continues(cited[lo - 1].toks, cited[lo].toks):
            lo -= 1
        hi = i
        while hi + 1 < len(cited) and continues(cited[hi].toks, cited[hi + 1].toks):
            hi += 1
        out |= set(range(lo, hi + 1))
    return out


def _candidates(kind: str, clause: str, question: str) -> list[tuple[str, list[str]]]:
    """The candidates of ``kind`` a clause offers, as ``(text, content tokens)``: for
    names, whole runs of capitalized words ("Craig Alexander Newmark"), never a number or
    a date."""
    if kind != "name":
        return [(f, tokens(f)) for f in kind_fillers(kind, clause, question)]
    words = set(tokens(question))
    out = []
    for m in _RUN.finditer(canonicalize(clause)):
        if m.start() == 0:
            continue  # a sentence's first word is capitalized whatever it is
        toks = [t for t in tokens(m.group()) if t not in STOPWORDS]
        if toks and not set(toks) <= words and not value_keys(toks):
            out.append((m.group(), toks))
    return out


#: A run of capitalized words, with the small words names hold ("Bank of England").
_RUN = re.compile(r"(?<![\w.])[A-Z][\w'’-]*(?:\s+(?:(?:of|de|the|and)\s+)?[A-Z][\w'’-]*)*")


def _relation(question: str, anchors: frozenset[str]) -> frozenset[str]:
    """The question's terms that name its relation, not a thing it names: not a word of a
    run of capitalized words (a one-word run opening the question is just its first
    word) nor of a code-like token (:func:`relation_terms`)."""
    canon = canonicalize(question)
    names = {
        stem(t)
        for m in _RUN.finditer(canon)
        if m.start() > 0 or len(m.group().split()) > 1
        for t in tokens(m.group())
    }
    return relation_terms(canon, anchors) - names


def _beside_asked(candidate: str, clause: str, question: str) -> bool:
    """Is the candidate an item of a list that also holds something the question names
    ("such as "The Shawshank Redemption", "The Green Mile", and "The Mist"" for a question
    naming The Green Mile)? The list then describes the question's subject; it does not
    fill its gap. Items are cut at commas and ``and``/``or``; the candidate ends its item."""
    words = set(tokens(question))
    items = [tokens(x) for x in _ITEMS.split(canonicalize(clause))]
    want = tokens(candidate)
    mine = [k for k, x in enumerate(items) if want and x[-len(want) :] == want]
    return bool(mine) and any(
        k not in mine and set(x) - STOPWORDS and set(x) <= words for k, x in enumerate(items)
    )


#: Between the items of a list.
_ITEMS = re.compile(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+")


def _linked(
    span_toks: Sequence[str], question: str, own: Sequence[Sentence], cited: Sequence[Sentence]
) -> list[Sentence]:
    """The cited sentences read with the span's own: the subject chain it stands in
    (:func:`_chain`), a sentence naming a capitalized word of the span's sentence (the
    bridge of a two-hop question), or the span, or half the span's words."""
    span_form = match_form(span_toks)
    span_stems = {stem(t) for t in span_toks if t not in STOPWORDS}
    links = _names(" ".join(s.text for s in own)) - _stems(question) - span_stems
    chain = _chain(cited, own)
    return [
        s
        for i, s in enumerate(cited)
        if i in chain
        or links & s.stems
        or span_form in match_form(s.toks)
        or 2 * len(span_stems & s.stems) >= len(span_stems) > 0
    ]


def _contexts(
    span_toks: Sequence[str],
    question: str,
    own: Sequence[Sentence],
    reached: Sequence[Sentence],
    cited: Sequence[Sentence],
) -> tuple[frozenset[str], list[tuple[str, frozenset[str]]], list[Sentence]]:
    """The stems of the span's context, ``(clause, context stems)`` for every clause
    that may offer a rival (the other clauses of the span's sentence, and every clause of
    a cited sentence not read with it; a clause's context adds its sentence's first
    clause), and the sentences read with the span (its own, those its test reached, and
    those linked to it)."""
    span_form = match_form(span_toks)
    linked = _linked(span_toks, question, own, cited)
    mine: set[str] = set()
    for s in (*reached, *linked):
        mine |= s.stems
    rivals: list[tuple[str, frozenset[str]]] = []
    for s in own:
        pieces = clause_pieces(s.text)
        head = _stems(pieces[0]) if pieces else frozenset()
        for c in pieces:
            if span_form in match_form(tokens(c)):
                mine |= _stems(c) | head
            else:
                rivals.append((c, _stems(c) | head))
    skip = {id(s) for s in (*own, *reached, *linked)}
    for s in cited:
        if id(s) not in skip:
            pieces = clause_pieces(s.text)
            head = _stems(pieces[0]) if pieces else frozenset()
            rivals.extend((c, _stems(c) | head) for c in pieces)
    return frozenset(mine), rivals, [*own, *reached, *linked]


def competing_candidate(
    span: str,
    question: str,
    anchors: frozenset[str],
    own: Sequence[Sentence],
    reached: Sequence[Sentence],
    cited: Sequence[Sentence],
    margin: float,
) -> str:
    """The rival candidate whose context scores clearly more of the question than the
    span's (see the module text), as ``"<candidate> (score a vs b)"``, or ``""``.
    ``own`` are the span's sentence(s), ``reached`` the other sentences its support test
    followed, ``cited`` every sentence of every cited object."""
    kind = span_kind(span)
    span_toks = tokens(span)
    if (
        not kind
        or len(anchors) < 2
        or not own
        or match_form(span_toks) in match_form(tokens(question))
    ):
        return ""  # a span the question names is one of its alternatives
    weights = term_weights(anchors, cited)
    relation = _relation(question, anchors)

    def score(stems: frozenset[str]) -> tuple[float, frozenset[str]]:
        got = frozenset(a for a in weights if a in stems)
        return sum(weights[a] for a in sorted(got)), got  # a fixed order: the same float every run

    mine, rivals, read_with = _contexts(span_toks, question, own, reached, cited)
    have, held = score(mine)
    held -= _loose_type(span_toks, question, read_with)
    for clause, stems in rivals:
        got, terms = score(stems)
        # a rival competes for the same slot: it holds every term the span's context does,
        # and more of the question's relation than the span's context
        if (
            len(terms) < 2
            or len(terms & relation) < 2
            or not held <= terms
            or len(terms & relation) <= len(held & relation)
            or got <= have * margin
        ):
            continue
        found = _rival_filler(kind, span_toks, clause, question, own)
        if found:
            return f"{found!r} (score {got:.2f} vs {have:.2f})"
    return ""


def _loose_type(
    span_toks: Sequence[str], question: str, context: Sequence[Sentence]
) -> frozenset[str]:
    """The stem of the question's type word ("Which *friend* …", :func:`asked_type`) when
    the span's context holds it only apart from the span: it then says what kind of thing
    answers, not which ("… he makes his *friends* unhappy; Mercutio comments …"), and no
    rival needs it. A type word in the span's own clause ("Vestfold is a *county* in
    Norway") is said of the span and stays."""
    typed = frozenset(stem(t) for t in tokens(asked_type(question)))
    if not typed:
        return typed
    span_form = match_form(span_toks)
    for s in context:
        for c in clause_pieces(s.text):
            toks = tokens(c)
            if span_form in match_form(toks) and typed & {stem(t) for t in toks}:
                return frozenset()
    return typed


def _rival_filler(
    kind: str, span_toks: Sequence[str], clause: str, question: str, own: Sequence[Sentence]
) -> str:
    """The first candidate of ``clause`` that is a rival of the span (see the module
    text), or ``""``."""
    words = set(span_toks) - STOPWORDS
    near = " ".join(match_form(s.toks) for s in own)
    asked = _stems(question)
    for text, ftoks in _candidates(kind, clause, question):
        if (
            set(ftoks) & words
            or match_form(ftoks) in near
            or {stem(t) for t in ftoks} <= asked
            or _beside_asked(text, clause, question)
        ):
            continue
        return " ".join(ftoks)
    return ""
