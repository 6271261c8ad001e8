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

This module is the one place an event type or the answer mode is spelled: elsewhere they
are ``Model.TYPE`` and :data:`Mode` / :data:`MODES`. :data:`STAGE_TABLE` is the one
vocabulary of a run's stages (event type, DAG stage per mode, recorder stage), and
:func:`parse_event` reads a recorded event back as its model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from aborist.errors import InputError
from ledger.envelope import NewEvent, RecordedEvent

__all__ = [
    "DAG_VERSION",
    "DAG_VERSIONS",
    "EVENT_TYPES",
    "EVIDENCE_STAGE",
    "MODES",
    "STAGE_TABLE",
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
    "InvalidEventPayload",
    "Mode",
    "ModelAnswered",
    "PromptBuilt",
    "RepromptAttempted",
    "RetrievalCompleted",
    "RunCompleted",
    "RunFailed",
    "RunStarted",
    "ShardDeleted",
    "ShardIngested",
    "StageRow",
    "UnknownEventType",
    "model_for",
    "parse_event",
    "run_stream",
    "stage_table_markdown",
]

#: Every version of the run DAG's shape (docs/pipeline.md, "The run DAG"), oldest first;
#: new runs record the last. Version 1 (no ``render`` node in quote mode) is recorded by
#: the absence of ``dag_version`` from ``qa.answer_labelled``: the runs recorded before
#: versions existed are version 1 as they stand.
DAG_VERSIONS: tuple[int, ...] = (1, 2)
DAG_VERSION: int = DAG_VERSIONS[-1]

#: The answer mode, spelled once: every other module takes it (and :data:`MODES`) from here.
Mode = Literal["quote", "claim-lattice"]
MODES: tuple[str, ...] = get_args(Mode)


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
    """The final label and the run DAG it concludes. ``dag_version`` is the version of the
    DAG's shape (:data:`DAG_VERSIONS`); it is part of the label's stage hash, so the root
    commits to it. Version 1 writes no ``dag_version`` (the payload of a run recorded
    before versions existed), so ``None`` is version 1 and is left out of the payload."""

    TYPE = "qa.answer_labelled"
    audit_mode: str
    label: str
    answer_hash: str
    dag_version: int | None = None
    run_dag: dict[str, Any]

    def to_event(self) -> NewEvent:
        payload = self.model_dump(mode="json")
        if payload["dag_version"] is None:
            del payload["dag_version"]
        return NewEvent(self.TYPE, payload, type_version=self.VERSION)


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


#: Every payload model by its event type (what :func:`parse_event` reads through).
EVENT_TYPES: dict[str, type[EventPayload]] = {
    cls.TYPE: cls
    for cls in (
        ShardIngested, ShardDeleted, RunStarted, CacheChecked, RetrievalCompleted, EvidenceMapped,
        ContextAssembled, PromptBuilt, ModelAnswered, ClaimsParsed, AnswerVerified,
        RepromptAttempted, AnswerRepaired, AnswerRendered, AnswerLabelled, CacheWritten,
        RunCompleted, RunFailed,
    )
}  # fmt: skip


class UnknownEventType(InputError):
    """An event whose type names no payload model of this module."""


class InvalidEventPayload(InputError):
    """An event whose payload does not fit the model of its type."""


def model_for(type_: str) -> type[EventPayload]:
    """The payload model of event type ``type_``; :class:`UnknownEventType` if none."""
    try:
        return EVENT_TYPES[type_]
    except KeyError:
        raise UnknownEventType(f"unknown event type {type_!r}") from None


def parse_event(ev: RecordedEvent) -> EventPayload:
    """The recorded event's payload as the pydantic model of its type (typed reads instead
    of dicts keyed by strings). :class:`UnknownEventType` for a type this module does not
    define; :class:`InvalidEventPayload` (naming the seq) for a payload that does not fit."""
    model = model_for(ev.type)
    try:
        return model.model_validate(ev.data)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "the payload"
        why = f"{where}: {err['msg']}"
    except (ValueError, TypeError, RecursionError) as e:  # not JSON, or too deep to read
        why = str(e)[:160]
    raise InvalidEventPayload(f"seq {ev.seq}: {ev.type} payload is malformed ({why})")


@dataclass(frozen=True, slots=True)
class StageRow:
    """One row of the stage table: an event type, the node it becomes in each mode's run
    DAG (None: no node), and the recorder's stage (what ``qa.run_failed`` names when the
    run fails while that stage is being computed). ``quote_since`` is the first DAG
    version (:data:`DAG_VERSIONS`) with the row's quote-mode node; every claim-lattice
    node is in every version."""

    event: type[EventPayload]
    quote: str | None
    claim_lattice: str | None
    recorder: str
    quote_since: int = 1

    def dag_stage(self, mode: str, version: int = DAG_VERSION) -> str | None:
        """The row's node in a ``mode`` DAG of ``version`` (None: no node)."""
        if mode == "quote":
            return self.quote if version >= self.quote_since else None
        return self.claim_lattice


#: The one vocabulary of a run's stages, in run order (docs/pipeline.md, "The stage table").
#: Every name here is recorded (DAG stages are hashed into node hashes; recorder stages
#: are written into ``qa.run_failed``), so none may change without a version: a node
#: added to a mode's DAG names the DAG version it first appears in (``quote_since``).
STAGE_TABLE: tuple[StageRow, ...] = (
    StageRow(RunStarted, "question", "question", "start"),
    StageRow(CacheChecked, None, None, "cache"),
    StageRow(RetrievalCompleted, "retrieval", "retrieval", "retrieval"),
    StageRow(EvidenceMapped, None, "evidence_map", "evidence"),
    StageRow(ContextAssembled, "context", None, "evidence"),
    StageRow(PromptBuilt, "prompt", "prompt", "prompt"),
    StageRow(ModelAnswered, "answer", "raw_answer", "model"),
    StageRow(ClaimsParsed, None, "parsed_claim_lattice", "parse"),
    StageRow(AnswerVerified, "verify", "verify", "verify"),
    StageRow(RepromptAttempted, None, None, "repair"),
    StageRow(AnswerRepaired, "repair", "repair", "repair"),
    StageRow(AnswerRendered, "render", "render", "render", quote_since=2),
    StageRow(AnswerLabelled, "final_label", "final_label", "label"),
    StageRow(CacheWritten, None, None, "label"),
    StageRow(RunCompleted, None, None, "label"),
)

#: The evidence events and the DAG stage each becomes (one per mode).
EVIDENCE_STAGE: dict[str, str] = {
    row.event.TYPE: str(row.quote or row.claim_lattice)
    for row in STAGE_TABLE
    if row.event in (EvidenceMapped, ContextAssembled)
}


def stage_table_markdown() -> str:
    """:data:`STAGE_TABLE` as the Markdown table docs/pipeline.md shows (a test keeps the
    page equal to it); a quote node added by a later DAG version says since which."""
    lines = [
        "| event type | quote mode DAG stage | claim-lattice DAG stage | recorder stage |",
        "|---|---|---|---|",
    ]
    for row in STAGE_TABLE:
        cells = [f"`{c}`" if c else "—" for c in (row.event.TYPE, row.quote,
                                                   row.claim_lattice, row.recorder)]  # fmt: skip
        if row.quote and row.quote_since > 1:
            cells[1] += f" (DAG version {row.quote_since} on)"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
