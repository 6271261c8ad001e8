"""Lexical keys shared by retrieval's query builder and its title filter and rerank.

Tokens are runs of Unicode letters and digits (``[^\\W_]+``), the same split FTS5's
``unicode61`` tokenizer makes, lower-cased. A *key* is a token after a light English
suffix strip (:func:`light_stem`), so ``forecasting`` / ``forecasts`` / ``forecast``
share a key in Python the way Porter stemming makes them share an FTS5 term. Keys are
used only for the coverage, title and purity features, never hashed, so they are not
part of any version. Rules: docs/retrieval.md, "Terms".
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "STOPWORDS",
    "content_keys",
    "edit_distance",
    "key_of",
    "light_stem",
    "sentence_keys",
    "sentences",
    "tokens",
]

_TOKEN = re.compile(r"[^\W_]+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]’”]*\s+|\n+")

#: English function words and question words; dropped from queries unless a question
#: has nothing else.
STOPWORDS = frozenset(
    {
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "cannot",
        "could",
        "couldn",
        "describe",
        "did",
        "didn",
        "do",
        "does",
        "doesn",
        "doing",
        "don",
        "down",
        "during",
        "each",
        "either",
        "else",
        "etc",
        "ever",
        "every",
        "explain",
        "few",
        "for",
        "from",
        "further",
        "get",
        "gets",
        "give",
        "got",
        "had",
        "hadn",
        "has",
        "hasn",
        "have",
        "haven",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "however",
        "i",
        "if",
        "in",
        "into",
        "is",
        "isn",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "list",
        "ll",
        "me",
        "mean",
        "means",
        "meant",
        "might",
        "more",
        "most",
        "much",
        "must",
        "my",
        "myself",
        "name",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "one",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "per",
        "please",
        "re",
        "s",
        "same",
        "shall",
        "shan",
        "she",
        "should",
        "shouldn",
        "so",
        "some",
        "such",
        "t",
        "tell",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "thus",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "ve",
        "very",
        "via",
        "was",
        "wasn",
        "we",
        "were",
        "weren",
        "what",
        "whats",
        "when",
        "where",
        "whether",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "won",
        "would",
        "wouldn",
        "yet",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    }
)

_SUFFIXES = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("fulness", "ful"),
    ("iveness", "ive"),
    ("ousness", "ous"),
    ("ments", "ment"),
    ("ingly", ""),
    ("edly", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ing", ""),
    ("ed", ""),
    ("es", ""),
    ("s", ""),
)


def tokens(text: str) -> list[str]:
    """Lower-cased letter/digit runs, in order."""
    return _TOKEN.findall(text.lower())


@lru_cache(maxsize=65536)
def light_stem(token: str) -> str:
    """Strip one common English inflectional suffix from a token of at least 4 letters,
    keeping a stem of at least 3 characters; digits and short tokens are unchanged."""
    if len(token) < 4 or not token.isalpha():
        return token
    for suffix, repl in _SUFFIXES:
        if token.endswith(suffix):
            stem = token[: -len(suffix)] + repl
            if len(stem) < 3 or (suffix == "s" and token.endswith(("ss", "us", "is"))):
                return token
            if suffix in ("ing", "ed", "edly", "ingly") and len(stem) > 3 and stem[-1] == stem[-2]:
                stem = stem[:-1]
            if suffix == "es" and not stem.endswith(("s", "x", "z", "ch", "sh")):
                stem = token[:-1]
            return stem.rstrip("e") if len(stem) > 4 else stem
    return token.rstrip("e") if len(token) > 4 else token


def key_of(token: str) -> str:
    return light_stem(token)


def content_keys(text: str) -> set[str]:
    """The distinct keys of the non-stopword tokens of ``text``."""
    return {light_stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS}


def sentences(text: str) -> list[str]:
    """Sentences of canonical text: split after ``.``/``!``/``?`` (and closing quotes or
    brackets) before whitespace, and at line breaks."""
    return [s for s in _SENTENCE_BREAK.split(text) if s.strip()]


def sentence_keys(text: str) -> str:
    """One line per sentence holding its distinct keys, each line padded with spaces so
    ``" key " in line`` is a membership test; stored per chunk for the density feature."""
    lines = []
    for sentence in sentences(text):
        keys = dict.fromkeys(light_stem(t) for t in _TOKEN.findall(sentence.lower()))
        if keys:
            lines.append(f" {' '.join(keys)} ")
    return "\n".join(lines)


def edit_distance(a: str, b: str, limit: int) -> int:
    """Damerau-Levenshtein distance (optimal string alignment: insertions, deletions,
    substitutions and transpositions of adjacent letters) between ``a`` and ``b``, or
    ``limit + 1`` as soon as it is known to exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, before[j - 2] + 1)
            current[j] = best
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return previous[-1] if previous[-1] <= limit else limit + 1
