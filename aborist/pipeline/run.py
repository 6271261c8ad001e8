"""One run of the Q&A pipeline as a sequence of ledger events (docs/pipeline.md).
``query()`` and ``ask()`` differ only in their corpus source.

Each stage appends its event to the run's stream (``run:<run_id>``) and commits before the
next stage starts, with the stream position checked optimistically, so a crash leaves an
honest partial run. A failure appends ``qa.run_failed`` naming the stage, then re-raises;
an interrupt (Ctrl-C, a kill) appends nothing more, and the run reads as incomplete.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from aborist import __version__
from aborist.clients.base import ChatClient
from aborist.errors import CorpusError, InputError, ModelError
from aborist.events import (
    DAG_VERSION,
    MODES,
    AnswerLabelled,
    AnswerRendered,
    CacheChecked,
    CacheWritten,
    ContextAssembled,
    EventPayload,
    EvidenceMapped,
    ModelAnswered,
    PromptBuilt,
    RetrievalCompleted,
    RunCompleted,
    RunFailed,
    RunStarted,
)
from aborist.pipeline import tail
from aborist.pipeline.cache import Served, answer_hash, lookup, remember_written, served_run
from aborist.pipeline.corpus_binding import check_recorded
from aborist.pipeline.dag import RunDag, build_dag, stages_for
from aborist.pipeline.keys import (
    SCHEMA_VERSION,
    KeyDimensions,
    cache_key,
    conversation_hash,
    governance_policy_hash,
    json_hash,
    question_hash,
    source_root_of,
)
from aborist.pipeline.question import check_question
from aborist.pipeline.recorder import RunRecorder
from aborist.pipeline.tail import TailInputs
from aborist.prompts import TEMPLATES, build_messages
from aborist.retrieval.records import RetrievalResult
from aborist.verify.evidence import EvidenceObject, build_evidence
from aborist.verify.policy import DEFAULT_POLICY, VerifierPolicy, policy_hash
from ledger.canonical import canonical_json, sha256_hex
from ledger.errors import LedgerError, PayloadError
from ledger.store import Ledger

__all__ = [
    "MAX_ANSWER_CHARS",
    "CorpusSource",
    "Governance",
    "RunResult",
    "execute_run",
    "label_stage_hash",
]

_RUN_ID = re.compile(r"[0-9a-z_-]{8,64}")
#: The longest model answer a run takes (the verify API's limit too). An answer is a few
#: thousand characters; one of millions (a server echoing its input, a runaway
#: generation) would make stage payloads past the ledger's 8 MiB and the run incomplete.
MAX_ANSWER_CHARS = 200_000


@dataclass(frozen=True, slots=True)
class Governance:
    """The governance policy: every field enters ``governance_policy_hash``."""

    mode: str = "claim-lattice"
    question_hash_mode: str = "strict"
    repair_enabled: bool = False
    repair_max_reprompts: int = 0
    budget_bytes: int = 60_000

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(f"mode must be claim-lattice or quote, not {self.mode!r}")
        if self.question_hash_mode not in ("strict", "equivalence_class"):
            raise InputError("question hash mode must be strict or equivalence_class")
        if self.budget_bytes < 1 or self.repair_max_reprompts < 0:
            raise InputError("budget_bytes must be positive and repair_max_reprompts >= 0")

    def to_dict(self) -> dict[str, Any]:
        """The governance policy as hashed; the repair versions are part of it, so a change
        in how answers are repaired never serves a cached answer repaired the old way."""
        from aborist.repair.repair import REPAIR_VERSION, REPROMPT_VERSION

        return {**asdict(self), "repair_version": REPAIR_VERSION,
                "reprompt_version": REPROMPT_VERSION}  # fmt: skip


class CorpusSource(Protocol):
    """What a run reads its evidence from: shards (query) or one document (ask)."""

    kind: str
    requested: list[str] | None
    document: str | None

    def roots(self) -> dict[str, str]: ...

    def versions(self) -> tuple[str, str]: ...

    def retrieve(self, question: str, budget_bytes: int) -> RetrievalResult: ...


@dataclass
class RunResult:
    run_id: str
    question: str
    mode: str
    cache_key: str
    cache_hit: bool
    answer: str
    audit_mode: str
    label: str
    run_dag_root: str
    evidence: list[dict[str, Any]]
    citations: list[dict[str, Any]]
    verdict: dict[str, Any] | None = None
    served_from_run_id: str | None = None
    repair_changes: list[dict[str, Any]] = field(default_factory=list)
    pre_repair_audit_mode: str | None = None
    stages: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The object ``aborist query --json`` prints."""
        return {
            "run_id": self.run_id,
            "cache_key": self.cache_key,
            "cache_hit": self.cache_hit,
            "served_from_run_id": self.served_from_run_id,
            "question": self.question,
            "mode": self.mode,
            "answer": self.answer,
            "audit_mode": self.audit_mode,
            "label": self.label,
            "run_dag_root": self.run_dag_root,
            "evidence": self.evidence,
            "citations": self.citations,
            "repair_changes": self.repair_changes,
            "pre_repair_audit_mode": self.pre_repair_audit_mode,
        }


def label_stage_hash(payload: dict[str, Any]) -> str:
    """Stage hash of ``final_label``: its payload without the ``run_dag`` it concludes."""
    return json_hash({k: v for k, v in payload.items() if k != "run_dag"})


def _evidence_from(result: RetrievalResult) -> list[EvidenceObject]:
    return build_evidence(
        {
            "text": c.text,
            "source_uri": c.source_uri,
            "title": f"{c.title} — {c.section}" if c.section and c.section != c.title else c.title,
            "source_role": c.source_role,
            "locator": c.locator,
        }
        for c in result.chunks
    )


def _check_chunk_hashes(result: RetrievalResult, evidence: Sequence[EvidenceObject]) -> None:
    """Each chunk's text must still hash to the ``chunk_hash`` ingest stored beside it (and
    the shard's source root covers): a shard edited after ingest would otherwise put text
    no ingest recorded in front of the verifier. The evidence objects hash their texts
    anyway, so the check costs a comparison per chunk."""
    for chunk, ev in zip(result.chunks, evidence, strict=True):
        if ev.evidence_hash != chunk.chunk_hash:
            raise CorpusError(
                f"shard {chunk.shard!r}: chunk {chunk.chunk_index} of {chunk.source_uri} no "
                f"longer matches its hash (stored {chunk.chunk_hash[:16]}…, text "
                f"{ev.evidence_hash[:16]}…): the shard was changed after ingest; re-ingest it"
            )


def _evidence_records(evidence: Sequence[EvidenceObject]) -> list[dict[str, Any]]:
    return [dict(ev.to_dict(), text_blob=ev.evidence_hash) for ev in evidence]


def _public_evidence(evidence: Sequence[EvidenceObject]) -> list[dict[str, Any]]:
    return [
        {
            "pointer_id": ev.pointer_id,
            "evidence_id": ev.evidence_id,
            "source_uri": ev.source_uri,
            "title": ev.title,
            "source_role": ev.source_role,
            **({} if ev.locator is None else {"locator": dict(ev.locator)}),
            "text": ev.text,
        }
        for ev in evidence
    ]


RepairHook = Callable[..., Any]


def execute_run(
    question: str,
    source: CorpusSource,
    *,
    ledger: Ledger,
    client: ChatClient,
    governance: Governance | None = None,
    verifier_policy: VerifierPolicy = DEFAULT_POLICY,
    use_cache: bool = True,
    run_id: str | None = None,
    repair_stage: RepairHook | None = None,
    allow_unrecorded_shards: bool = False,
) -> RunResult:
    """Answer ``question`` from ``source``, recording every stage in ``ledger``. Every
    shard of ``source`` must have a source root ``ledger`` recorded at ingest, unless
    ``allow_unrecorded_shards`` (then ``qa.cache_checked`` names the ones it had not)."""
    gov = governance or Governance()
    question = check_question(question)
    rid = run_id or uuid.uuid4().hex
    if not _RUN_ID.fullmatch(rid):
        raise InputError(f"run id {rid!r} must be 8-64 characters of [0-9a-z_-]")
    rec = RunRecorder(ledger, rid, gov.mode)
    # run_started is committed together with the cache check (or with run_failed, if the
    # corpus cannot even be resolved): nothing but reading happens before that point.
    started = RunStarted(
        run_id=rid,
        kind="ask" if source.kind == "ask" else "query",
        question=question,
        mode=gov.mode,
        requested_shards=source.requested,
        document=source.document,
        model_profile=client.profile(),
        policy=gov.to_dict(),
        use_cache=use_cache,
        aborist_version=__version__,
    )
    rec.defer(started)
    try:
        return _stages(question, source, rec, client, gov, verifier_policy, use_cache,
                       repair_stage, json_hash(started.model_profile),
                       allow_unrecorded_shards)  # fmt: skip
    except PayloadError as e:  # an event refused as given (nothing of it written): say so
        rec.record(RunFailed(stage=rec.stage, error_type=type(e).__name__, message=str(e)))
        raise
    except LedgerError:
        raise  # the ledger itself failed: nothing more can be recorded
    except Exception as e:  # an interrupt is not an Exception: the run reads as incomplete
        rec.record(RunFailed(stage=rec.stage, error_type=type(e).__name__, message=str(e)))
        raise


def _stages(
    question: str,
    source: CorpusSource,
    rec: RunRecorder,
    client: ChatClient,
    gov: Governance,
    vpolicy: VerifierPolicy,
    use_cache: bool,
    repair_stage: RepairHook | None,
    profile_hash: str,
    allow_unrecorded: bool = False,
) -> RunResult:
    """The run's stages in order: the cache check (a hit ends the run there), retrieval
    to the model's answer, the deterministic tail, and the label that closes the run."""
    rec.stage = "cache"
    roots = source.roots()
    unrecorded = check_recorded(rec.ledger, roots, allow=allow_unrecorded)
    canon_v, chunk_v = source.versions()
    dims = KeyDimensions(
        source_root=source_root_of(roots),
        question_hash=question_hash(question, gov.question_hash_mode),  # type: ignore[arg-type]
        model_profile_hash=profile_hash,  # of the profile run_started records
        conversation_hash=conversation_hash(),
        governance_policy_hash=governance_policy_hash(gov.to_dict()),
        schema_version=SCHEMA_VERSION,
        canonicalization_version=canon_v,
        chunking_version=chunk_v,
        verifier_policy_hash=policy_hash(vpolicy),
    )
    key = cache_key(dims)
    cached = _cache_stage(question, rec, gov, roots, dims, key, use_cache, unrecorded)
    if cached is not None:
        return cached
    evidence, raw = _answer_stages(question, source, rec, client, gov)
    inputs = TailInputs(question, gov.mode, raw, evidence, vpolicy)
    answer, verdict_dict, rendered, repair_changes, pre_repair = _tail_stages(
        inputs, rec, client, gov, repair_stage
    )
    label_fields, dag = _label_stage(rec, gov, key, dims, answer, verdict_dict, use_cache)
    return RunResult(
        run_id=rec.run_id, question=question, mode=gov.mode, cache_key=key, cache_hit=False,
        answer=answer, audit_mode=label_fields["audit_mode"], label=label_fields["label"],
        run_dag_root=dag.root, evidence=_public_evidence(evidence),
        citations=rendered.citations, verdict=verdict_dict,
        repair_changes=repair_changes, pre_repair_audit_mode=pre_repair,
    )  # fmt: skip


def _cache_stage(
    question: str,
    rec: RunRecorder,
    gov: Governance,
    roots: dict[str, str],
    dims: KeyDimensions,
    key: str,
    use_cache: bool,
    unrecorded: list[str],
) -> RunResult | None:
    """Record ``qa.cache_checked``; on a hit, close the run as served from the cached run
    and return its result (None on a miss: the run goes on)."""
    ledger = rec.ledger
    hit = lookup(ledger, key) if use_cache else None
    served: Served | None = None
    if hit is not None:  # the row only points at a run: what is served is that run's record
        served = served_run(ledger, key, hit)
    checked = CacheChecked(
        shards=roots, key_dimensions=dims.to_dict(), cache_key=key, consulted=use_cache,
        hit=hit is not None, hit_run_id=hit["run_id"] if hit else None,
        hit_written_seq=served.written_seq if served else None,
        hit_answer_hash=answer_hash(hit["answer"]) if hit else None,
        unrecorded_shards=unrecorded,
    )  # fmt: skip
    if hit is None:
        rec.record(checked)
        return None
    # nothing runs between the two: one transaction records the whole short run
    rec.record_all(
        [
            checked,
            RunCompleted(
                status="cached", cache_hit=True, served_from_run_id=hit["run_id"],
                audit_mode=hit["audit_mode"], label=hit["label"],
                run_dag_root=hit["run_dag_root"],
            ),
        ]
    )  # fmt: skip
    assert served is not None
    return RunResult(
        run_id=rec.run_id, question=question, mode=gov.mode, cache_key=key,
        cache_hit=True, answer=hit["answer"], audit_mode=hit["audit_mode"],
        label=hit["label"], run_dag_root=hit["run_dag_root"], evidence=served.evidence,
        citations=served.citations, served_from_run_id=hit["run_id"],
    )  # fmt: skip


def _answer_stages(
    question: str, source: CorpusSource, rec: RunRecorder, client: ChatClient, gov: Governance
) -> tuple[list[EvidenceObject], str]:
    """Retrieval, evidence, prompt and the model's answer, each recorded; returns the
    evidence and the raw answer the tail is a function of."""
    rec.stage = "retrieval"
    result = source.retrieve(question, gov.budget_bytes)
    texts = [c.text.encode("utf-8") for c in result.chunks]
    rec.record(RetrievalCompleted(retrieval=result.to_dict()), blobs=texts)

    rec.stage = "evidence"
    evidence = _evidence_from(result)
    _check_chunk_hashes(result, evidence)
    records = _evidence_records(evidence)
    if gov.mode == "claim-lattice":
        rec.record(EvidenceMapped(evidence=records))
    else:
        rec.record(ContextAssembled(evidence=records, context_bytes=sum(map(len, texts))))

    rec.stage = "prompt"
    messages = build_messages(question, evidence, gov.mode)
    prompt_bytes = canonical_json(messages)
    rec.record(
        PromptBuilt(prompt_blob=sha256_hex(prompt_bytes),
                    prompt_version=TEMPLATES[gov.mode].version),
        blobs=[prompt_bytes],
    )  # fmt: skip

    rec.stage = "model"
    reply = client.complete(messages)
    raw = reply.text
    if "\x00" in raw:  # no database text column can hold it; refuse it as model output
        raise ModelError(f"the model's answer ({reply.model}) contains a NUL character")
    if len(raw) > MAX_ANSWER_CHARS:
        raise ModelError(
            f"the model's answer ({reply.model}) is {len(raw):,} characters long; "
            f"at most {MAX_ANSWER_CHARS:,} are verified"
        )
    try:
        raw_bytes = raw.encode("utf-8")
    except UnicodeEncodeError as e:  # a JSON "\ud800" escape: no Unicode text, no bytes
        raise ModelError(
            f"the model's answer ({reply.model}) holds a lone surrogate "
            f"(U+{ord(raw[e.start]):04X}), which is not Unicode text"
        ) from None
    raw_hash = sha256_hex(raw_bytes)
    rec.record(
        ModelAnswered(
            raw_answer_blob=raw_hash, model=reply.model,
            finish_reason=reply.finish_reason, attempts=reply.attempts, usage=reply.usage,
        ),
        blobs=[raw_bytes],
    )  # fmt: skip
    return evidence, raw


def _tail_stages(
    inputs: TailInputs,
    rec: RunRecorder,
    client: ChatClient,
    gov: Governance,
    repair_stage: RepairHook | None,
) -> tuple[str, dict[str, Any], AnswerRendered, list[dict[str, Any]], str | None]:
    """The deterministic tail — the functions replay --deep re-runs (aborist/pipeline/
    tail.py) — recorded: parse, verify, repair when due, render. Returns the answer, its
    verdict, the rendered payload, the repair's changes and the audit mode before it."""
    if gov.mode == "claim-lattice":
        rec.stage = "parse"
    claims, parsed = tail.parse(inputs)
    if parsed is not None:
        rec.record(parsed)

    rec.stage = "verify"
    verdict, verified = tail.verify(inputs, claims)
    rec.record(verified)

    answer = inputs.raw
    verdict_dict = verified.verdict
    repair_changes: list[dict[str, Any]] = []
    pre_repair: str | None = None
    if tail.repair_due(gov.repair_enabled, verdict):
        rec.stage = "repair"
        from aborist.pipeline.repair_stage import repair_stage as default_repair

        hook = repair_stage if repair_stage is not None else default_repair
        repaired = hook(
            rec=rec, question=inputs.question, answer=inputs.raw, evidence=inputs.evidence,
            verdict=verdict, governance=gov, policy=inputs.policy, client=client,
        )  # fmt: skip
        if repaired is not None:
            answer, verdict_dict, repair_changes = repaired
            pre_repair = verdict.audit_mode

    rec.stage = "render"
    rendered = tail.render(answer, verdict_dict, inputs.evidence, inputs.policy)
    rec.record(rendered)
    return answer, verdict_dict, rendered, repair_changes, pre_repair


def _label_stage(
    rec: RunRecorder,
    gov: Governance,
    key: str,
    dims: KeyDimensions,
    answer: str,
    verdict_dict: dict[str, Any],
    use_cache: bool,
) -> tuple[dict[str, Any], RunDag]:
    """The label, the cache row and the run's close, committed together; returns the
    label's fields and the run DAG (of :data:`~aborist.events.DAG_VERSION`, which the
    label records and its stage hash covers)."""
    rec.stage = "label"
    label_fields = tail.label_fields(answer, verdict_dict)
    version = DAG_VERSION
    label = AnswerLabelled(**label_fields, dag_version=None if version == 1 else version,
                           run_dag={})  # fmt: skip
    rec.stage_hashes["final_label"] = label_stage_hash(label.to_event().payload)
    dag = build_dag(gov.mode, _dag_inputs(rec.stage_hashes, gov.mode, version), version)
    # The label is the last stage; writing the cache and closing the run compute nothing
    # more, so the three events commit together (the run is never labelled but unclosed).
    closing: list[EventPayload] = [label.model_copy(update={"run_dag": dag.to_dict()})]
    if use_cache:
        closing.append(
            CacheWritten(
                cache_key=key, answer=answer, audit_mode=label_fields["audit_mode"],
                label=label_fields["label"], run_dag_root=dag.root,
                key_dimensions=dims.to_dict(),
            )
        )  # fmt: skip
    closing.append(
        RunCompleted(
            status="answered", cache_hit=False, audit_mode=label_fields["audit_mode"],
            label=label_fields["label"], run_dag_root=dag.root,
        )
    )  # fmt: skip
    rec.record_all(closing)
    if use_cache:  # the first hit of the key is then served without reading the run back
        remember_written(rec.ledger, key, rec.run_id, rec.recorded, rec.blobs)
    return label_fields, dag


def _dag_inputs(stage_hashes: dict[str, str], mode: str, version: int) -> dict[str, str]:
    """The stage hashes a DAG of ``mode`` and ``version`` takes (``question`` is the
    run_started event)."""
    wanted = stages_for(mode, repaired="repair" in stage_hashes, version=version)
    return {s: stage_hashes[s] for s in wanted}
