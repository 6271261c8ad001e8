"""The run grammar (aborist/pipeline/history.py; docs/pipeline.md, "The run grammar"): every
run the pipeline records keeps it, every way of breaking it is named at its seq with its
rule, and a run's history is always a prefix of its stream, so no reader can choose between
a first and a last event of a stage."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.events import STAGE_TABLE
from aborist.pipeline.history import RUN_GRAMMAR, GrammarState, RunHistory
from ledger.canonical import canonical_text
from ledger.envelope import RecordedEvent

RID = "run0000001"


def ev(seq: int, type_: str, payload: dict[str, Any] | None = None) -> RecordedEvent:
    return RecordedEvent(seq, f"id{seq}", f"run:{RID}", seq, type_, 1, "",
                         canonical_text(payload or {}), "", "", "")  # fmt: skip


def started(mode: str = "claim-lattice", use_cache: bool = True, repair: bool = False) -> dict:
    return {"run_id": RID, "mode": mode, "use_cache": use_cache,
            "policy": {"repair_enabled": repair}}  # fmt: skip


MISS_LATTICE = [
    "qa.retrieval_completed", "qa.evidence_mapped", "qa.prompt_built", "qa.model_answered",
    "qa.claims_parsed", "qa.answer_verified", "qa.answer_rendered", "qa.answer_labelled",
    "qa.cache_written",
]  # fmt: skip


def miss_run(types: Sequence[str] = MISS_LATTICE, **kw: Any) -> list[RecordedEvent]:
    out = [ev(1, "qa.run_started", started(**kw)), ev(2, "qa.cache_checked", {"hit": False})]
    for t in types:
        out.append(ev(len(out) + 1, t))
    out.append(ev(len(out) + 1, "qa.run_completed", {"cache_hit": False}))
    return out


def hit_run() -> list[RecordedEvent]:
    return [
        ev(1, "qa.run_started", started()),
        ev(2, "qa.cache_checked", {"hit": True, "hit_run_id": "src0000001"}),
        ev(3, "qa.run_completed", {"cache_hit": True, "served_from_run_id": "src0000001"}),
    ]


def test_the_pipeline_shapes_keep_the_grammar() -> None:
    quote = ["qa.retrieval_completed", "qa.context_assembled", "qa.prompt_built",
             "qa.model_answered", "qa.answer_verified", "qa.answer_rendered",
             "qa.answer_labelled"]  # fmt: skip
    repaired = [*MISS_LATTICE[:6], "qa.answer_repaired", "qa.reprompt_attempted",
                "qa.reprompt_attempted", "qa.answer_repaired", *MISS_LATTICE[6:]]  # fmt: skip
    runs = {
        "lattice": miss_run(),
        "quote, no cache": miss_run(quote, mode="quote", use_cache=False),
        "repaired": miss_run(repaired, repair=True),
        "hit": hit_run(),
    }
    for name, events in runs.items():
        h = RunHistory.read(RID, events)
        assert h.ok, (name, h.broken)
        assert h.accepted == events and h.status in ("completed", "cached"), name
    failed = [ev(1, "qa.run_started", started()), ev(2, "qa.run_failed")]
    assert RunHistory.read(RID, failed).status == "failed"
    interrupted = miss_run()[:5]
    assert RunHistory.read(RID, interrupted).status == "incomplete"


def renumbered(types: list[str]) -> list[RecordedEvent]:
    payloads = {"qa.run_started": started(), "qa.cache_checked": {"hit": False},
                "qa.run_completed": {"cache_hit": False}}  # fmt: skip
    return [ev(i + 1, t, payloads.get(t)) for i, t in enumerate(types)]


def broken(events: list[RecordedEvent]) -> tuple[int, str]:
    h = RunHistory.read(RID, events)
    assert h.broken is not None
    assert h.accepted == events[: len(h.accepted)] and h.ignored == len(events) - len(h.accepted)
    return h.broken.seq, h.broken.rule


def test_each_rule_is_named_at_its_seq() -> None:
    done = miss_run()
    n = len(done)
    assert broken([*done, ev(n + 1, "qa.cache_written")]) == (
        n + 1,
        "nothing after qa.run_completed",
    )
    fail = [ev(1, "qa.run_started", started()), ev(2, "qa.run_failed"), ev(3, "qa.run_failed")]
    assert broken(fail) == (3, "nothing after qa.run_failed")
    twice = [e.type for e in miss_run()]
    twice.insert(3, "qa.retrieval_completed")
    once = "one qa.retrieval_completed per run (the run's is seq 3)"
    assert broken(renumbered(twice)) == (4, once)
    skipped = renumbered([e.type for e in miss_run() if e.type != "qa.prompt_built"])
    assert broken(skipped) == (5, "stages in order: qa.model_answered cannot follow "
                                  "qa.evidence_mapped")  # fmt: skip
    quote_with_claims = miss_run(["qa.retrieval_completed", "qa.context_assembled",
                                  "qa.prompt_built", "qa.model_answered", "qa.claims_parsed"],
                                 mode="quote")  # fmt: skip
    assert broken(quote_with_claims)[1].startswith("qa.claims_parsed is not a stage of this run")
    no_cache = miss_run(use_cache=False)
    assert broken(no_cache)[1].startswith("qa.cache_written is not a stage of this run")
    no_repair = miss_run([*MISS_LATTICE[:6], "qa.answer_repaired", *MISS_LATTICE[6:]])
    assert broken(no_repair)[1].startswith("qa.answer_repaired is not a stage of this run")
    after_hit = [*hit_run()[:2], ev(3, "qa.retrieval_completed")]
    assert broken(after_hit)[1].startswith("qa.retrieval_completed is not a stage")
    assert broken([ev(1, "qa.cache_checked", {"hit": False})]) == (
        1, "a run begins with qa.run_started")  # fmt: skip
    assert broken([ev(1, "qa.run_started", dict(started(), run_id="other"))])[1] == (
        "qa.run_started names its own stream's run")  # fmt: skip
    lying = hit_run()
    lying[2] = ev(3, "qa.run_completed", {"cache_hit": False})
    assert broken(lying) == (3, "qa.run_completed repeats the cache check's hit")
    elsewhere = hit_run()
    elsewhere[2] = ev(3, "qa.run_completed", {"cache_hit": True, "served_from_run_id": "x"})
    assert broken(elsewhere) == (3, "a cache hit completes from the run it checked")
    stranger = [*miss_run()[:3], ev(4, "corpus.shard_ingested")]
    assert broken(stranger) == (4, "only the pipeline's stage events belong to a run")


def test_the_grammar_table_names_every_stage_once() -> None:
    """Rows are told apart by event type and ``after``; their names are the stage
    table's recorder stages (no fourth vocabulary)."""
    rows = [(s.type, s.after) for s in RUN_GRAMMAR]
    assert len(rows) == len(set(rows))
    recorder = {r.event.TYPE: r.recorder for r in STAGE_TABLE}
    assert [s.name for s in RUN_GRAMMAR] == [recorder[s.type] for s in RUN_GRAMMAR]
    assert [s.after for s in RUN_GRAMMAR if s.after] == ["qa.reprompt_attempted"]
    assert RUN_GRAMMAR[0].type == "qa.run_started" and RUN_GRAMMAR[-1].type == "qa.run_completed"


def test_the_docs_show_the_grammar_table() -> None:
    """docs/pipeline.md's grammar table lists the code's rows: stage and event, in order."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "pipeline.md").read_text("utf-8")
    table = doc.split("| stage | event | when it applies | |\n|---|---|---|---|\n")[1]
    rows = [line.split(" | ")[:2] for line in table.split("\n\n")[0].splitlines()]
    shown = [(stage.removeprefix("| "), event.split("`")[1]) for stage, event in rows]
    assert shown == [(s.name, s.type) for s in RUN_GRAMMAR]


TYPES = sorted({s.type for s in RUN_GRAMMAR} | {"qa.run_failed", "x.other"})


@settings(max_examples=300, deadline=None)
@given(
    base=st.sampled_from(["lattice", "hit"]),
    edits=st.lists(st.tuples(st.integers(0, 20), st.sampled_from(TYPES)), max_size=4),
)
def test_a_history_is_the_grammatical_prefix(base: str, edits: list[tuple[int, str]]) -> None:
    """Whatever is inserted into a run's stream, its history is a prefix of the stream, no
    type but the repeatable ones occurs twice in it, it ends at its terminal event if it
    has one, and the step-by-step state (what the projection fold uses) agrees with it."""
    events = miss_run() if base == "lattice" else hit_run()
    types = [e.type for e in events]
    for at, t in edits:
        types.insert(min(at, len(types)), t)
    payloads = {"qa.run_started": started(), "qa.cache_checked": {"hit": base == "hit",
                "hit_run_id": "src0000001"},
                "qa.run_completed": {"cache_hit": base == "hit",
                                     "served_from_run_id": "src0000001"}}  # fmt: skip
    stream = [ev(i + 1, t, payloads.get(t)) for i, t in enumerate(types)]
    h = RunHistory.read(RID, stream)
    assert stream[: len(h.accepted)] == h.accepted
    seen = [e.type for e in h.accepted]
    for t in set(seen) - {"qa.reprompt_attempted", "qa.answer_repaired"}:
        assert seen.count(t) == 1, t
    if h.terminal is not None:
        assert h.accepted[-1] is h.terminal
    assert (h.broken is None) == (len(h.accepted) == len(stream))
    state = GrammarState(RID)
    refused = [e.seq for e in stream if state.step(e, lambda x: x.data) is not None]
    assert refused == [e.seq for e in stream[len(h.accepted) :]]
