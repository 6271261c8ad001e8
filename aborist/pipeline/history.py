"""One reading of a run's history: the run grammar as one table of stages, and
:class:`RunHistory`, the only way the rest of aborist learns what a run said
(docs/pipeline.md, "The run grammar").

A run's stream is read against :data:`RUN_GRAMMAR`: the stage events in that order, each
at most once (only ``qa.reprompt_attempted`` repeats), the stages that apply to the run
(its mode, whether the cache was hit, whether it caches and repairs) never skipped unless
optional, ``qa.run_failed`` allowed after any stage, and nothing after ``qa.run_completed``
or ``qa.run_failed``. The run's history is the longest prefix of its events that keeps
the grammar; the first event that breaks it is a :class:`GrammarBreak` naming its seq and
the rule, and it and every later event of the stream are not part of the history. So there
is no "first" or "last" of a stage to choose between: in a history every stage event is
the only one of its type.

The same :class:`GrammarState` decides at append time (:mod:`aborist.projections` refuses
an event that breaks the grammar, in the same transaction) and at audit time (replay,
export and verify-bundle, the report and the cache-hit path read through
:class:`RunHistory`). Pure: payloads come in through the caller's parser.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from aborist.events import (
    MODES,
    STAGE_TABLE,
    AnswerLabelled,
    AnswerRendered,
    AnswerRepaired,
    AnswerVerified,
    CacheChecked,
    CacheWritten,
    ClaimsParsed,
    ContextAssembled,
    EventPayload,
    EvidenceMapped,
    ModelAnswered,
    PromptBuilt,
    RepromptAttempted,
    RetrievalCompleted,
    RunCompleted,
    RunFailed,
    RunStarted,
)
from ledger.envelope import RecordedEvent

__all__ = [
    "FACT_TYPES",
    "RUN_EVENT_TYPES",
    "RUN_GRAMMAR",
    "RUN_STARTED",
    "TERMINAL_TYPES",
    "GrammarBreak",
    "GrammarState",
    "RunFacts",
    "RunHistory",
    "Stage",
]

RUN_STARTED = RunStarted.TYPE
RUN_COMPLETED = RunCompleted.TYPE
RUN_FAILED = RunFailed.TYPE
CACHE_CHECKED = CacheChecked.TYPE
TERMINAL_TYPES = frozenset({RUN_COMPLETED, RUN_FAILED})
#: The payloads the grammar itself reads (the facts that decide which stages apply, and
#: the completion it checks against the cache check).
FACT_TYPES = frozenset({RUN_STARTED, CACHE_CHECKED, RUN_COMPLETED})


@dataclass
class RunFacts:
    """What decides which stages a run has: from ``qa.run_started`` (mode, whether it
    caches and may repair) and ``qa.cache_checked`` (whether the cache was hit)."""

    mode: str = ""
    use_cache: bool = False
    repair: bool = False
    hit: bool | None = None  # None until the cache check
    hit_run_id: str | None = None


def _miss(f: RunFacts) -> bool:
    return f.hit is False


@dataclass(frozen=True, slots=True)
class Stage:
    """One row of the run grammar: the event type, when the stage applies to a run,
    whether it may be left out, whether it may repeat, and the event type it must
    directly follow (``after``), if any. ``name`` is the recorder stage of its event in
    :data:`aborist.events.STAGE_TABLE`: the grammar has no stage names of its own, and
    its rows are told apart by event type and ``after`` (``qa.answer_repaired`` is a row
    twice: the mechanical repair, and the re-prompt's directly after
    ``qa.reprompt_attempted``)."""

    name: str
    type: str
    when: Callable[[RunFacts], bool] = lambda _f: True
    optional: bool = False
    repeat: bool = False
    after: str | None = None


_RECORDER = {r.event.TYPE: r.recorder for r in STAGE_TABLE}


def _stage(
    event: type[EventPayload],
    when: Callable[[RunFacts], bool] = lambda _f: True,
    *,
    optional: bool = False,
    repeat: bool = False,
    after: type[EventPayload] | None = None,
) -> Stage:
    """A grammar row for ``event``, named from the stage table."""
    follows = None if after is None else after.TYPE
    return Stage(_RECORDER[event.TYPE], event.TYPE, when, optional, repeat, follows)


def _repairing(f: RunFacts) -> bool:
    return _miss(f) and f.repair


#: The run grammar, in order (docs/pipeline.md, "The run grammar").
RUN_GRAMMAR: tuple[Stage, ...] = (
    _stage(RunStarted),
    _stage(CacheChecked),
    _stage(RetrievalCompleted, _miss),
    _stage(EvidenceMapped, lambda f: _miss(f) and f.mode == "claim-lattice"),
    _stage(ContextAssembled, lambda f: _miss(f) and f.mode == "quote"),
    _stage(PromptBuilt, _miss),
    _stage(ModelAnswered, _miss),
    _stage(ClaimsParsed, lambda f: _miss(f) and f.mode == "claim-lattice"),
    _stage(AnswerVerified, _miss),
    _stage(AnswerRepaired, _repairing, optional=True),
    _stage(RepromptAttempted, _repairing, optional=True, repeat=True),
    _stage(AnswerRepaired, _repairing, optional=True, after=RepromptAttempted),
    _stage(AnswerRendered, _miss),
    _stage(AnswerLabelled, _miss),
    _stage(CacheWritten, lambda f: _miss(f) and f.use_cache),
    _stage(RunCompleted),
)

RUN_EVENT_TYPES = frozenset({s.type for s in RUN_GRAMMAR} | {RUN_FAILED})


@dataclass(frozen=True, slots=True)
class GrammarBreak:
    """The first event of a run that breaks the grammar: where, which rule, what the
    grammar expected there and what was found."""

    seq: int
    run_id: str
    type: str
    rule: str
    expected: str
    found: str

    def message(self) -> str:
        return (
            f"seq {self.seq}, run {self.run_id}: {self.rule}: expected {self.expected}, "
            f"found {self.found}"
        )


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class GrammarState:
    """A run's position in :data:`RUN_GRAMMAR`, advanced one event at a time.

    :meth:`step` returns None when the event keeps the grammar (and advances), else the
    :class:`GrammarBreak`; after a break, every later event is refused with a rule that
    names the break."""

    __slots__ = ("broken", "ended", "facts", "last", "pos", "run_id", "seen")

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.pos = -1  # index into RUN_GRAMMAR of the last stage taken
        self.facts = RunFacts()
        self.ended: RecordedEvent | None = None
        self.broken: GrammarBreak | None = None
        self.last: RecordedEvent | None = None
        self.seen: dict[str, int] = {}  # type -> seq of its (first) event in the history

    def expected(self) -> list[str]:
        """The event types that may come next."""
        if self.ended is not None or self.broken is not None:
            return []
        if self.pos < 0:
            return [RUN_STARTED]
        return [RUN_GRAMMAR[i].type for i in self._next()] + [RUN_FAILED]

    def _next(self) -> tuple[int, ...]:
        f = self.facts
        return _successors(self.pos, f.mode, f.use_cache, f.repair, f.hit)

    def _break(self, ev: RecordedEvent, rule: str, expected: str, found: str) -> GrammarBreak:
        b = GrammarBreak(ev.seq, self.run_id, ev.type, rule, expected, found)
        self.broken = b
        return b

    def step(self, ev: RecordedEvent, data: Callable[[RecordedEvent], Any]) -> GrammarBreak | None:
        """Advance over ``ev`` (``data`` parses a payload; only the payloads of
        :data:`FACT_TYPES` are asked for)."""
        t = ev.type
        if self.pos >= 0 and self.ended is None and self.broken is None:
            f = self.facts  # the common case first: a stage event in its place
            i = _successor_types(self.pos, f.mode, f.use_cache, f.repair, f.hit).get(t)
            if i is not None and t not in FACT_TYPES:
                self.pos = i
                self.last = ev
                if t not in self.seen:
                    self.seen[t] = ev.seq
                return None
        if self.broken is not None:
            b = self.broken
            return GrammarBreak(ev.seq, self.run_id, t, "nothing after a break of the run "
                                "grammar", f"no event after seq {b.seq}", t)  # fmt: skip
        if self.ended is not None:
            end = self.ended
            return self._break(ev, f"nothing after {end.type}",
                               f"no event after seq {end.seq}", t)  # fmt: skip
        if self.pos < 0:
            if t != RUN_STARTED:
                return self._break(ev, f"a run begins with {RUN_STARTED}", RUN_STARTED, t)
            return self._start(ev, _as_dict(_safe(data, ev)))
        if t == RUN_FAILED:
            self._take(ev)
            self.ended = ev
            return None
        nxt = self._next()
        for i in nxt:
            if RUN_GRAMMAR[i].type == t:
                if t in FACT_TYPES:
                    return self._advance(i, ev, data)
                self.pos = i
                self.last = ev
                self.seen.setdefault(t, ev.seq)
                return None
        want = " or ".join([RUN_GRAMMAR[i].type for i in nxt] + [RUN_FAILED])
        after = self.last.type if self.last is not None else "the start"
        if t not in RUN_EVENT_TYPES:
            return self._break(ev, "only the pipeline's stage events belong to a run", want, t)
        if t in self.seen:
            return self._break(ev, f"one {t} per run (the run's is seq {self.seen[t]})", want, t)
        if not any(s.type == t and s.when(self.facts) for s in RUN_GRAMMAR):
            return self._break(ev, f"{t} is not a stage of this run ({self._kind()})", want, t)
        return self._break(ev, f"stages in order: {t} cannot follow {after}", want, t)

    def _kind(self) -> str:
        f = self.facts
        hit = "a cache hit" if f.hit else "a cache miss" if f.hit is False else "before the check"
        extra = "" if f.use_cache else ", not caching"
        extra += ", repair enabled" if f.repair else ""
        return f"{f.mode or '?'} mode, {hit}{extra}"

    def _take(self, ev: RecordedEvent) -> None:
        self.last = ev
        self.seen.setdefault(ev.type, ev.seq)

    def _start(self, ev: RecordedEvent, p: dict[str, Any]) -> GrammarBreak | None:
        if ev.stream_seq != 1:
            return self._break(ev, f"{RUN_STARTED} is the first event of its stream",
                               "stream_seq 1", str(ev.stream_seq))  # fmt: skip
        if self.run_id and p.get("run_id") != self.run_id:
            return self._break(ev, f"{RUN_STARTED} names its own stream's run",
                               f"run_id {self.run_id}", repr(p.get("run_id")))  # fmt: skip
        mode = p.get("mode")
        if mode not in MODES:
            return self._break(ev, "a run's mode is claim-lattice or quote",
                               "claim-lattice or quote", repr(mode))  # fmt: skip
        policy = _as_dict(p.get("policy"))
        self.facts = RunFacts(mode=str(mode), use_cache=p.get("use_cache") is True,
                              repair=policy.get("repair_enabled") is True)  # fmt: skip
        self.pos = 0
        self._take(ev)
        return None

    def _advance(
        self, i: int, ev: RecordedEvent, data: Callable[[RecordedEvent], Any]
    ) -> GrammarBreak | None:
        t = ev.type
        if t == CACHE_CHECKED:
            p = _as_dict(_safe(data, ev))
            hit = p.get("hit")
            if not isinstance(hit, bool):
                return self._break(ev, f"{CACHE_CHECKED} says whether the cache was hit",
                                   "hit true or false", repr(hit))  # fmt: skip
            if hit and not self.facts.use_cache:
                return self._break(ev, "a run that does not use the cache is never served "
                                   "from it", "hit false", "hit true")  # fmt: skip
            self.facts.hit = hit
            self.facts.hit_run_id = p.get("hit_run_id") if hit else None
        elif t == RUN_COMPLETED:
            p = _as_dict(_safe(data, ev))
            if p.get("cache_hit") is not self.facts.hit:
                return self._break(
                    ev,
                    f"{RUN_COMPLETED} repeats the cache check's hit",
                    f"cache_hit {self.facts.hit}",
                    repr(p.get("cache_hit")),
                )
            if self.facts.hit and p.get("served_from_run_id") != self.facts.hit_run_id:
                return self._break(ev, "a cache hit completes from the run it checked",
                                   f"served_from_run_id {self.facts.hit_run_id}",
                                   repr(p.get("served_from_run_id")))  # fmt: skip
            self.ended = ev
        self.pos = i
        self._take(ev)
        return None


@cache
def _successors(
    pos: int, mode: str, use_cache: bool, repair: bool, hit: bool | None
) -> tuple[int, ...]:
    """The rows of :data:`RUN_GRAMMAR` that may follow row ``pos`` in a run of these facts
    (the table read once per shape of run, not once per event)."""
    facts = RunFacts(mode=mode, use_cache=use_cache, repair=repair, hit=hit)
    here = RUN_GRAMMAR[pos]
    out = [pos] if here.repeat else []
    for i in range(pos + 1, len(RUN_GRAMMAR)):
        st = RUN_GRAMMAR[i]
        if not st.when(facts) or (st.after is not None and st.after != here.type):
            continue
        out.append(i)
        if not st.optional:
            break
    return tuple(out)


@cache
def _successor_types(
    pos: int, mode: str, use_cache: bool, repair: bool, hit: bool | None
) -> dict[str, int]:
    """:func:`_successors` by event type (no two successors share a type)."""
    return {RUN_GRAMMAR[i].type: i for i in _successors(pos, mode, use_cache, repair, hit)}


def _safe(data: Callable[[RecordedEvent], Any], ev: RecordedEvent) -> Any:
    """The payload, or None when the parser refuses it (the grammar then reads the facts
    it needs as absent; what is wrong with the bytes is another check's finding)."""
    try:
        return data(ev)
    except (ValueError, RecursionError, TypeError):
        return None


def _loads(ev: RecordedEvent) -> Any:
    return json.loads(ev.payload)


@dataclass
class RunHistory:
    """A run's history, read once: ``accepted`` is the longest prefix of its events that
    keeps :data:`RUN_GRAMMAR`; ``broken`` is the first event that does not (None when every
    event does), and ``ignored`` counts the events from it on, which are not part of the
    history. Every accessor reads the accepted events only."""

    run_id: str
    events: Sequence[RecordedEvent]
    accepted: list[RecordedEvent] = field(default_factory=list)
    broken: GrammarBreak | None = None
    ignored: int = 0
    facts: RunFacts = field(default_factory=RunFacts)
    _by_type: dict[str, RecordedEvent] = field(default_factory=dict)

    @classmethod
    def read(
        cls,
        run_id: str,
        events: Iterable[RecordedEvent],
        data: Callable[[RecordedEvent], Any] = _loads,
    ) -> RunHistory:
        """The history of ``events`` (one run's stream, in order). ``data`` parses a
        payload (replay passes its shared, limited parse); only the grammar's
        :data:`FACT_TYPES` are parsed here."""
        events = list(events)
        state = GrammarState(run_id)
        h = cls(run_id, events)
        step = state.step
        n = len(events)
        for i, ev in enumerate(events):
            b = step(ev, data)
            if b is not None:
                h.broken = b
                h.ignored = len(events) - i
                n = i
                break
        h.accepted = events[:n]
        h.facts = state.facts
        return h

    @property
    def ok(self) -> bool:
        return self.broken is None

    def event(self, type_: str) -> RecordedEvent | None:
        """The history's event of ``type_`` (the first of ``qa.reprompt_attempted`` and
        ``qa.answer_repaired``, which may occur twice; the rest are in ``accepted``)."""
        if not self._by_type and self.accepted:
            for ev in self.accepted:
                self._by_type.setdefault(ev.type, ev)
        return self._by_type.get(type_)

    @property
    def terminal(self) -> RecordedEvent | None:
        last = self.accepted[-1] if self.accepted else None
        return last if last is not None and last.type in TERMINAL_TYPES else None

    @property
    def status(self) -> str:
        """completed | cached | failed | incomplete (started, never finished), from the
        history's terminal event."""
        end = self.terminal
        if end is None:
            return "incomplete"
        if end.type == RUN_FAILED:
            return "failed"
        return "cached" if self.facts.hit else "completed"
