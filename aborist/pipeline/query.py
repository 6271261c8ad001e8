"""``query()``: multi-source RAG over the shards.

Retrieval itself lives in :mod:`aborist.retrieval.retriever`; this module binds it to a run:
the shards' source roots enter the cache key, and the stages are recorded by
:func:`aborist.pipeline.run.execute_run`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from aborist.clients.base import ChatClient
from aborist.corpus.shard import (
    SHARD_SUFFIX,
    ShardInfo,
    chunk_root,
    read_shard_info,
    resolve_shard,
)
from aborist.errors import CorpusError
from aborist.pipeline.run import Governance, RepairHook, RunResult, execute_run
from aborist.retrieval.records import RetrievalResult
from aborist.retrieval.retriever import Retriever
from aborist.verify.policy import DEFAULT_POLICY, VerifierPolicy
from ledger.store import Ledger

__all__ = ["ShardSource", "query"]


_INFO_CACHE: dict[Path, tuple[tuple[int, int, int], ShardInfo]] = {}


def shard_info(path: Path) -> ShardInfo:
    """A shard's metadata, once its chunk hashes are shown to hash to the source root its
    ``meta`` states (:func:`chunk_root`), remembered while its file is the same file (path,
    inode, size, mtime_ns): ingest builds a new shard beside the old one and swaps it in,
    so a re-ingest always changes the inode, and an edit in place changes the mtime."""
    st = path.stat()
    identity = (st.st_ino, st.st_mtime_ns, st.st_size)
    known = _INFO_CACHE.get(path)
    if known is not None and known[0] == identity:
        return known[1]
    info = read_shard_info(path)
    actual = chunk_root(path)
    if actual != info.source_root:
        raise CorpusError(
            f"shard {info.name!r} ({path}): its chunk hashes have root {actual[:16]}…, not "
            f"the source root {info.source_root[:16]}… it states: the shard was changed "
            "after ingest; re-ingest it"
        )
    _INFO_CACHE[path] = (identity, info)
    return info


def combined_version(values: Sequence[str]) -> str:
    """One version string for several shards: the shared value, or all of them joined."""
    unique = sorted(set(values))
    return unique[0] if len(unique) == 1 else "+".join(unique)


class ShardSource:
    """Evidence from named shards (all shards when none are named). Shards are opened on
    first use, so a missing shard fails inside the run and is recorded."""

    kind = "query"
    document: str | None = None

    def __init__(self, shards: Sequence[str] | None, shards_dir: Path) -> None:
        self.requested = list(shards) if shards else None
        self.shards_dir = shards_dir
        self._retriever: Retriever | None = None
        self._info: list[ShardInfo] | None = None

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            self._retriever = Retriever(self.requested or (), shards_dir=self.shards_dir)
        return self._retriever

    def _infos(self) -> list[ShardInfo]:
        """Shard metadata only (no concept table): all a cache hit needs."""
        if self._info is None:
            if self.requested:
                paths = [resolve_shard(s, self.shards_dir) for s in dict.fromkeys(self.requested)]
            else:
                paths = sorted(self.shards_dir.glob(f"*{SHARD_SUFFIX}"))
            self._info = [shard_info(p) for p in paths]
            if not self._info:
                raise CorpusError(
                    f"no shards in {self.shards_dir}; run `aborist ingest PATH --shard NAME`"
                )
        return self._info

    def roots(self) -> dict[str, str]:
        return {info.name: info.source_root for info in self._infos()}

    def versions(self) -> tuple[str, str]:
        infos = self._infos()
        return (
            combined_version([i.canonicalization_version for i in infos]),
            combined_version([i.chunking_version for i in infos]),
        )

    def retrieve(self, question: str, budget_bytes: int) -> RetrievalResult:
        """Retrieval from the shards; every chunk must come from a shard the run was bound
        to (:meth:`roots`): a shard file that appeared after the corpus was chosen (all
        shards of the directory are read when none is named) is not one."""
        result = self.retriever.retrieve(question, budget_bytes=budget_bytes)
        bound = {info.name for info in self._infos()}
        for chunk in result.chunks:
            if chunk.shard not in bound:
                raise CorpusError(
                    f"shard {chunk.shard!r} appeared after this run chose its corpus "
                    f"({', '.join(sorted(bound))}); ask again"
                )
        return result

    def close(self) -> None:
        if self._retriever is not None:
            self._retriever.close()
            self._retriever = None


def query(
    question: str,
    *,
    ledger: Ledger,
    client: ChatClient,
    shards_dir: Path,
    shards: Sequence[str] | None = None,
    governance: Governance | None = None,
    verifier_policy: VerifierPolicy = DEFAULT_POLICY,
    use_cache: bool = True,
    repair_stage: RepairHook | None = None,
    allow_unrecorded_shards: bool = False,
) -> RunResult:
    """Answer ``question`` from ``shards`` (all when None) and record the run. A shard whose
    source root this ledger never recorded is refused unless ``allow_unrecorded_shards``
    (:mod:`aborist.pipeline.corpus_binding`)."""
    source = ShardSource(shards, shards_dir)
    try:
        return execute_run(
            question, source, ledger=ledger, client=client, governance=governance,
            verifier_policy=verifier_policy, use_cache=use_cache, repair_stage=repair_stage,
            allow_unrecorded_shards=allow_unrecorded_shards,
        )  # fmt: skip
    finally:
        source.close()
