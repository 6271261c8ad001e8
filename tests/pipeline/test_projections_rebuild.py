"""Rebuild equals live: the projections folded during appends are
exactly what ``Ledger.rebuild_projections()`` folds again from the events alone, row for
row, after any sequence of runs (misses, hits, failures, interrupts, both modes, with and
without the cache). On SQLite and PostgreSQL.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from aborist.clients.base import StubClient
from aborist.clients.extractive import ExtractiveClient
from aborist.errors import CorpusError, ModelError
from aborist.pipeline.ask import ask
from aborist.pipeline.query import query
from aborist.pipeline.run import Governance
from aborist.projections import PROJECTION_TABLES
from ledger.store import Ledger
from ledger.verify import verify_ledger
from tests.eldoria import Interrupting

PRIMARY_KEYS = {
    "providence_cache": "cache_key",
    "run_dag_nodes": "run_id, ordinal",
    "runs": "run_id",
}
QUESTIONS = (
    "How long is the Silverrun River?",
    "What honey does the Eldorian honeybee produce?",
    "What is the population of the capital city of Mars?",
)


def snapshot(ledger: Ledger) -> dict[str, list[tuple[Any, ...]]]:
    """Every projection table, all columns, ordered by primary key."""
    out = {}
    with ledger.reader.connect() as conn:
        for table in PROJECTION_TABLES:
            rows = conn.execute(text(f"SELECT * FROM {table} ORDER BY {PRIMARY_KEYS[table]}")).all()
            out[table] = [tuple(r) for r in rows]
    return out


def assert_rebuild_equals_live(ledger: Ledger) -> dict[str, list[tuple[Any, ...]]]:
    live = snapshot(ledger)
    live_positions = ledger.projection_positions()
    head = ledger.head()[0]
    # The runs projection is offered every event (each run event is checked against the
    # run grammar): its position is the head, the same live and rebuilt.
    folded = [e.seq for e in ledger.iter_events()]
    assert live_positions == ({"aborist.runs": folded[-1]} if folded else {})
    assert ledger.rebuild_projections() == head
    rebuilt = snapshot(ledger)
    for table in PROJECTION_TABLES:
        assert rebuilt[table] == live[table], table
    assert ledger.projection_positions() == {"aborist.runs": folded[-1] if folded else 0}
    report = verify_ledger(ledger)
    assert report.ok, report.to_dict()
    return live


def perform(ledger: Ledger, corpus: Any, step: tuple[str, int, str, bool]) -> None:
    kind, q, mode, use_cache = step
    question = QUESTIONS[q]
    common: dict[str, Any] = {
        "ledger": ledger, "shards_dir": corpus.shards_dir,
        "governance": Governance(mode=mode), "use_cache": use_cache,
    }  # fmt: skip
    if kind == "answer":
        query(question, client=ExtractiveClient(), **common)
    elif kind == "model_fails":
        with pytest.raises(ModelError):
            query(question, client=StubClient(), **common)
    elif kind == "missing_shard":
        with pytest.raises(CorpusError):
            query(question, client=ExtractiveClient(), shards=["absent"], **common)
    elif kind == "interrupt":
        with pytest.raises(KeyboardInterrupt):
            query(question, client=Interrupting(), **common)
    else:
        raise AssertionError(kind)


STEPS = st.tuples(
    st.sampled_from(["answer", "answer", "answer", "model_fails", "missing_shard", "interrupt"]),
    st.integers(0, len(QUESTIONS) - 1),
    st.sampled_from(["claim-lattice", "quote"]),
    st.booleans(),
)


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(STEPS, min_size=1, max_size=3))
def test_rebuild_equals_live_after_random_runs(
    pipeline_ledger: Ledger, corpus: Any, steps: list[tuple[str, int, str, bool]]
) -> None:
    """The ledger is shared by the examples, so later examples also hit answers cached by
    earlier ones: each check covers every run so far."""
    for step in steps:
        perform(pipeline_ledger, corpus, step)
    assert_rebuild_equals_live(pipeline_ledger)


def test_rebuild_equals_live_for_a_known_mix(pipeline_ledger: Ledger, corpus: Any) -> None:
    """One fixed sequence that certainly holds every kind of run, so the property above
    is never vacuous: misses in both modes, two hits, a no-cache run, an ask, a model
    failure, a missing shard and an interrupt."""
    steps = [
        ("answer", 0, "claim-lattice", True),
        ("answer", 0, "claim-lattice", True),  # hit
        ("answer", 0, "claim-lattice", True),  # hit
        ("answer", 1, "quote", True),
        ("answer", 1, "quote", False),
        ("answer", 2, "claim-lattice", True),
        ("model_fails", 1, "claim-lattice", True),
        ("missing_shard", 0, "quote", True),
        ("interrupt", 2, "quote", False),
    ]
    for step in steps:
        perform(pipeline_ledger, corpus, step)
    ask(corpus.bees, QUESTIONS[1], ledger=pipeline_ledger, client=ExtractiveClient())

    live = assert_rebuild_equals_live(pipeline_ledger)
    assert len(live["runs"]) == len(steps) + 1
    assert len(live["providence_cache"]) == 4  # q0 lattice, q1 quote, q2 lattice, ask
    assert len(live["run_dag_nodes"]) == 9 + 8 + 8 + 9 + 9  # quote: DAG version 2
    with pipeline_ledger.reader.connect() as conn:
        statuses = sorted(str(r[0]) for r in conn.execute(text("SELECT status FROM runs")).all())
        hits = conn.execute(text("SELECT SUM(hit_count) FROM providence_cache")).scalar_one()
    assert statuses == ["completed"] * 7 + ["failed"] * 2 + ["started"]
    assert int(hits) == 2


def test_rebuild_repairs_a_damaged_projection(pipeline_ledger: Ledger, corpus: Any) -> None:
    """The projections are disposable: wipe and corrupt them, rebuild, and they come back
    identical to what the appends had folded."""
    for step in [("answer", 0, "claim-lattice", True), ("answer", 0, "claim-lattice", True)]:
        perform(pipeline_ledger, corpus, step)
    live = snapshot(pipeline_ledger)
    with pipeline_ledger.engine.begin() as conn:
        conn.execute(text("DELETE FROM run_dag_nodes"))
        conn.execute(text("UPDATE providence_cache SET hit_count = 99, answer = 'forged'"))
        conn.execute(text("UPDATE runs SET status = 'failed'"))
    assert snapshot(pipeline_ledger) != live
    pipeline_ledger.rebuild_projections()
    assert snapshot(pipeline_ledger) == live
