"""Serving a cache hit, and what binds a cache entry to its run (docs/pipeline.md;
docs/replay.md, "What binds a cache entry").

``providence_cache`` is a projection: it maps a cache key to the run whose answer can be
served. What is served is that run's own record, read through its history
(:class:`~aborist.pipeline.history.RunHistory`): its one ``qa.cache_written`` event, its
evidence blobs, its rendered citations, checked against the row first, so an edited row is
refused rather than served (:class:`~aborist.errors.ProjectionError`). The hit records the
seq of that ``qa.cache_written`` and the sha256 of the answer it served.

:func:`recorded_key_dimensions` recomputes a run's cache key dimensions from what the run
itself recorded (question, model profile, governance and verifier policy, versions, shard
roots): replay compares them with the dimensions and key its ``qa.cache_checked`` and
``qa.cache_written`` name, so an entry cannot be filed under a question its run never
asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from weakref import WeakKeyDictionary

import orjson

from aborist.errors import ProjectionError
from aborist.events import (
    AnswerLabelled,
    AnswerRendered,
    CacheChecked,
    CacheWritten,
    ContextAssembled,
    EvidenceMapped,
    RunStarted,
    run_stream,
)
from aborist.pipeline.history import FACT_TYPES, RunHistory
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
from aborist.projections import cache_row, stream_outline
from ledger.canonical import sha256_hex
from ledger.envelope import RecordedEvent
from ledger.store import Ledger

__all__ = [
    "Served",
    "answer_hash",
    "clear_hit_memo",
    "lookup",
    "recorded_key_dimensions",
    "remember_written",
    "served_run",
]


def lookup(ledger: Ledger, key: str) -> dict[str, Any] | None:
    """The cache row of ``key`` and the served run's last event
    (:func:`aborist.projections.cache_row`), or None."""
    return cache_row(ledger, key)


def answer_hash(answer: str) -> str:
    """sha256 of an answer's UTF-8 text: what a hit records of the answer it served."""
    return sha256_hex(answer.encode("utf-8"))


@dataclass
class Served:
    """What a hit serves besides the row's answer: the served run's evidence and
    citations, and the seq of the ``qa.cache_written`` it was served from."""

    evidence: list[dict[str, Any]]
    citations: list[dict[str, Any]]
    written_seq: int = 0


#: The cache row's columns that must equal the served run's ``qa.cache_written``.
_CACHED = ("answer", "audit_mode", "label", "run_dag_root")
_EVIDENCE = (EvidenceMapped.TYPE, ContextAssembled.TYPE)


@dataclass(frozen=True, slots=True)
class _Shown:
    """What :func:`_served_checked` showed of one served run, and from which events."""

    key: str
    #: The ``stream_seq`` and ``hash`` of the last event of the run's stream, when read.
    head: tuple[int, str]
    #: The ``_CACHED`` columns and ``written_seq`` of the row it was served for.
    row: tuple[Any, ...]
    #: ``(evidence, citations)`` as JSON: every hit gets its own copy.
    served: bytes
    written_seq: int


#: Per ledger, per served run, what serving it showed last (at most _MEMO_RUNS runs).
_MEMO: WeakKeyDictionary[Ledger, dict[str, _Shown]] = WeakKeyDictionary()
_MEMO_RUNS = 1024


def clear_hit_memo() -> None:
    """Forget every run a hit's check has shown, so the next hit of each is checked in
    full, as in a new process (``bench/query.py --cold-hits``)."""
    _MEMO.clear()


def _row_of(hit: dict[str, Any]) -> tuple[Any, ...]:
    return (*(hit[c] for c in _CACHED), hit.get("written_seq"))


def served_run(ledger: Ledger, key: str, hit: dict[str, Any]) -> Served:
    """What the hit ``hit`` (a :func:`lookup` row) serves: :func:`_served_checked`, or
    what it showed for the same run before, when nothing it read can have changed.

    A run's events are append-only and its blobs content-addressed, so what the check
    shows of a run depends only on the key, the row and the run's stream. The stream is
    known unchanged when its last event (``stream_seq`` and ``hash``, which the row's
    lookup reads in the same statement) is the one the check read last: anything appended
    after it moves the head, and the check then runs again on the whole stream (and
    refuses an event after the run's end, as the grammar does). Any other row or key is
    checked afresh too. So a hit served from the memo is served exactly what the check
    would serve, without reading the run's stream again."""
    run_id = hit["run_id"]
    memo = _MEMO.get(ledger)
    shown = memo.get(run_id) if memo is not None else None
    if (
        shown is not None
        and shown.key == key
        and shown.head == (hit.get("head_stream_seq"), hit.get("head_hash"))
        and shown.row == _row_of(hit)
    ):
        evidence, citations = orjson.loads(shown.served)
        return Served(evidence, citations, shown.written_seq)
    served, head = _served_checked(ledger, key, hit)
    _remember(ledger, key, hit, served, head)
    return served


def _remember(
    ledger: Ledger, key: str, hit: dict[str, Any], served: Served, head: tuple[int, str]
) -> None:
    memo = _MEMO.get(ledger)
    if memo is None:
        memo = _MEMO.setdefault(ledger, {})
    if len(memo) >= _MEMO_RUNS:
        memo.clear()
    memo[hit["run_id"]] = _Shown(key, head, _row_of(hit),
                                 orjson.dumps((served.evidence, served.citations)),
                                 served.written_seq)  # fmt: skip


def remember_written(
    ledger: Ledger, key: str, run_id: str, events: Sequence[RecordedEvent],
    blobs: Sequence[bytes] = (),
) -> None:  # fmt: skip
    """Check, as a hit of ``key`` would, the run this process has just recorded (its
    ``events`` as the append returned them, the evidence ``blobs`` it appended), and
    remember what it shows: the first hit then finds the run's last event unchanged and
    is served without reading the run back. The check is the hit's own
    (:func:`_served_checked`), run on the very events the ledger holds; a run it would
    refuse is not remembered (its first hit reads the ledger, and refuses)."""
    written = next((ev for ev in reversed(events) if ev.type == CacheWritten.TYPE), None)
    if written is None:
        return
    try:
        hit = {c: written.data.get(c) for c in _CACHED}
        hit.update(run_id=run_id, written_seq=written.seq)
        texts = {sha256_hex(b): b for b in blobs}
        served, head = _served_checked(ledger, key, hit, events, texts)
    except (ProjectionError, KeyError, TypeError, ValueError, AttributeError):
        return
    _remember(ledger, key, hit, served, head)


def _served_checked(
    ledger: Ledger,
    key: str,
    hit: dict[str, Any],
    outline: Sequence[RecordedEvent] | None = None,
    blobs: dict[str, bytes] | None = None,
) -> tuple[Served, tuple[int, str]]:
    """The run a cache hit serves, from its own history and blobs, checked against the
    ``providence_cache`` row that pointed at it.

    The row is a projection: anyone with write access to the database can edit it, and
    nothing in the row itself would show it. So before anything is served, the run's
    history (hash-chained, append-only events read against the run grammar) must hold a
    completed run whose one ``qa.cache_written`` is the row's event (``written_seq``),
    names the same key and holds the same answer, audit mode, label and DAG root;
    otherwise the hit fails with :class:`ProjectionError` and the run is recorded as
    failed at ``cache``. Returns it with the ``stream_seq`` and hash of the last event
    of the run's stream as read. ``outline`` and ``blobs``, when given, are the run's
    events and evidence blobs as this process recorded them (:func:`remember_written`):
    read from memory instead of the ledger (a blob not among them is read)."""
    run_id = hit["run_id"]
    parsed: dict[int, Any] = {}

    def data(ev: RecordedEvent) -> Any:  # each payload parsed once for the whole hit
        found = parsed.get(ev.seq)
        if found is None:
            found = parsed[ev.seq] = ev.data
        return found

    if outline is None:
        outline = stream_outline(ledger, run_stream(run_id), _SERVED_PAYLOADS)
    history = RunHistory.read(run_id, outline, data)
    fix = "run `aborist-ledger replay` to see what differs, `aborist-ledger rebuild` to restore"
    written_ev = history.event(CacheWritten.TYPE)
    written = data(written_ev) if written_ev is not None else None
    if written is None or written.get("cache_key") != key or history.status != "completed":
        raise ProjectionError(
            f"the answer cache row for key {key[:16]}… points at run {run_id}, whose history "
            f"records no completed cache write for that key; nothing was served ({fix})"
        )
    assert written_ev is not None
    _check_bound(history, data, written, key, run_id, fix)
    differs = [c for c in _CACHED if written.get(c) != hit[c]]
    if hit.get("written_seq") != written_ev.seq:
        differs.append("written_seq")
    if differs:
        raise ProjectionError(
            f"the answer cache row for key {key[:16]}… differs from run {run_id}'s "
            f"{CacheWritten.TYPE} event in {', '.join(differs)}; nothing was served ({fix})"
        )
    evidence: list[dict[str, Any]] = []
    for t in _EVIDENCE:
        ev = history.event(t)
        if ev is None:
            continue
        items = data(ev)["evidence"]
        wanted = [item["text_blob"] for item in items]
        texts = {h: blobs[h] for h in wanted if h in blobs} if blobs else {}
        if len(texts) < len(set(wanted)):
            texts = ledger.get_blobs(wanted)
        for item in items:
            public = {k: item[k] for k in ("pointer_id", "evidence_id", "source_uri",
                                            "title", "source_role")}  # fmt: skip
            if "locator" in item:
                public["locator"] = item["locator"]
            public["text"] = texts[item["text_blob"]].decode("utf-8")
            evidence.append(public)
    rendered = history.event(AnswerRendered.TYPE)
    citations = data(rendered)["citations"] if rendered is not None else []
    last = outline[-1]  # not empty: the run's history holds a cache write
    return Served(evidence, citations, written_ev.seq), (last.stream_seq, last.hash)


def _check_bound(
    history: RunHistory,
    data: Callable[[RecordedEvent], Any],
    written: dict[str, Any],
    key: str,
    run_id: str,
    fix: str,
) -> None:
    """The key the served run's own record gives (:func:`recorded_key_dimensions`) must be
    the key it is served under, and its cache write's dimensions those: a run that asked
    one question cannot have filed its answer under another's key, even when every event
    of it was appended through the library."""
    started, checked = history.event(RunStarted.TYPE), history.event(CacheChecked.TYPE)
    try:
        assert started is not None and checked is not None
        # The verifier policy as the check names it: replay holds it to the verdict (a
        # verdict is the run's largest payload after the retrieval record).
        want = recorded_key_dimensions(data(started), data(checked), None)
    except (AssertionError, KeyError, TypeError, ValueError, AttributeError):
        want = {}
    dims = {k: v for k, v in want.items() if k != "cache_key"}
    if want.get("cache_key") != key or written.get("key_dimensions") != dims:
        raise ProjectionError(
            f"the answer cache row for key {key[:16]}… points at run {run_id}, whose own "
            f"record (question, model profile, policies, shard roots) does not give that "
            f"key; nothing was served ({fix})"
        )
    labelled = history.event(AnswerLabelled.TYPE)
    label = data(labelled) if labelled is not None else {}
    concluded = (label.get("answer_hash"), label.get("audit_mode"), label.get("label"))
    cached = (answer_hash(str(written.get("answer"))), written.get("audit_mode"),
              written.get("label"))  # fmt: skip
    if concluded != cached:
        raise ProjectionError(
            f"run {run_id}'s cache write does not repeat the answer and label its "
            f"{AnswerLabelled.TYPE} concluded; nothing was served ({fix})"
        )


#: The payloads serving a hit reads: the grammar's facts and what is served.
_SERVED_PAYLOADS = tuple(
    sorted(FACT_TYPES | {CacheWritten.TYPE, AnswerRendered.TYPE, AnswerLabelled.TYPE,
                         *_EVIDENCE})
)  # fmt: skip


@lru_cache(maxsize=256)
def _root_of(shards: tuple[tuple[str, str], ...]) -> str:
    """:func:`source_root_of`, remembered: a few shard sets serve every run."""
    return source_root_of(dict(shards))


def recorded_key_dimensions(
    started: dict[str, Any], checked: dict[str, Any], verdict: dict[str, Any] | None
) -> dict[str, str]:
    """The cache key dimensions a run's own record implies: the question, model profile
    and governance policy of its ``qa.run_started``, the shard roots of its
    ``qa.cache_checked``, the verifier policy its verdict records (a hit has none: the
    one its key names), the event schema of this code. The corpus versions are taken as
    the cache check names them (what ties them to the shards' ingest is the corpus
    record). Raises ``KeyError`` / ``TypeError`` / ``ValueError`` for a record the
    pipeline never writes."""
    named = checked["key_dimensions"]
    policy = started["policy"]
    mode = policy.get("question_hash_mode", "strict")
    verifier = verdict.get("verifier_policy_hash") if isinstance(verdict, dict) else None
    dims = KeyDimensions(
        source_root=_root_of(tuple(sorted(dict(checked["shards"]).items()))),
        question_hash=question_hash(str(started["question"]), mode),
        model_profile_hash=json_hash(started["model_profile"]),
        conversation_hash=conversation_hash(),
        governance_policy_hash=governance_policy_hash(policy),
        schema_version=SCHEMA_VERSION,
        canonicalization_version=str(named["canonicalization_version"]),
        chunking_version=str(named["chunking_version"]),
        verifier_policy_hash=str(verifier if verifier is not None
                                 else named["verifier_policy_hash"]),
    )  # fmt: skip
    out = dims.to_dict()
    out["cache_key"] = cache_key(dims)
    return out
