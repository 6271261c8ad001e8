"""Retrieval: FTS5 query building (:mod:`.fts`), title relevance (:mod:`.relevance`) and
the retriever with its decision record (:mod:`.retriever`; docs/retrieval.md)."""
