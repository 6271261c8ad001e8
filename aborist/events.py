"""The pipeline's event types: one pydantic model per payload, past-tense names.

Every run is the stream ``run:<run_id>``; its events appear in this order (docs/pipeline.md,
"The run grammar")::

    run_started → cache_checked ─hit→ run_completed
                                └miss→ retrieval_completed → evidence_mapped | context_assembled
      → prompt_built → model_answered → claims_parsed (claim-lattice) → answer_verified
      → [answer_repaired] → answer_rendered → answer_labelled → cache_written → run_completed

and ``run_failed`` ends a run at whatever stage went wrong. That order is the run grammar,
written once as a table in :mod:`aborist.pipeline.history` (one of each stage, nothing after
``run_completed`` or ``run_failed``); every reader reads a run through it. Large texts
(chunk texts, prompts, raw answers) are blobs, referenced here by their sha256.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from ledger.envelope import NewEvent

__all__ = [
    "EVENT_TYPES",
    "AnswerLabelled",
    "AnswerRendered",
    "AnswerRepaired",
    "AnswerVerified",
    "CacheChecked",
    "CacheWritten",
    "ClaimsParsed",
    "ContextAssembled",
    "EventPayload",
    "EvidenceMapped",
    "ModelAnswered",
    "PromptBuilt",
    "RepromptAttempted",
    "RetrievalCompleted",
    "RunCompleted",
    "RunFailed",
    "RunStarted",
    "ShardDeleted",
    "ShardIngested",
    "run_stream",
]

Mode = Literal["quote", "claim-lattice"]


def run_stream(run_id: str) -> str:
    return f"run:{run_id}"


class EventPayload(BaseModel):
    """Base of every payload: strict fields, JSON-able, one ``TYPE`` each."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    TYPE: ClassVar[str]
    VERSION: ClassVar[int] = 1

    def to_event(self) -> NewEvent:
        return NewEvent(self.TYPE, self.model_dump(mode="json"), type_version=self.VERSION)


class ShardIngested(EventPayload):
    TYPE = "corpus.shard_ingested"
    shard: str
    source_root: str
    canonicalization_version: str
    chunking_version: str
    role: str
    documents: list[dict[str, Any]]
    skipped: list[dict[str, Any]] = []
    #: sha256 of the chunk-hash list blob (docs/corpus.md); absent from older ingests.
    chunk_hashes_blob: str | None = None
    pruned: list[str] = []  # source_uri of documents `ingest --prune` dropped (when any)


class ShardDeleted(EventPayload):
    """`aborist delete-shard`: the shard file is gone; its events stay."""

    TYPE = "corpus.shard_deleted"
    shard: str
    source_root: str | None  # None: the file could not be read before it was deleted


class RunStarted(EventPayload):
    TYPE = "qa.run_started"
    run_id: str
    kind: Literal["query", "ask"]
    question: str
    mode: Mode
    requested_shards: list[str] | None  # None: every shard
    document: str | None = None
    model_profile: dict[str, Any]
    policy: dict[str, Any]
    use_cache: bool
    aborist_version: str


class CacheChecked(EventPayload):
    """The corpus version the run is bound to, its cache key, and whether it was served.

    A hit also names what it served: the seq of the served run's ``qa.cache_written``
    (``hit_written_seq``) and the sha256 of the answer text it served
    (``hit_answer_hash``), so replay can show the answer came from that event."""

    TYPE = "qa.cache_checked"
    shards: dict[str, str]  # shard name -> source_root
    key_dimensions: dict[str, str]
    cache_key: str
    consulted: bool
    hit: bool
    hit_run_id: str | None = None
    hit_written_seq: int | None = None
    hit_answer_hash: str | None = None
    #: Shards (names as in ``shards``) whose source root no ``corpus.shard_ingested`` of
    #: the ledger had recorded, read because the caller allowed it. Written only when
    #: non-empty, so every other run's payload is what it always was.
    unrecorded_shards: list[str] = []

    def to_event(self) -> NewEvent:
        payload = self.model_dump(mode="json")
        if not payload["unrecorded_shards"]:
            del payload["unrecorded_shards"]
        return NewEvent(self.TYPE, payload, type_version=self.VERSION)


class RetrievalCompleted(EventPayload):
    TYPE = "qa.retrieval_completed"
    retrieval: dict[str, Any]


class EvidenceMapped(EventPayload):
    """Claim-lattice mode: evidence objects with pointer and content ids."""

    TYPE = "qa.evidence_mapped"
    evidence: list[dict[str, Any]]


class ContextAssembled(EventPayload):
    """Quote mode: the context the model saw, as evidence objects."""

    TYPE = "qa.context_assembled"
    evidence: list[dict[str, Any]]
    context_bytes: int


class PromptBuilt(EventPayload):
    TYPE = "qa.prompt_built"
    prompt_blob: str
    prompt_version: str


class ModelAnswered(EventPayload):
    TYPE = "qa.model_answered"
    raw_answer_blob: str
    model: str
    finish_reason: str | None = None
    attempts: int = 1
    usage: dict[str, Any] | None = None


class ClaimsParsed(EventPayload):
    TYPE = "qa.claims_parsed"
    claims: list[dict[str, Any]]


class AnswerVerified(EventPayload):
    TYPE = "qa.answer_verified"
    answer_blob: str
    verdict: dict[str, Any]


class RepromptAttempted(EventPayload):
    """One re-prompt of the model with the sidecar's diagnosis, accepted or not."""

    TYPE = "qa.reprompt_attempted"
    attempt: int
    reprompt_version: str
    prompt_blob: str
    raw_answer_blob: str | None
    error: str | None = None
    verdict: dict[str, Any] | None = None
    accepted: bool


class AnswerRepaired(EventPayload):
    """An accepted repair: ``outcome`` carries the original and repaired texts, the change
    log, the sidecar's diagnoses and the pre- and post-repair verdicts."""

    TYPE = "qa.answer_repaired"
    method: Literal["mechanical", "reprompt"]
    repaired_answer_blob: str
    outcome: dict[str, Any]


class AnswerRendered(EventPayload):
    TYPE = "qa.answer_rendered"
    render_version: str
    answer: str
    citations: list[dict[str, Any]]
    units: list[dict[str, Any]]


class AnswerLabelled(EventPayload):
    TYPE = "qa.answer_labelled"
    audit_mode: str
    label: str
    answer_hash: str
    run_dag: dict[str, Any]


class CacheWritten(EventPayload):
    TYPE = "qa.cache_written"
    cache_key: str
    answer: str
    audit_mode: str
    label: str
    run_dag_root: str
    key_dimensions: dict[str, str]


class RunCompleted(EventPayload):
    TYPE = "qa.run_completed"
    status: Literal["answered", "cached"]
    cache_hit: bool
    served_from_run_id: str | None = None
    audit_mode: str
    label: str
    run_dag_root: str


class RunFailed(EventPayload):
    TYPE = "qa.run_failed"
    stage: str
    error_type: str
    message: str


EVENT_TYPES: dict[str, type[EventPayload]] = {
    cls.TYPE: cls
    for cls in (
        ShardIngested, ShardDeleted, RunStarted, CacheChecked, RetrievalCompleted, EvidenceMapped,
        ContextAssembled, PromptBuilt, ModelAnswered, ClaimsParsed, AnswerVerified,
        RepromptAttempted, AnswerRepaired, AnswerRendered, AnswerLabelled, CacheWritten,
        RunCompleted, RunFailed,
    )
}  # fmt: skip
