"""Corpus-derived concept relations, extracted from canonical chunk text at ingest.

Synonyms and rivalries used to live as hand-curated
frozensets; here they are read from the user's own documents, so every relation used at
retrieval time can be traced to the sentence that taught it (``evidence``). The patterns
are lexical and conservative (a missed relation costs a little recall; a wrong one
would inject noise into every query that touches it). Rules, documented in
docs/retrieval.md, "Concepts":

Synonyms
  * acronym definitions, both directions: ``Global Interpreter Lock (GIL)`` and
    ``GIL (Global Interpreter Lock)``; the long form is accepted only if the acronym's
    letters can be matched against it by the Schwartz-Hearst rule (first letter at a
    word start, the rest in order, scanning from the right);
  * ``X, also known as Y`` / ``X (also known as Y)``, ``also called``, ``a.k.a.``;
  * ``X, short for Y`` / ``X (short for Y)``.

Rivalries
  * ``X vs Y``, ``X vs. Y``, ``X versus Y``;
  * ``Unlike X, Y …`` and ``Compared to X, Y …``.

A concept phrase is one to :data:`MAX_PHRASE_WORDS` words, no stopword and no clause
punctuation inside; a phrase that starts with a capitalized word is only the run of
capitalized words (``PostgreSQL supports …`` gives ``PostgreSQL``). Without a part-of-
speech tagger the phrase on the open side of a pattern is held to the width of the
other side: in ``loops vs. iterators matters`` the right side is one word because the
left is, and in ``recv, short for receive`` the left side is one word because the right
is. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_PHRASE_WORDS", "Relation", "extract_relations", "normalize_phrase"]

MAX_PHRASE_WORDS = 4

_STOP = frozenset(
    {
        "a",
        "about",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "between",
        "both",
        "but",
        "by",
        "called",
        "can",
        "could",
        "did",
        "do",
        "does",
        "each",
        "either",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "here",
        "his",
        "how",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "known",
        "less",
        "many",
        "may",
        "might",
        "more",
        "most",
        "much",
        "must",
        "neither",
        "no",
        "nor",
        "not",
        "of",
        "often",
        "on",
        "only",
        "onto",
        "or",
        "other",
        "our",
        "over",
        "she",
        "short",
        "should",
        "so",
        "some",
        "sometimes",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "under",
        "us",
        "usually",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    }
)

_WORD = r"[^\W_][\w'’./+-]*"
_ACRONYM = r"[A-Z][A-Za-z0-9-]*[A-Z0-9]s?"

_PAREN_ACRONYM = re.compile(rf"\(({_ACRONYM})\)")
_ACRONYM_PAREN = re.compile(rf"\b({_ACRONYM})\s+\(([^()]{{3,80}})\)")
_ALIAS_MARK = re.compile(
    r"\s*[,(]\s*(?:also known as|also called|a\.k\.a\.?|short for|an abbreviation (?:of|for))\s+",
    re.I,
)
_VERSUS_MARK = re.compile(r"\s+(?:vs\.?|versus)\s+", re.I)
_UNLIKE_MARK = re.compile(
    r"(?:^|(?<=[.!?]\s)|(?<=\n))(?:unlike|compared (?:to|with)|in contrast to)\s+", re.I | re.M
)
_CLAUSE_END = re.compile(r"[.;:!?()\n]")
_RIGHT_END = re.compile(r"[,.;:!?()\n]")


def _left_context(text: str, end: int, *, stop: re.Pattern[str] = _CLAUSE_END) -> str:
    window = text[max(0, end - 120) : end]
    return stop.split(window)[-1]


def _right_context(text: str, start: int) -> str:
    return _RIGHT_END.split(text[start : start + 80], maxsplit=1)[0]


@dataclass(frozen=True)
class Relation:
    """``kind`` is ``synonym`` or ``rivalry``; ``a`` and ``b`` are normalized phrases."""

    kind: str
    a: str
    b: str
    evidence: str


def normalize_phrase(text: str) -> str:
    """Lower-case, single-spaced, straight apostrophes: the form lookups compare."""
    return " ".join(text.replace("’", "'").lower().split())


_EDGE_PUNCT = ".,;:'’\"“”/+-*`"


def _words(text: str) -> list[str]:
    return [w.strip(_EDGE_PUNCT) for w in text.split() if w.strip(_EDGE_PUNCT)]


def _trim(words: list[str]) -> list[str]:
    while words and words[0].lower() in _STOP:
        words = words[1:]
    while words and words[-1].lower() in _STOP:
        words = words[:-1]
    return words


def _run(words: list[str], limit: int) -> list[str]:
    """Words up to the first stopword, at most ``limit``; when the first word is
    capitalized (a name such as ``PostgreSQL``), only the run of capitalized words."""
    out: list[str] = []
    named = bool(words) and words[0][:1].isupper()
    for word in words:
        if word.lower() in _STOP or len(out) == limit or (named and not word[:1].isupper()):
            break
        out.append(word)
    return out


def _tail_phrase(text: str, limit: int = MAX_PHRASE_WORDS) -> str | None:
    """The concept phrase that ends ``text`` (see :func:`_run`, read right to left)."""
    return " ".join(reversed(_run(list(reversed(_words(text))), limit))) or None


def _head_phrase(text: str, limit: int = MAX_PHRASE_WORDS) -> str | None:
    """The concept phrase that starts ``text``: leading stopwords skipped, then
    :func:`_run`."""
    words = _words(text)
    while words and words[0].lower() in _STOP:
        words = words[1:]
    return " ".join(_trim(_run(words, limit))) or None


def _width(phrase: str | None) -> int:
    return max(1, len(phrase.split())) if phrase else 1


def _matches_acronym(short: str, long: str) -> bool:
    """Schwartz & Hearst (2003): every letter of ``short`` occurs in ``long`` in order,
    scanning right to left, and the first one starts a word."""
    letters = [c.lower() for c in short.rstrip("s") if c.isalnum()]
    text = long.lower()
    if len(letters) < 2 or not text:
        return False
    li = len(text) - 1
    for si in range(len(letters) - 1, -1, -1):
        ch = letters[si]
        while li >= 0 and (text[li] != ch or (si == 0 and li > 0 and text[li - 1].isalnum())):
            li -= 1
        if li < 0:
            return False
        li -= 1
    return True


def _long_form_before(short: str, before: str) -> str | None:
    """The shortest run of words ending ``before`` that the acronym matches, at most
    ``len(short) + 2`` words (Schwartz-Hearst's window is min(|A| + 5, 2|A|))."""
    words = before.split()
    limit = min(len(words), len(short) + 2)
    for n in range(1, limit + 1):
        candidate = " ".join(words[-n:])
        if words[-n].lower() in _STOP:
            continue
        if _matches_acronym(short, candidate) and len(candidate) > len(short):
            return candidate
    return None


def _add(out: list[Relation], kind: str, a: str | None, b: str | None, evidence: str) -> None:
    if not a or not b:
        return
    na, nb = normalize_phrase(a), normalize_phrase(b)
    if na and nb and na != nb and len(na) > 1 and len(nb) > 1:
        out.append(Relation(kind, na, nb, " ".join(evidence.split())[:200]))


def extract_relations(text: str) -> list[Relation]:
    """Every synonym and rivalry relation the rules find in ``text``, in text order
    per rule, duplicates kept (the caller deduplicates)."""
    out: list[Relation] = []
    for m in _PAREN_ACRONYM.finditer(text):
        short = m.group(1)
        start = max(0, m.start() - 160)
        before = re.split(r"[.;:!?()\n,]", text[start : m.start()])[-1]
        _add(out, "synonym", _long_form_before(short, before), short, text[start : m.end()])
    for m in _ACRONYM_PAREN.finditer(text):
        short, inner = m.group(1), m.group(2).strip()
        if len(inner.split()) <= len(short) + 2 and _matches_acronym(short, inner):
            _add(out, "synonym", short, inner, m.group(0))
    for m in _ALIAS_MARK.finditer(text):
        left, right = _left_context(text, m.start()), _right_context(text, m.end())
        alias = _head_phrase(right)
        term = _tail_phrase(left, _width(alias))
        _add(out, "synonym", term, alias, left + m.group(0) + right)
    for m in _VERSUS_MARK.finditer(text):
        left = _left_context(text, m.start(), stop=_RIGHT_END)
        right = _right_context(text, m.end())
        first = _tail_phrase(left)
        second = _head_phrase(right, _width(first))
        _add(out, "rivalry", first, second, left + m.group(0) + right)
    for m in _UNLIKE_MARK.finditer(text):
        parts = _CLAUSE_END.split(text[m.end() : m.end() + 160], maxsplit=1)[0].split(",", 1)
        if len(parts) == 2:
            _add(
                out,
                "rivalry",
                _head_phrase(parts[0]),
                _head_phrase(parts[1]),
                m.group(0) + ",".join(parts),
            )
    return out
