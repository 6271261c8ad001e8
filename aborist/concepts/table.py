"""The concept table used at retrieval: synonym pools and rivalries from one or more shards.

Matching is on token sequences (``[^\\W_]+`` runs of the lower-cased text), so
``SARS-CoV-2`` in a question matches ``sars-cov-2`` in a definition however it was
punctuated. Synonym pools are the connected components of the synonym pairs (union-find):
if ``GIL`` = ``global interpreter lock`` and ``global interpreter lock`` = ``the lock``
then all three are one pool. Rules: docs/retrieval.md, "Concepts". Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "COMPARE_PHRASING",
    "ConceptTable",
    "RivalryHit",
    "SynonymInjection",
    "has_compare_phrasing",
    "phrase_tokens",
]

_TOKEN = re.compile(r"[^\W_]+")

#: A question with any of these is comparative: rivalry exclusion is off for it.
COMPARE_PHRASING = re.compile(
    r"\b(?:vs\.?|versus|compar\w*|contrast\w*|differ\w*|distinguish\w*|unlike|"
    r"similar\w*|better|worse|prefer\w*|rather than|instead of|as opposed to|"
    r"pros and cons|advantages?|disadvantages?|trade-?offs?|which\b[^?]*\bor)\b",
    re.I,
)

#: Phrases that never act as synonym keys: acronyms that collide with common words.
_UNMATCHABLE = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "for",
        "he",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "of",
        "on",
        "or",
        "so",
        "the",
        "to",
        "up",
        "us",
        "we",
    }
)


def phrase_tokens(text: str) -> tuple[str, ...]:
    """The token sequence a phrase or question is matched by."""
    return tuple(_TOKEN.findall(text.lower()))


def has_compare_phrasing(question: str) -> bool:
    """True when the question asks for a comparison (``vs``, ``compare``, ``differ``,
    ``better``, ``X or Y`` …); see :data:`COMPARE_PHRASING`."""
    return COMPARE_PHRASING.search(question) is not None


def _positions(haystack: Sequence[str], needle: Sequence[str]) -> list[int]:
    n = len(needle)
    if n == 0 or n > len(haystack):
        return []
    first, rest = needle[0], list(needle[1:])
    out: list[int] = []
    start = 0
    while True:
        try:
            i = haystack.index(first, start)
        except ValueError:
            return out
        if list(haystack[i + 1 : i + n]) == rest:
            out.append(i)
        start = i + 1


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    if n == 0 or n > len(haystack) or needle[0] not in haystack:
        return False
    return bool(_positions(haystack, needle))


def _count(haystack: Sequence[str], needle: Sequence[str]) -> int:
    return len(_positions(haystack, needle))


@dataclass(frozen=True)
class SynonymInjection:
    """``matched`` occurs in the question; ``added`` are the rest of its pool."""

    matched: str
    added: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"matched": self.matched, "added": list(self.added)}


@dataclass(frozen=True)
class RivalryHit:
    """Why a chunk was excluded: the question is about ``concept``, the chunk about its
    rival ``rival`` (``where`` is ``title`` or ``body``)."""

    concept: str
    rival: str
    where: str

    def to_dict(self) -> dict[str, str]:
        return {"concept": self.concept, "rival": self.rival, "where": self.where}


@dataclass
class ConceptTable:
    """Synonym pairs and rivalry pairs, merged from any number of shards."""

    synonyms: set[tuple[str, str]] = field(default_factory=set)
    rivalries: set[tuple[str, str]] = field(default_factory=set)
    _pools: dict[str, frozenset[str]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _by_first: dict[str, list[str]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _rival_index: dict[str, set[tuple[str, str]]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _aliases_cache: dict[str, list[tuple[str, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def from_pairs(
        cls,
        synonyms: Iterable[tuple[str, str]] = (),
        rivalries: Iterable[tuple[str, str]] = (),
    ) -> ConceptTable:
        table = cls()
        table.add(synonyms=synonyms, rivalries=rivalries)
        return table

    def add(
        self,
        *,
        synonyms: Iterable[tuple[str, str]] = (),
        rivalries: Iterable[tuple[str, str]] = (),
    ) -> None:
        for a, b in synonyms:
            ta, tb = " ".join(phrase_tokens(a)), " ".join(phrase_tokens(b))
            if ta and tb and ta != tb:
                self.synonyms.add((min(ta, tb), max(ta, tb)))
        for a, b in rivalries:
            ta, tb = " ".join(phrase_tokens(a)), " ".join(phrase_tokens(b))
            if ta and tb and ta != tb:
                self.rivalries.add((min(ta, tb), max(ta, tb)))
        self._pools = None
        self._by_first = None
        self._rival_index = None
        self._aliases_cache = {}

    def pools(self) -> dict[str, frozenset[str]]:
        """phrase → its pool (connected component of the synonym pairs)."""
        if self._pools is not None:
            return self._pools
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a, b in sorted(self.synonyms):
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        groups: dict[str, set[str]] = {}
        for phrase in parent:
            groups.setdefault(find(phrase), set()).add(phrase)
        self._pools = {p: frozenset(g) for g in groups.values() for p in g}
        return self._pools

    def _phrases_by_first_token(self) -> dict[str, list[str]]:
        """Pool phrases indexed by their first token, longest first, for fast lookup."""
        if self._by_first is None:
            index: dict[str, list[str]] = {}
            for phrase in sorted(self.pools(), key=lambda p: (-len(p.split()), p)):
                if phrase not in _UNMATCHABLE:
                    index.setdefault(phrase.split()[0], []).append(phrase)
            self._by_first = index
        return self._by_first

    def synonym_injections(self, question: str) -> list[SynonymInjection]:
        """For every pool phrase that occurs in the question (longest first, no overlap
        of the same pool twice), the other members of its pool, sorted."""
        tokens = phrase_tokens(question)
        pools = self.pools()
        index = self._phrases_by_first_token()
        found = sorted(
            {p for t in set(tokens) for p in index.get(t, ()) if _contains(tokens, p.split())},
            key=lambda p: (-len(p.split()), p),
        )
        seen_pools: set[frozenset[str]] = set()
        out: list[SynonymInjection] = []
        for phrase in found:
            pool = pools[phrase]
            if pool in seen_pools:
                continue
            seen_pools.add(pool)
            added = tuple(
                sorted(p for p in pool if p != phrase and not _contains(tokens, p.split()))
            )
            if added:
                out.append(SynonymInjection(matched=phrase, added=added))
        return out

    def expand(self, phrase: str) -> tuple[str, ...]:
        """The phrase's pool (itself first, then the rest sorted); itself alone if unknown."""
        key = " ".join(phrase_tokens(phrase))
        pool = self.pools().get(key, frozenset({key}))
        return (key, *sorted(pool - {key}))

    def _aliases(self, phrase: str) -> list[tuple[str, ...]]:
        cached = self._aliases_cache.get(phrase)
        if cached is None:
            cached = [tuple(p.split()) for p in self.expand(phrase)]
            self._aliases_cache[phrase] = cached
        return cached

    def _rivalries_by_first_token(self) -> dict[str, set[tuple[str, str]]]:
        if self._rival_index is None:
            index: dict[str, set[tuple[str, str]]] = {}
            for pair in self.rivalries:
                for alias in (*self._aliases(pair[0]), *self._aliases(pair[1])):
                    if alias:
                        index.setdefault(alias[0], set()).add(pair)
            self._rival_index = index
        return self._rival_index

    def rival_first_tokens(self, pairs: Sequence[tuple[str, str]]) -> set[str]:
        """First tokens of every alias of every rival in ``pairs``: a chunk containing
        none of them cannot be about a rival (a cheap pre-check for retrieval)."""
        return {alias[0] for _, rival in pairs for alias in self._aliases(rival) if alias}

    def rivals_in_question(self, question: str) -> list[tuple[str, str]]:
        """(concept, rival) pairs where the question names the concept (or a synonym of
        it) and not the rival (nor a synonym of it)."""
        tokens = phrase_tokens(question)
        index = self._rivalries_by_first_token()
        # only rivalries with an alias starting with one of the question's tokens
        maybe = {pair for t in set(tokens) for pair in index.get(t, ())}
        out: list[tuple[str, str]] = []
        for a, b in sorted(maybe):
            a_in = any(_contains(tokens, alias) for alias in self._aliases(a))
            b_in = any(_contains(tokens, alias) for alias in self._aliases(b))
            if a_in and not b_in:
                out.append((a, b))
            elif b_in and not a_in:
                out.append((b, a))
        return out

    def rivalry_hit(
        self, question: str, title: str, body: str, *, comparative: bool | None = None
    ) -> RivalryHit | None:
        """The reason to exclude a chunk (title = document title + section), or None.

        Comparative questions exclude nothing; otherwise see :meth:`rivalry_hit_tokens`.
        """
        if comparative is None:
            comparative = has_compare_phrasing(question)
        if comparative:
            return None
        return self.rivalry_hit_tokens(
            self.rivals_in_question(question), phrase_tokens(title), phrase_tokens(body)
        )

    def rivalry_hit_tokens(
        self,
        pairs: Sequence[tuple[str, str]],
        title_tokens: Sequence[str],
        body_tokens: Sequence[str],
    ) -> RivalryHit | None:
        """A chunk is about the rival when the rival is in its title and the question's
        concept appears in neither title nor body, or when the rival occurs at least twice
        in the body and the concept not at all. ``pairs`` come from
        :meth:`rivals_in_question`."""
        for concept, rival in pairs:
            concept_aliases, rival_aliases = self._aliases(concept), self._aliases(rival)
            if any(
                _contains(title_tokens, c) or _contains(body_tokens, c) for c in concept_aliases
            ):
                continue
            if any(_contains(title_tokens, r) for r in rival_aliases):
                return RivalryHit(concept, rival, "title")
            if sum(_count(body_tokens, r) for r in rival_aliases) >= 2:
                return RivalryHit(concept, rival, "body")
        return None
