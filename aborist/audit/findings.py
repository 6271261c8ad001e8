"""What a replay found: divergences, version skew, and the summary of what held.

A :class:`Divergence` is one place where the ledger's bytes, a recomputation from them,
or a projection of them disagree (docs/replay.md: the first divergence of each
kind, with seq, run, stage, expected and found). Version skew is kept apart: a verdict recorded
by another verifier version or policy is not evidence of tampering, it only means the
deterministic stages cannot be re-run to the same bytes by this code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "KINDS",
    "LISTED",
    "CorpusNotRecorded",
    "Divergence",
    "NotReexecuted",
    "ReplayReport",
    "VersionSkew",
    "clip",
    "clip_typed",
]

#: Every kind of divergence, in the order the checks run.
KINDS = (
    "chain", "envelope", "checkpoint", "tile", "history", "blob", "dag", "cache", "corpus",
    "deep", "projection",
)  # fmt: skip

_CLIP = 240

#: How many version-skew and not-re-executed entries a report lists (all are counted).
LISTED = 20


#: The most characters of one value a finding's text line shows.
MESSAGE_CLIP = 500


def clip(value: object, width: int = _CLIP) -> str:
    """A one-line rendering of ``value`` short enough for a terminal."""
    s = value if isinstance(value, str) else repr(value)
    s = " ".join(s.split())
    return s if len(s) <= width else s[: width - 1] + "…"


def clip_typed(value: object, width: int = _CLIP) -> str:
    """:func:`clip` of a value read from JSON, its JSON type named unless it is an integer:
    where an integer is expected, ``"2"`` (a string) is shown as ``"2" (a string)``, not
    as ``2``, and ``true`` as ``true (a boolean)``."""
    if type(value) is int or value is None:
        return "null" if value is None else str(value)
    kind = _JSON_TYPES.get(type(value), type(value).__name__)
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):  # not from JSON at all
        text = repr(value)
    return f"{clip(text, width)} ({kind})"


_JSON_TYPES = {
    str: "a string", bool: "a boolean", float: "a non-integer number", list: "an array",
    dict: "an object",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Divergence:
    """One disagreement: which check, where, what was expected and what was found."""

    kind: str
    seq: int | None
    run: str | None
    stage: str | None
    expected: str
    found: str
    detail: str = ""

    def message(self) -> str:
        """One line; each value a hostile row supplies clipped to :data:`MESSAGE_CLIP`
        characters (a 2 MB hash written on SQLite was printed whole): ``to_dict`` keeps
        them as found."""
        where = []
        if self.seq is not None:
            where.append(f"seq {self.seq}")
        if self.run is not None:
            where.append(f"run {clip(self.run, MESSAGE_CLIP)}")
        if self.stage is not None:
            where.append(f"stage {clip(self.stage, MESSAGE_CLIP)}")
        head = ", ".join(where) or "ledger"
        detail = f" ({clip(self.detail, MESSAGE_CLIP)})" if self.detail else ""
        want, found = clip(self.expected, MESSAGE_CLIP), clip(self.found, MESSAGE_CLIP)
        return f"{head}{detail}: expected {want}, found {found}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "seq": self.seq,
            "run": self.run,
            "stage": self.stage,
            "expected": self.expected,
            "found": self.found,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class VersionSkew:
    """A run recorded by a different verifier (version or policy) than the running one."""

    seq: int
    run: str
    stage: str
    field: str
    recorded: str
    running: str

    def message(self) -> str:
        return (
            f"seq {self.seq}, run {self.run}, stage {self.stage}: {self.field} recorded "
            f"{self.recorded}, running {self.running}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "run": self.run,
            "stage": self.stage,
            "field": self.field,
            "recorded": self.recorded,
            "running": self.running,
        }


@dataclass(frozen=True, slots=True)
class NotReexecuted:
    """A stage ``--deep`` could not re-run, and why (skew, a missing module, a model call)."""

    run: str
    stage: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "stage": self.stage, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class CorpusNotRecorded:
    """A run that read a shard whose source root no ``corpus.shard_ingested`` before it
    recorded, as its ``qa.cache_checked`` says it was allowed to (docs/replay.md): not
    tampering, but nothing in the ledger ties its evidence to an ingested corpus."""

    seq: int
    run: str
    shard: str
    source_root: str

    def message(self) -> str:
        return (
            f"seq {self.seq}, run {self.run}: corpus not recorded (shard {self.shard}, "
            f"source root {self.source_root})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "run": self.run, "shard": self.shard,
                "source_root": self.source_root}  # fmt: skip


def _runs(n: int) -> str:
    return "1 run" if n == 1 else f"{n} runs"


@dataclass
class ReplayReport:
    """Everything a replay checked; ``ok`` when nothing diverged.

    ``divergences`` keeps the first divergence of each kind in ``seq`` order (and
    ``counts`` how many of each there were), so one tampering does not bury the report in
    its consequences.
    """

    scope: dict[str, Any] = field(default_factory=dict)
    events_checked: int = 0
    head_seq: int = 0
    head_hash: str = ""
    runs: dict[str, int] = field(default_factory=dict)  # status -> count
    dags_checked: int = 0
    stages_checked: int = 0
    blobs_checked: int = 0
    #: The addresses ``--deep`` checked: a blob several runs reference counts once.
    blobs_seen: set[str] = field(default_factory=set, repr=False)
    #: How many checkpoints (recorded, and the file) had each outcome of
    #: :mod:`aborist.audit.checks.checkpoints`: ``confirmed`` (held to the tree of the
    #: hashes the chain recomputed), ``unrehashed`` (held only by a consistency proof over
    #: the stored hashes, past the events the chain re-hashed), ``rejected`` (a divergence),
    #: ``unchecked`` (no tree to hold it to). A rejected one is never counted as checked.
    checkpoint_outcomes: dict[str, int] = field(default_factory=dict)
    #: The outcome of the checkpoint file (``--checkpoint``), None when none was given.
    checkpoint_file: str | None = None
    tiles_checked: int = 0
    deep_runs: int = 0
    deep_stages: int = 0
    #: Runs ``--deep`` did not re-execute in full because a stage was recorded by another
    #: version (the verifier's: nothing re-ran; the renderer's: the rendering did not).
    skewed_runs: int = 0
    projection_rows: dict[str, int] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)  # check -> held|diverged|skipped
    divergences: dict[str, Divergence] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    version_skew: list[VersionSkew] = field(default_factory=list)
    not_reexecuted: list[NotReexecuted] = field(default_factory=list)
    skew_count: int = 0
    not_reexecuted_count: int = 0
    #: Runs whose every shard root a prior ingest recorded; evidence chunks shown by an
    #: inclusion proof to be leaves of those roots (``--deep``).
    corpus_runs: int = 0
    corpus_chunks: int = 0
    corpus_not_recorded: list[CorpusNotRecorded] = field(default_factory=list)
    corpus_not_recorded_count: int = 0

    @property
    def ok(self) -> bool:
        return not self.divergences

    @property
    def checkpoints_confirmed(self) -> int:
        return self.checkpoint_outcomes.get("confirmed", 0)

    @property
    def checkpoints_unrehashed(self) -> int:
        return self.checkpoint_outcomes.get("unrehashed", 0)

    @property
    def checkpoints_rejected(self) -> int:
        return self.checkpoint_outcomes.get("rejected", 0)

    @property
    def checkpoints_unchecked(self) -> int:
        return self.checkpoint_outcomes.get("unchecked", 0)

    def diverge(self, d: Divergence) -> None:
        """Record ``d``; every one is counted, and of each kind the one with the lowest
        ``seq`` is kept (the earliest recorded among equal seqs; one without a seq only
        while no other has one). Checks that run runs in batches, or in another order than
        the events, still report the first divergence in the ledger's order."""
        self._keep(d)
        self.counts[d.kind] = self.counts.get(d.kind, 0) + 1

    def _keep(self, d: Divergence) -> None:
        kept = self.divergences.get(d.kind)
        if kept is None or (d.seq is not None and (kept.seq is None or d.seq < kept.seq)):
            self.divergences[d.kind] = d

    def absorb(self, part: ReplayReport) -> None:
        """Merge what a check run on its own found (its divergences, by the same rule as
        :meth:`diverge`, their counts, and the projection rows it compared)."""
        for d in part.divergences.values():
            self._keep(d)
        for kind, n in part.counts.items():
            self.counts[kind] = self.counts.get(kind, 0) + n
        self.projection_rows.update(part.projection_rows)

    def merge(self, part: ReplayReport) -> None:
        """Add what ``part`` found after what this report found: as if ``part``'s checks
        had reported here, in the order they ran (its counters added, its divergences by
        the rule of :meth:`diverge`, its listed skew and skipped stages after these). Replay
        checks ``--deep`` batches into parts of their own, possibly in another process, and
        merges them in the ledger's order."""
        for kind, n in part.runs.items():
            self.runs[kind] = self.runs.get(kind, 0) + n
        self.dags_checked += part.dags_checked
        self.stages_checked += part.stages_checked
        self.blobs_checked += part.blobs_checked - len(part.blobs_seen & self.blobs_seen)
        self.blobs_seen |= part.blobs_seen
        for outcome, n in part.checkpoint_outcomes.items():
            self.checkpoint_outcomes[outcome] = self.checkpoint_outcomes.get(outcome, 0) + n
        self.deep_runs += part.deep_runs
        self.deep_stages += part.deep_stages
        self.skewed_runs += part.skewed_runs
        self.absorb(part)
        room = max(LISTED - len(self.version_skew), 0)
        self.version_skew.extend(part.version_skew[:room])
        self.skew_count += part.skew_count
        room = max(LISTED - len(self.not_reexecuted), 0)
        self.not_reexecuted.extend(part.not_reexecuted[:room])
        self.not_reexecuted_count += part.not_reexecuted_count
        self.corpus_runs += part.corpus_runs
        self.corpus_chunks += part.corpus_chunks
        room = max(LISTED - len(self.corpus_not_recorded), 0)
        self.corpus_not_recorded.extend(part.corpus_not_recorded[:room])
        self.corpus_not_recorded_count += part.corpus_not_recorded_count

    def skew(self, s: VersionSkew) -> None:
        """Record version skew (the first :data:`LISTED` are kept, all are counted)."""
        self.skew_count += 1
        if len(self.version_skew) < LISTED:
            self.version_skew.append(s)

    def skip(self, n: NotReexecuted) -> None:
        """Record a stage ``--deep`` did not re-run (first :data:`LISTED` kept)."""
        self.not_reexecuted_count += 1
        if len(self.not_reexecuted) < LISTED:
            self.not_reexecuted.append(n)

    def unrecorded(self, c: CorpusNotRecorded) -> None:
        """Flag a run as "corpus not recorded" (first :data:`LISTED` kept, all counted)."""
        self.corpus_not_recorded_count += 1
        if len(self.corpus_not_recorded) < LISTED:
            self.corpus_not_recorded.append(c)

    def first(self, kind: str) -> Divergence | None:
        return self.divergences.get(kind)

    def held_line(self) -> str:
        """The last line of a replay whose checks all held: "everything held" only when
        nothing was left unproven; runs ``--deep`` did not re-execute for version skew, and
        runs flagged "corpus not recorded" (no ingest vouches for their evidence), are
        named instead."""
        vouched = self.vouched_for()["text"]
        left = []
        if self.skewed_runs:
            left.append(f"{_runs(self.skewed_runs)} not re-executed in full (version skew)")
        if self.corpus_not_recorded_count:
            left.append(f"{_runs(self.corpus_not_recorded_count)} flagged corpus not recorded")
        if not left:
            return f"replay: everything held: {vouched}"
        return f"replay: everything checked held, but {' and '.join(left)}: {vouched}"

    def vouched_for(self) -> dict[str, Any]:
        """What vouches for the events checked: the checkpoint the auditor gave (kept
        outside the database) covers seqs 1 to its size, once its consistency proof to the
        head held; nothing outside the database vouches for the rest, nor for anything
        when no checkpoint was given (checkpoints recorded in the database are the
        database's own word). ``text`` says so in one sentence."""
        size = self.scope.get("checkpoint")
        head = self.head_seq
        if size is None:
            return {"anchored": False, "covered": None, "unanchored": [1, head] if head else None,
                    "text": "self-consistent, not anchored to anything outside the database "
                            "(give --checkpoint FILE, a checkpoint kept elsewhere, to anchor "
                            "it)"}  # fmt: skip
        if self.checkpoint_file in ("rejected", "unchecked") or (
            self.checkpoint_file is None and self.checks.get("checkpoint") == "diverged"
        ):
            how = "was not checked" if self.checkpoint_file == "unchecked" else "does not hold"
            return {"anchored": False, "covered": None, "unanchored": [1, head] if head else None,
                    "text": f"the checkpoint you gave (size {size}) {how}: nothing "
                            "outside this database vouches for these events"}  # fmt: skip
        low, high, caveats = self._rehashed(min(int(size), head))
        covered: list[int] | None = [low, high] if low <= high else None
        text = (
            f"events {low}–{high} are covered by the checkpoint you gave"
            if covered
            else "no event this replay re-hashed is covered by the checkpoint you gave"
        ) + "".join(caveats)
        rest = None
        top = max(int(size), int(self.scope.get("since") or 0))
        if head > top + 1:
            rest = [top + 1, head]
            text += (f"; {top + 1}–{head} come after it and nothing outside this "
                     "database vouches for them")  # fmt: skip
        elif head > top:
            rest = [head, head]
            text += f"; {head} comes after it and nothing outside this database vouches for it"
        return {"anchored": covered is not None, "covered": covered, "unanchored": rest,
                "text": text}  # fmt: skip

    def _rehashed(self, high: int) -> tuple[int, int, list[str]]:
        """Of events ``1..high`` (those the checkpoint you gave committed to), the ones
        this replay re-hashed from their payloads and found chained: a checkpoint commits
        to the stored hashes, so it covers an event only once its hash was recomputed.
        ``--since SEQ`` leaves events ``1..SEQ`` un-hashed, and a chain that failed at
        ``k`` does not hold events ``k..`` to their hashes. Returns (low, high, the
        clauses saying what was left out)."""
        since = int(self.scope.get("since") or 0)
        caveats = []
        if since:
            caveats.append(f"; events 1–{since} were not re-hashed (--since {since}): the "
                           "checkpoint commits to their stored hashes, which this replay "
                           "did not recompute from the payloads")  # fmt: skip
        broke = self.first("chain")
        if broke is not None and broke.seq is not None and broke.seq <= high:
            high = broke.seq - 1
            caveats.append(f"; from event {broke.seq} on the chain failed, so the "
                           "checkpoint does not vouch for those events")  # fmt: skip
        return since + 1, high, caveats

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "scope": self.scope,
            "vouched_for": self.vouched_for(),
            "summary": {
                "events_checked": self.events_checked,
                "head_seq": self.head_seq,
                "head_hash": self.head_hash,
                "runs": dict(sorted(self.runs.items())),
                "dags_checked": self.dags_checked,
                "stages_checked": self.stages_checked,
                "blobs_checked": self.blobs_checked,
                "checkpoints_checked": self.checkpoints_confirmed,
                "checkpoints_confirmed": self.checkpoints_confirmed,
                "checkpoints_rejected": self.checkpoints_rejected,
                "checkpoints_unrehashed": self.checkpoints_unrehashed,
                "checkpoints_unchecked": self.checkpoints_unchecked,
                "tiles_checked": self.tiles_checked,
                "deep_runs": self.deep_runs,
                "deep_stages": self.deep_stages,
                "corpus_runs": self.corpus_runs,
                "corpus_chunks": self.corpus_chunks,
                "projection_rows": dict(sorted(self.projection_rows.items())),
            },
            "checks": dict(self.checks),
            "divergences": [self.divergences[k].to_dict() for k in KINDS if k in self.divergences],
            "divergence_counts": {k: self.counts[k] for k in KINDS if k in self.counts},
            "version_skew_count": self.skew_count,
            "version_skew": [s.to_dict() for s in self.version_skew],
            "not_reexecuted_count": self.not_reexecuted_count,
            "not_reexecuted": [n.to_dict() for n in self.not_reexecuted],
            "corpus_not_recorded_count": self.corpus_not_recorded_count,
            "corpus_not_recorded": [c.to_dict() for c in self.corpus_not_recorded],
            "held_line": self.held_line() if self.ok else None,
        }
