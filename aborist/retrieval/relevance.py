"""Lexical relevance features of a chunk for a question (docs/retrieval.md, "Rerank").

Pure functions over what a shard stores per chunk (``sentence_keys``: one line per
sentence, each holding the sentence's distinct keys padded with spaces) and the chunk's
title and section. A question is given as *weighted keys*: ``(key, " key ", idf)``
triples (:meth:`aborist.corpus.shard_reader.ShardReader.key_weights`), so every share
below is IDF-weighted: a rare word in common counts for more than a common one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from aborist.corpus.lexicon import STOPWORDS, light_stem, tokens

__all__ = [
    "Heading",
    "WeightedKey",
    "body_features",
    "contains_phrase",
    "heading_of",
    "title_features",
]

WeightedKey = tuple[str, str, float]


@dataclass(frozen=True)
class Heading:
    """Tokens and keys of a chunk's title + section, and the title's content keys."""

    tokens: tuple[str, ...]
    keys: frozenset[str]
    title_keys: frozenset[str]


@lru_cache(maxsize=8192)
def heading_of(title: str, section: str) -> Heading:
    """Cached: every chunk of a document shares its title."""
    toks = tuple(tokens(f"{title} {section}"))
    return Heading(
        tokens=toks,
        keys=frozenset(light_stem(t) for t in toks),
        title_keys=frozenset(light_stem(t) for t in tokens(title) if t not in STOPWORDS),
    )


def body_features(
    sentence_keys: str, weights: Sequence[WeightedKey], total: float
) -> tuple[float, float]:
    """(coverage, density): the weighted share of the question's keys in the chunk, and
    the same share for its best single sentence (keys that occur together)."""
    present = [(padded, w) for _, padded, w in weights if padded in sentence_keys]
    held = 0.0
    for _, w in present:
        held += w
    best = held
    if len(present) > 1:
        best = 0.0
        for line in sentence_keys.split("\n"):
            score = 0.0
            for padded, w in present:
                if padded in line:
                    score += w
            if score > best:
                best = score
                if best >= held:
                    break
    return held / total, best / total


def title_features(
    heading: Heading, weights: Sequence[WeightedKey], total: float
) -> tuple[float, float]:
    """(title boost, title purity): the weighted share of the question's keys in title +
    section, and the share of the title's own content keys that the question holds."""
    question_keys = {k for k, _, _ in weights}
    boost = sum(w for k, _, w in weights if k in heading.keys) / total
    content = heading.title_keys
    purity = len(content & question_keys) / len(content) if content else 0.0
    return boost, purity


def contains_phrase(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Whether the token sequence ``needle`` occurs in ``haystack``."""
    n = len(needle)
    if n == 0 or needle[0] not in haystack:
        return False
    want = list(needle)
    return any(list(haystack[i : i + n]) == want for i in range(len(haystack) - n + 1))
