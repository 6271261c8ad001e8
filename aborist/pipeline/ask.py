"""``ask()``: one document, one question.

The document is canonicalized and chunked exactly as ``aborist ingest`` would, into a
private temporary shard, and the run retrieves from it; the document's source root binds
the cache key, and the chunk texts the run used are kept as ledger blobs, so the run stays
replayable after the temporary shard is gone. The temporary shard's ingest is recorded
(``corpus.shard_ingested`` on stream ``shard:document``, with its chunk-hash list) unless
this ledger already holds its source root, so an ask run is bound to a recorded corpus
like any other (docs/corpus.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from aborist.clients.base import ChatClient
from aborist.corpus.ingest import ingest, record_ingest
from aborist.errors import InputError, require_question
from aborist.pipeline.corpus_binding import recorded_roots
from aborist.pipeline.query import ShardSource
from aborist.pipeline.run import Governance, RepairHook, RunResult, execute_run
from aborist.verify.policy import DEFAULT_POLICY, VerifierPolicy
from ledger.store import Ledger

__all__ = ["DocumentSource", "ask"]

ASK_SHARD = "document"


class DocumentSource(ShardSource):
    kind = "ask"

    def __init__(self, path: Path, shards_dir: Path) -> None:
        super().__init__([ASK_SHARD], shards_dir)
        self.document = str(path)

    def roots(self) -> dict[str, str]:
        return {f"document:{self.document}": root for root in super().roots().values()}


def ask(
    path: Path | str,
    question: str,
    *,
    ledger: Ledger,
    client: ChatClient,
    governance: Governance | None = None,
    verifier_policy: VerifierPolicy = DEFAULT_POLICY,
    use_cache: bool = True,
    repair_stage: RepairHook | None = None,
) -> RunResult:
    """Answer ``question`` from the single document at ``path`` and record the run."""
    doc = Path(path)
    if doc.is_dir():
        raise InputError(
            f"{doc} is a directory: `aborist ask` reads one file (ingest a directory with "
            "`aborist ingest DIR --shard NAME`, then `aborist query`)"
        )
    if doc.exists() and not doc.is_file():
        raise InputError(f"{doc}: not a regular file")
    if not doc.is_file():
        raise InputError(f"{doc}: no such file")
    require_question(question)
    with tempfile.TemporaryDirectory(prefix="aborist-ask-") as tmp:
        shards_dir = Path(tmp)
        report = ingest([doc], ASK_SHARD, shards_dir=shards_dir)
        if not recorded_roots(ledger, {report.source_root}):
            record_ingest(ledger, report)
        source = DocumentSource(doc.resolve(), shards_dir)
        try:
            return execute_run(
                question, source, ledger=ledger, client=client, governance=governance,
                verifier_policy=verifier_policy, use_cache=use_cache,
                repair_stage=repair_stage,
            )  # fmt: skip
        finally:
            source.close()
