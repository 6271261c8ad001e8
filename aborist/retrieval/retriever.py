"""The retrieval half of a query (docs/retrieval.md).

``retrieve(question, shards)`` walks the shards and returns a :class:`RetrievalResult`
that records every decision, so the retrieval event can carry it and an auditor can see
why each chunk was or was not used:

1. **Query.** Each user term becomes an escaped FTS5 string (:mod:`aborist.retrieval.fts`:
   possessives dropped, keyword-like stopwords kept when they are the subject). A unit no
   chunk of the shards holds is rewritten (:class:`QueryRewrite`: letters and digits
   split, a phrase relaxed to its words, a long word spelling-corrected against the
   shards' vocabulary, or dropped). Consecutive units close together in the question
   add proximity boosts (``NEAR`` and exact-phrase groups) that only raise the BM25 score
   of chunks holding them close together.
2. **AND → OR.** BM25 (FTS5 ``bm25()`` with column weights :data:`BM25_WEIGHTS`) over all
   requested shards with every term required, if at least :data:`MIN_AND_HITS` chunks
   match that way (counted without ranking); otherwise with any term allowed plus the
   synonym pools of the question's concepts (synonym-pool injection).
3. **Title relevance filter**, four accept paths tried in order: ``title`` (a question
   key is in the document title or section heading), ``synonym`` (an injected synonym
   is in the chunk), ``coverage`` (the body holds at least :data:`COVERAGE_ACCEPT` of the
   question's IDF-weighted keys), ``rank`` (one of the :data:`RANK_ACCEPT` best BM25
   hits). Anything else is rejected.
4. **Rerank** of accepted chunks by BM25 (normalized to the best hit) + body coverage +
   sentence density (the best single sentence's coverage) + title boost + source role +
   title purity, weights in :data:`RERANK_WEIGHTS`; coverage, density and title boost
   weigh each question key by its IDF in the chunk's shard.
5. **Rivalry exclusion**: for a question without compare phrasing, drop chunks about a
   rival of the question's concept (:meth:`aborist.concepts.ConceptTable.rivalry_hit`).
6. **Budget**: chunks in rerank order while their UTF-8 text fits ``budget_bytes``
   (60 KB by default); a chunk that does not fit is skipped and smaller ones still tried.

Pure of the ledger: reads shard files, writes nothing. The rules and constants are
documented, with their reasons, in docs/retrieval.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from aborist.concepts.table import (
    ConceptTable,
    has_compare_phrasing,
    phrase_tokens,
)
from aborist.corpus.lexicon import STOPWORDS, light_stem
from aborist.corpus.shard_reader import ShardReader, ShardRef, open_readers
from aborist.errors import InputError, require_question
from aborist.retrieval.fts import (
    MAX_PAIRS,
    NEAR_DISTANCE,
    PAIR_GAP,
    QueryTerms,
    fts_and,
    fts_or,
    proximity_pairs,
    query_terms,
)
from aborist.retrieval.records import (
    Candidate,
    RetrievalResult,
    RetrievedChunk,
    chunk_identity,
)
from aborist.retrieval.relevance import (
    Heading,
    WeightedKey,
    body_features,
    contains_phrase,
    heading_of,
    title_features,
)
from aborist.retrieval.rewrite import (
    SPELLING_MIN_LETTERS,
    SPELLING_WIDE_LETTERS,
    SURFACE_COUNT_LIMIT,
    count_hits,
    repair_units,
    unit_keys,
)

__all__ = [
    "BM25_WEIGHTS",
    "COVERAGE_ACCEPT",
    "DEFAULT_BUDGET_BYTES",
    "MIN_AND_HITS",
    "RANK_ACCEPT",
    "RERANK_WEIGHTS",
    "ROLE_WEIGHTS",
    "Retriever",
    "retrieve",
]

DEFAULT_BUDGET_BYTES = 60_000
CANDIDATES_PER_SHARD = 40
MIN_AND_HITS = 5
#: FTS5 bm25() column weights for (title, section, body).
BM25_WEIGHTS = (2.0, 1.5, 1.0)
COVERAGE_ACCEPT = 0.34
RANK_ACCEPT = 10
RERANK_WEIGHTS = {
    "bm25": 1.0,
    "coverage": 1.0,
    "density": 1.0,
    "title": 0.3,
    "role": 0.1,
    "purity": 0.1,
}
ROLE_WEIGHTS = {"primary": 1.0, "secondary": 0.6, "commentary": 0.3}
OTHER_ROLE_WEIGHT = 0.5


def _search(readers: list[ShardReader], expr: str, found_by: str, limit: int) -> list[Candidate]:
    out = [
        Candidate(r.ref.name, rowid, -score, found_by)
        for r in readers
        for rowid, score in r.match(expr, limit, BM25_WEIGHTS)
    ]
    out.sort(key=lambda c: (-c.bm25, c.shard, c.rowid))
    for rank, cand in enumerate(out, start=1):
        cand.bm25_rank = rank
    return out


def _by_shard(candidates: Sequence[Candidate]) -> dict[str, dict[int, Candidate]]:
    out: dict[str, dict[int, Candidate]] = {}
    for c in candidates:
        out.setdefault(c.shard, {})[c.rowid] = c
    return out


def _fill_details(readers: list[ShardReader], candidates: list[Candidate]) -> None:
    """Everything the filter, rerank and context read, texts included: nearly every
    accepted chunk makes the 60 KB budget, so one query beats two."""
    wanted = _by_shard(candidates)
    for r in readers:
        index = wanted.get(r.ref.name, {})
        for row in r.details(index):
            c = index[row[0]]
            (c.doc_id, c.source_uri, c.title, c.section, c.source_role) = row[1:6]
            c.chunk_index, c.chunk_hash, c.n_bytes, c.sentence_keys, c.text = row[6:11]
        for rowid, locator in r.locators(index).items():
            index[rowid].locator = locator


def _judge(
    cand: Candidate,
    weights: list[WeightedKey],
    total: float,
    injected: list[tuple[str, ...]],
    heading: Heading,
    title_scores: tuple[float, float],
) -> None:
    """Features (:mod:`aborist.retrieval.relevance`) and the first accept path that holds
    (module doc, step 3). ``title_scores`` is computed once per heading."""
    coverage, density = body_features(cand.sentence_keys, weights, total)
    title, purity = title_scores
    cand.features = {
        "coverage": coverage,
        "density": density,
        "title": title,
        "purity": purity,
        "role": ROLE_WEIGHTS.get(cand.source_role, OTHER_ROLE_WEIGHT),
    }
    if title > 0.0:
        cand.accept_path = "title"
    elif injected and any(_has_phrase(cand, heading.tokens, p) for p in injected):
        cand.accept_path = "synonym"
    elif coverage >= COVERAGE_ACCEPT:
        cand.accept_path = "coverage"
    elif cand.bm25_rank <= RANK_ACCEPT:
        cand.accept_path = "rank"
    else:
        cand.decision = "rejected:title_filter"


def _has_phrase(cand: Candidate, heading: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    """Whether the token sequence ``phrase`` is in the chunk's heading or body; the
    stored sentence keys rule most chunks out before the body is tokenized."""
    if not phrase or not all(
        t in heading or f" {light_stem(t)} " in cand.sentence_keys for t in phrase
    ):
        return False
    return contains_phrase(heading, phrase) or contains_phrase(phrase_tokens(cand.text), phrase)


class Retriever:
    """Shards opened once (read-only) with their merged concept table, for many
    questions: what a server or a benchmark uses. :func:`retrieve` is the one-shot form.
    """

    def __init__(self, shards: Sequence[Path | str] = (), *, shards_dir: Path) -> None:
        self._opened, self.concepts = open_readers(shards, shards_dir)

    @property
    def shards(self) -> list[ShardRef]:
        return [s.ref for s in self._opened]

    def close(self) -> None:
        for r in self._opened:
            r.close()
        self._opened = []

    def __enter__(self) -> Retriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def retrieve(
        self,
        question: str,
        *,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        candidates_per_shard: int = CANDIDATES_PER_SHARD,
        min_and_hits: int = MIN_AND_HITS,
    ) -> RetrievalResult:
        require_question(question)
        if budget_bytes <= 0:
            raise InputError(f"budget_bytes must be positive, got {budget_bytes}")
        if candidates_per_shard < 1 or min_and_hits < 1:
            raise InputError("candidates_per_shard and min_and_hits must be at least 1")
        return _retrieve(
            question, self._opened, self.concepts, budget_bytes, candidates_per_shard,
            min_and_hits,
        )  # fmt: skip


def retrieve(
    question: str,
    shards: Sequence[Path | str] = (),
    *,
    shards_dir: Path,
    budget_bytes: int = DEFAULT_BUDGET_BYTES,
    candidates_per_shard: int = CANDIDATES_PER_SHARD,
    min_and_hits: int = MIN_AND_HITS,
) -> RetrievalResult:
    """Retrieve context for ``question`` from ``shards`` (names in ``shards_dir`` or shard
    file paths; all shards in ``shards_dir`` when empty). See the module doc."""
    require_question(question)
    with Retriever(shards, shards_dir=shards_dir) as retriever:
        return retriever.retrieve(
            question,
            budget_bytes=budget_bytes,
            candidates_per_shard=candidates_per_shard,
            min_and_hits=min_and_hits,
        )


def _anchor(units: Sequence[str], idf: dict[str, float]) -> str:
    """The unit the most chunks hold (lowest IDF): ``fts_and``'s neutral alternative."""

    def weight(u: str) -> float:
        return max((idf.get(light_stem(t), 0.0) for t in u.split()), default=0.0)

    return min(units, key=lambda u: (weight(u), units.index(u)))


def _new_result(
    question: str,
    terms: QueryTerms,
    opened: list[ShardReader],
    table: ConceptTable,
    budget_bytes: int,
    limit: int,
    min_and_hits: int,
) -> RetrievalResult:
    """The decision record before any search: the question's units, its rivals, and
    every constant the decision uses."""
    comparative = has_compare_phrasing(question)
    return RetrievalResult(
        question=question,
        shards=[s.ref for s in opened],
        units=list(terms.units),
        mode="NONE",
        and_query="",
        or_query=None,
        and_hits=0,
        synonyms=[],
        comparative=comparative,
        rivals=[] if comparative else table.rivals_in_question(question),
        candidates=[],
        chunks=[],
        budget_bytes=budget_bytes,
        used_bytes=0,
        constants={
            "min_and_hits": min_and_hits,
            "candidates_per_shard": limit,
            "bm25_weights": list(BM25_WEIGHTS),
            "coverage_accept": COVERAGE_ACCEPT,
            "rank_accept": RANK_ACCEPT,
            "rerank_weights": dict(RERANK_WEIGHTS),
            "role_weights": {**ROLE_WEIGHTS, "other": OTHER_ROLE_WEIGHT},
            "pair_gap": PAIR_GAP,
            "max_pairs": MAX_PAIRS,
            "near_distance": NEAR_DISTANCE,
            "spelling_min_letters": SPELLING_MIN_LETTERS,
            "spelling_wide_letters": SPELLING_WIDE_LETTERS,
            "surface_count_limit": SURFACE_COUNT_LIMIT,
        },
        kept_keywords=list(terms.kept),
    )


def _select(
    result: RetrievalResult,
    accepted: list[Candidate],
    table: ConceptTable,
    headings: dict[int, tuple[str, ...]],
    budget_bytes: int,
) -> None:
    """Select the accepted candidates in rerank order until the budget is spent, rejecting
    those that name a rival of the question; the record's chunks and bytes used."""
    used = 0
    selected: list[Candidate] = []
    rivals = [(t, f" {light_stem(t)} ") for t in table.rival_first_tokens(result.rivals)]
    suspects = [
        c for c in accepted if any(t in headings[id(c)] or p in c.sentence_keys for t, p in rivals)
    ]
    for cand in suspects:
        body = phrase_tokens(cand.text)
        cand.rivalry = table.rivalry_hit_tokens(result.rivals, headings[id(cand)], body)
    for cand in accepted:
        if cand.rivalry is not None:
            cand.decision = "rejected:rivalry"
            continue
        if used + cand.n_bytes > budget_bytes:
            cand.decision = "rejected:over_budget"
            continue
        used += cand.n_bytes
        cand.in_budget = True
        cand.decision = "selected"
        selected.append(cand)
    result.chunks = [
        RetrievedChunk(
            **chunk_identity(c),
            text=c.text,
            score=c.rerank or 0.0,
            accept_path=c.accept_path or "",
            locator=c.locator,
        )
        for c in selected
    ]
    result.used_bytes = used


def _retrieve(
    question: str,
    opened: list[ShardReader],
    table: ConceptTable,
    budget_bytes: int,
    limit: int,
    min_and_hits: int,
) -> RetrievalResult:
    terms = query_terms(question)
    result = _new_result(question, terms, opened, table, budget_bytes, limit, min_and_hits)
    if not terms.units:
        return result
    idf = {shard.ref.name: shard.key_weights(unit_keys(terms.units)) for shard in opened}
    units, positions, result.rewrites = repair_units(
        opened, terms.units, terms.positions, {k for w in idf.values() for k in w}, terms.kept
    )
    if result.rewrites:
        for shard in opened:
            idf[shard.ref.name].update(shard.key_weights(unit_keys(units)))
    result.units = units
    kept = set(terms.kept) | {t for r in result.rewrites if r.unit in terms.kept for t in r.to}
    question_keys = {
        light_stem(t) for u in units for t in u.split() if t not in STOPWORDS or u in kept
    } or unit_keys(units)
    weights: dict[str, list[WeightedKey]] = {}
    totals: dict[str, float] = {}
    merged_idf: dict[str, float] = {}
    for shard in opened:
        for k, w in idf[shard.ref.name].items():
            merged_idf[k] = max(w, merged_idf.get(k, 0.0))
        shard_keys = {k: w for k, w in sorted(idf[shard.ref.name].items()) if k in question_keys}
        weights[shard.ref.name] = [(k, f" {k} ", w) for k, w in shard_keys.items()]
        totals[shard.ref.name] = sum(shard_keys.values()) or 1.0

    result.proximity = proximity_pairs(units, positions, terms.words)
    boost = [group for pair in result.proximity for group in pair.boost()]
    result.and_query = fts_and(units, boost, _anchor(units, merged_idf))
    result.and_hits = count_hits(opened, fts_and(units), min_and_hits)
    result.mode = "AND"
    candidates: list[Candidate] = []
    if result.and_hits >= min_and_hits:
        candidates = _search(opened, result.and_query, "AND", limit)
        result.and_hits = len(candidates)
    else:
        result.synonyms = table.synonym_injections(question)
        extra = [" ".join(phrase_tokens(p)) for s in result.synonyms for p in s.added]
        or_units = list(dict.fromkeys([*units, *(e for e in extra if e)]))
        result.or_query = fts_or(or_units, boost)
        candidates = _search(opened, result.or_query, "OR", limit)
        result.mode = "OR"
    _fill_details(opened, candidates)
    result.candidates = candidates

    injected = [phrase_tokens(p) for s in result.synonyms for p in s.added]
    headings: dict[int, tuple[str, ...]] = {}
    title_scores: dict[tuple[str, str, str], tuple[float, float]] = {}
    for cand in candidates:
        heading = heading_of(cand.title, cand.section)
        headings[id(cand)] = heading.tokens
        shard_weights, total = weights[cand.shard], totals[cand.shard]
        seen = (cand.shard, cand.title, cand.section)
        if seen not in title_scores:
            title_scores[seen] = title_features(heading, shard_weights, total)
        _judge(cand, shard_weights, total, injected, heading, title_scores[seen])
    accepted = [c for c in candidates if c.accept_path is not None]
    best = max((c.bm25 for c in accepted), default=0.0) or 1.0
    for cand in accepted:
        cand.features["bm25"] = cand.bm25 / best
        cand.rerank = sum(RERANK_WEIGHTS[k] * cand.features[k] for k in RERANK_WEIGHTS)
    accepted.sort(key=lambda c: (-(c.rerank or 0.0), c.bm25_rank))

    _select(result, accepted, table, headings, budget_bytes)
    order = {id(c): i for i, c in enumerate(accepted)}
    result.candidates.sort(key=lambda c: (order.get(id(c), len(order)), c.bm25_rank))
    return result
