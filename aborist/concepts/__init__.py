"""Corpus-derived synonym and rivalry relations (docs/retrieval.md, "Concepts").

Extracted from each shard's text at ingest (:mod:`.extract`), stored in the shard's
``concepts`` table (:mod:`.store`), and merged across the shards of a query into one
:class:`ConceptTable` (:mod:`.table`) that retrieval uses for synonym injection and
rivalry exclusion.
"""

from aborist.concepts.extract import Relation, extract_relations, normalize_phrase
from aborist.concepts.store import load_concepts, write_concepts
from aborist.concepts.table import (
    ConceptTable,
    RivalryHit,
    SynonymInjection,
    has_compare_phrasing,
    phrase_tokens,
)

__all__ = [
    "ConceptTable",
    "Relation",
    "RivalryHit",
    "SynonymInjection",
    "extract_relations",
    "has_compare_phrasing",
    "load_concepts",
    "normalize_phrase",
    "phrase_tokens",
    "write_concepts",
]
