"""The retrieval decision record: each candidate chunk and what every stage decided about
it, the chunks that made the context, and the query rewrites (docs/retrieval.md, "The
decision record"). This is what ``qa.retrieval_completed`` carries, so every number is
written the way RFC 8785 would write it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aborist.concepts.table import RivalryHit, SynonymInjection
from aborist.corpus.shard_reader import ShardRef
from aborist.retrieval.fts import ProximityPair

__all__ = ["Candidate", "QueryRewrite", "RetrievalResult", "RetrievedChunk", "chunk_identity"]

_ROUND = 6


def _number(value: float) -> float | int:
    """``value`` rounded to :data:`_ROUND` decimals, integral values as ints: the same JSON
    (RFC 8785 writes ``1.0`` as ``1``), without the canonicalizer copying the record to
    convert them on every append."""
    rounded = round(value, _ROUND)
    return int(rounded) if rounded.is_integer() else rounded


def _numbers(value: Any) -> Any:
    """``value`` (constants: dicts, lists, numbers) with integral floats as ints."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_numbers(v) for v in value]
    return value


_IDENTITY = ("shard", "doc_id", "source_uri", "title", "section", "source_role",
             "chunk_index", "chunk_hash")  # fmt: skip


def _locator_field(locator: dict[str, Any] | None) -> dict[str, Any]:
    """``{"locator": …}`` when the shard gave one (every shard since schema 4)."""
    return {} if locator is None else {"locator": locator}


def chunk_identity(chunk: Candidate | RetrievedChunk) -> dict[str, Any]:
    """Which chunk of which document of which shard: the fields every record names."""
    return {name: getattr(chunk, name) for name in _IDENTITY}


@dataclass(slots=True)
class Candidate:
    """One chunk FTS5 returned, and what every later stage decided about it."""

    shard: str
    rowid: int
    bm25: float
    found_by: str
    doc_id: str = ""
    source_uri: str = ""
    title: str = ""
    section: str = ""
    source_role: str = ""
    chunk_index: int = 0
    chunk_hash: str = ""
    text: str = ""
    sentence_keys: str = ""
    n_bytes: int = 0
    bm25_rank: int = 0
    accept_path: str | None = None
    features: dict[str, float] = field(default_factory=dict)
    rerank: float | None = None
    rivalry: RivalryHit | None = None
    in_budget: bool = False
    decision: str = "pending"
    locator: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            **chunk_identity(self),
            **_locator_field(self.locator),
            "bytes": self.n_bytes,
            "found_by": self.found_by,
            "bm25": _number(self.bm25),
            "bm25_rank": self.bm25_rank,
            "accept_path": self.accept_path,
            "features": {k: _number(v) for k, v in sorted(self.features.items())},
            "rerank": None if self.rerank is None else _number(self.rerank),
            "rivalry": None if self.rivalry is None else self.rivalry.to_dict(),
            "in_budget": self.in_budget,
            "decision": self.decision,
        }


@dataclass(frozen=True)
class RetrievedChunk:
    """A chunk that made the context, with everything the prompt and the ledger need."""

    shard: str
    doc_id: str
    source_uri: str
    title: str
    section: str
    source_role: str
    chunk_index: int
    chunk_hash: str
    text: str
    score: float
    accept_path: str
    locator: dict[str, Any] | None = None
    """Where the chunk starts in its source (docs/corpus.md, "Locators")."""

    def to_dict(self) -> dict[str, Any]:
        return {
            **chunk_identity(self),
            **_locator_field(self.locator),
            "text": self.text,
            "score": _number(self.score),
            "accept_path": self.accept_path,
        }


@dataclass(frozen=True)
class QueryRewrite:
    """A question unit no chunk of the requested shards holds, and what replaced it:
    ``split`` (letters and digits written together, ``covid19`` → ``covid 19``),
    ``relax`` (a phrase that never occurs, searched as its words), ``spelling`` (the
    nearest word of the shards' vocabulary) or ``unmatched`` (dropped)."""

    unit: str
    rule: str
    to: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "rule": self.rule, "to": list(self.to)}


@dataclass
class RetrievalResult:
    question: str
    shards: list[ShardRef]
    units: list[str]
    mode: str
    and_query: str
    or_query: str | None
    and_hits: int
    synonyms: list[SynonymInjection]
    comparative: bool
    rivals: list[tuple[str, str]]
    candidates: list[Candidate]
    chunks: list[RetrievedChunk]
    budget_bytes: int
    used_bytes: int
    constants: dict[str, Any] = field(default_factory=dict)
    rewrites: list[QueryRewrite] = field(default_factory=list)
    kept_keywords: list[str] = field(default_factory=list)
    proximity: list[ProximityPair] = field(default_factory=list)

    @property
    def query(self) -> str:
        """The FTS5 expression that produced the candidates."""
        return self.or_query if self.mode == "OR" and self.or_query else self.and_query

    def to_dict(self, *, include_text: bool = False) -> dict[str, Any]:
        """Every decision, JSON-safe (floats rounded): what the ledger records. The chunks
        that made the context are the candidates whose ``decision`` is ``selected``, in
        order, and their hashes identify the texts, which go to the blob store; with
        ``include_text`` a ``selected`` list of those chunks with their texts is added
        (the ``aborist retrieve --json`` view)."""
        record = {
            "question": self.question,
            "shards": [s.to_dict() for s in self.shards],
            "units": list(self.units),
            "kept_keywords": list(self.kept_keywords),
            "rewrites": [r.to_dict() for r in self.rewrites],
            "proximity": [p.to_dict() for p in self.proximity],
            "mode": self.mode,
            "query": self.query,
            "and_query": self.and_query,
            "or_query": self.or_query,
            "and_hits": self.and_hits,
            "synonyms": [s.to_dict() for s in self.synonyms],
            "comparative": self.comparative,
            "rivals": [list(r) for r in self.rivals],
            "constants": _numbers(self.constants),
            "candidates": [c.to_dict() for c in self.candidates],
            "budget_bytes": self.budget_bytes,
            "used_bytes": self.used_bytes,
        }
        if include_text:
            record["selected"] = [c.to_dict() for c in self.chunks]
        return record
