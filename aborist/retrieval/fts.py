"""Questions → FTS5 MATCH expressions in which every user term is an escaped string.

FTS5's query language gives meaning to ``AND``/``OR``/``NOT``/``NEAR``, quotes, ``*``,
``^``, ``:`` column filters, ``+``, ``-`` and parentheses. A question is *text*, so each
of its terms is emitted only as an FTS5 string literal (``"…"`` with ``"`` doubled,
https://sqlite.org/fts5.html §3.1); the only operators in an expression are the ``AND``
/ ``OR`` / ``NEAR(…, n)`` this module writes itself. A question therefore can never raise
a syntax error or select a column, whatever it contains. Rules: docs/retrieval.md,
"Query".

A *unit* is one whitespace-separated word of the question reduced to its letter/digit
tokens: ``DC-SIGNR`` becomes the phrase ``"dc signr"`` (FTS5 matches the tokens
adjacent, as they were written); a possessive ``'s`` is dropped (``Rust's`` → ``rust``).
Units made only of stopwords are dropped unless nothing else is left, or unless a
keyword-like stopword is the subject of the question (:data:`KEYWORD_STOPWORDS`: written
as code, or naming a construct as in ``the with statement``); duplicates are dropped;
at most :data:`MAX_UNITS` are kept. Consecutive units close together in the question
form *proximity pairs* (:func:`proximity_pairs`), searched with ``NEAR`` to favour chunks
where they occur close together (a sequential-dependence boost).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from aborist.corpus.lexicon import STOPWORDS, light_stem, tokens

__all__ = [
    "KEYWORD_STOPWORDS",
    "MAX_PAIRS",
    "MAX_UNITS",
    "NEAR_DISTANCE",
    "PAIR_GAP",
    "SYNTAX_NOUNS",
    "ProximityPair",
    "QueryTerms",
    "fts_and",
    "fts_near",
    "fts_or",
    "fts_string",
    "proximity_pairs",
    "query_terms",
    "query_units",
]

MAX_UNITS = 32
#: Consecutive units at most this many words apart in the question (so with at most two
#: dropped words between them, "cause of HIV") form a proximity pair.
PAIR_GAP = 3
#: At most this many proximity pairs per question, in question order.
MAX_PAIRS = 10
#: ``NEAR(a b, 6)``: at most 6 tokens between the two, an unordered window of 8 tokens
#: (the window of the sequential dependence model, Metzler & Croft 2005).
NEAR_DISTANCE = 6

#: Stopwords that are also keywords of programming and query languages. Dropped like any
#: stopword, unless the question makes one its subject (see :func:`query_terms`).
KEYWORD_STOPWORDS = frozenset(
    {"and", "as", "do", "else", "for", "from", "if", "in", "is", "let", "not", "or",
     "then", "until", "where", "while", "with"}
)  # fmt: skip
#: Nouns that name a language construct: a keyword-like stopword after an article and
#: right before one of them is the subject (``the else clause``, ``a for loop``).
SYNTAX_NOUNS = frozenset(
    {"binding", "bindings", "block", "blocks", "branch", "branches", "clause", "clauses",
     "construct", "constructs", "declaration", "declarations", "expression",
     "expressions", "keyword", "keywords", "loop", "loops", "operator", "operators",
     "statement", "statements", "syntax"}
)  # fmt: skip

_POSSESSIVE = re.compile(r"['’]s\W*$", re.IGNORECASE)
_CODE_QUOTES = "`'\"‘’“”"


@dataclass(frozen=True)
class QueryTerms:
    """The question's search units and what retrieval needs to know about them."""

    units: tuple[str, ...]
    #: the index of each unit's word in the question (for proximity pairs)
    positions: tuple[int, ...]
    #: units holding keyword-like stopwords kept as the subject
    kept: tuple[str, ...]
    #: every word's tokens, stopwords included (the spans of proximity pairs)
    words: tuple[tuple[str, ...], ...] = ()

    @property
    def keys(self) -> frozenset[str]:
        """Light-stemmed content keys of the units: stopwords are left out, except in
        kept units; a question of stopwords only keeps them all."""
        kept = set(self.kept)
        keys = {
            light_stem(t) for u in self.units for t in u.split() if t not in STOPWORDS or u in kept
        }
        return frozenset(keys or {light_stem(t) for u in self.units for t in u.split()})


def fts_string(text: str) -> str:
    """``text`` as one FTS5 string literal (sqlite.org/fts5.html §3.1)."""
    return '"' + text.replace('"', '""') + '"'


def _as_code(word: str) -> bool:
    """Whether the word is written as code or quoted: `with`, "else", 'if'."""
    return (
        len(word) >= 3 and word[0] in _CODE_QUOTES and word.rstrip("?.,;:!)")[-1:] in (_CODE_QUOTES)
    )


def _word_tokens(word: str) -> list[str]:
    toks = tokens(word)
    if len(toks) > 1 and toks[-1] == "s" and _POSSESSIVE.search(word):
        toks = toks[:-1]  # Rust's → rust: the index holds "rust" in "Rust's" too
    return toks


def query_terms(question: str) -> QueryTerms:
    """The question's search units (docs/retrieval.md, "Query").

    A keyword-like stopword (:data:`KEYWORD_STOPWORDS`) is kept when it is the subject:
    written as code (`` `with` ``, ``"else"``), or in a run of at most two such words that
    follows an article (``a``, ``an``, ``the``; or starts the question) and comes right
    before a construct noun (:data:`SYNTAX_NOUNS`); the run and the noun then form one
    phrase unit (``the with statement`` → ``"with statement"``, ``an if let
    expression`` → ``"if let expression"``). Without the article the word is most likely
    a preposition (``work with loops``, ``as provided in clause 5``) and is dropped.
    """
    words = question.split()
    toks = [_word_tokens(w) for w in words]
    units: list[str] = []
    positions: list[int] = []
    kept: list[str] = []
    fallback: list[tuple[str, int]] = []

    def keyword(i: int) -> bool:
        return len(toks[i]) == 1 and toks[i][0] in KEYWORD_STOPWORDS

    def add(unit: str, pos: int, subject: bool = False) -> None:
        if unit not in units:
            units.append(unit)
            positions.append(pos)
            if subject:
                kept.append(unit)

    i = 0
    while i < len(words):
        if not toks[i]:
            i += 1
            continue
        if keyword(i):
            run = i
            while run < len(words) and run - i < 2 and keyword(run) and not _as_code(words[run]):
                run += 1
            noun = toks[run] if i < run < len(words) else []
            introduced = i == 0 or toks[i - 1] in (["a"], ["an"], ["the"])
            if introduced and len(noun) == 1 and noun[0] in SYNTAX_NOUNS:
                add(" ".join([*(toks[j][0] for j in range(i, run)), noun[0]]), i, True)
                i = run + 1
                continue
            if _as_code(words[i]):
                add(toks[i][0], i, True)
                i += 1
                continue
        unit = " ".join(toks[i])
        if all(t in STOPWORDS for t in toks[i]):
            if unit not in (u for u, _ in fallback):
                fallback.append((unit, i))
        else:
            add(unit, i)
        i += 1
    if not units:
        units = [u for u, _ in fallback]
        positions = [p for _, p in fallback]
    return QueryTerms(
        tuple(units[:MAX_UNITS]),
        tuple(positions[:MAX_UNITS]),
        tuple(kept),
        tuple(tuple(t) for t in toks),
    )


def query_units(question: str) -> list[str]:
    """The question's search units (see :func:`query_terms`)."""
    return list(query_terms(question).units)


@dataclass(frozen=True)
class ProximityPair:
    """Two consecutive units close together in the question, and the question's words
    from the first to the second (``span``, stopwords included)."""

    a: str
    b: str
    span: str

    def boost(self, distance: int = NEAR_DISTANCE) -> list[str]:
        """The FTS5 groups that reward a chunk holding the pair close together: the
        exact phrase ``"a b"`` when the two are adjacent in the question (the ordered
        window), and ``NEAR("a" "b", distance)`` (the unordered window)."""
        near = fts_near(self.a, self.b, distance)
        return [fts_string(self.span), near] if self.span == f"{self.a} {self.b}" else [near]

    def to_dict(self) -> dict[str, str]:
        return {"a": self.a, "b": self.b, "span": self.span}


def proximity_pairs(
    units: Sequence[str],
    positions: Sequence[int],
    words: Sequence[Sequence[str]],
    *,
    gap: int = PAIR_GAP,
) -> list[ProximityPair]:
    """Consecutive units at most ``gap`` words apart in the question, at most
    :data:`MAX_PAIRS`: the pairs a chunk should hold close together, and in the order
    and wording of the question (``span``, the words from the first unit's to the
    second's). ``words`` are the question's words' tokens (:attr:`QueryTerms.words`); a
    pair whose units are not those words (a rewritten unit) has no span."""
    pairs: list[ProximityPair] = []
    for (a, pa), (b, pb) in pairwise(zip(units, positions, strict=True)):
        if not 0 < pb - pa <= gap:
            continue
        first = words[pa] if pa < len(words) else ()
        last = words[pb] if pb < len(words) else ()
        if " ".join(first) == a and " ".join(last) == b:
            span = " ".join(t for w in words[pa : pb + 1] for t in w)
        else:
            span = ""
        pair = ProximityPair(a, b, span)
        if pair not in pairs:
            pairs.append(pair)
    return pairs[:MAX_PAIRS]


def fts_near(a: str, b: str, distance: int = NEAR_DISTANCE) -> str:
    """``NEAR("a" "b", distance)``: both, at most ``distance`` tokens apart."""
    return f"NEAR({fts_string(a)} {fts_string(b)}, {int(distance)})"


def fts_and(units: Sequence[str], boost: Sequence[str] = (), anchor: str | None = None) -> str:
    """Every unit required. With ``boost`` (e.g. :func:`fts_near` groups) and ``anchor``
    (one of ``units``), ``AND (boost… OR "anchor")`` is added: it matches exactly the rows
    the units match (the anchor is required anyway), so the boost groups only add to
    the BM25 score of rows where they hold."""
    expr = " AND ".join(fts_string(u) for u in units)
    if boost and anchor is not None and anchor in units:
        expr += " AND (" + " OR ".join([*boost, fts_string(anchor)]) + ")"
    return expr


def fts_or(units: Sequence[str], boost: Sequence[str] = ()) -> str:
    """Any unit. ``boost`` groups add no rows (each needs its units, already OR'ed) and
    add to the BM25 score of rows where they hold."""
    return " OR ".join([*(fts_string(u) for u in units), *boost])
