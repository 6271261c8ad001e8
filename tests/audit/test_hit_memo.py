"""A hit served again from what the last check of the same run showed: only while the
key, the cache row and the served run's last event are those it checked. Anything
appended to the run, or any edit of the row, sends the next hit through the whole check
again, which refuses or serves exactly as it does the first time. SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

import aborist.pipeline.cache as cache
from aborist.clients.extractive import ExtractiveClient
from aborist.errors import ProjectionError
from aborist.events import run_stream
from aborist.pipeline.query import query
from aborist.pipeline.run import Governance, RunResult
from tests.audit.builders import Q_FOUNDER, Q_LENGTH, Built, raw_append
from tests.audit.test_run_history_attacks import FORGED_ANSWER, forged_closing


class Reads:
    """Counts the served run's stream reads (the whole check reads it once)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = cache.stream_outline

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(cache, "stream_outline", counted)


def ask(b: Built, question: str = Q_LENGTH, **kw: Any) -> RunResult:
    return query(question, ledger=b.ledger, client=ExtractiveClient(), shards_dir=b.shards, **kw)


def served(r: RunResult) -> tuple[Any, ...]:
    return (r.answer, r.audit_mode, r.label, r.run_dag_root, r.served_from_run_id,
            r.evidence, r.citations)  # fmt: skip


def test_a_second_hit_serves_the_same_without_reading_the_run_again(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = Reads(monkeypatch)
    first, second = ask(built), ask(built)
    assert first.cache_hit and second.cache_hit and reads.count == 0  # built hit it already
    assert served(first) == served(second) and first.evidence
    assert first.evidence is not second.evidence  # each hit has its own copy
    first.evidence[0]["text"] = "changed by a caller"
    assert ask(built).evidence == second.evidence
    # What the hits recorded names the same cache write and answer as the first hit's.
    hits = [built.event(r.run_id, "qa.cache_checked").data for r in (first, second)]
    recorded = built.event(built.hit, "qa.cache_checked").data
    for h in hits:
        assert (h["hit_written_seq"], h["hit_answer_hash"]) == (
            recorded["hit_written_seq"], recorded["hit_answer_hash"])  # fmt: skip


def test_events_appended_to_a_served_run_send_the_next_hit_through_the_check(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    gov = Governance(mode="quote")
    before = ask(built, Q_FOUNDER, governance=gov)  # served from the quote run: remembered
    assert before.cache_hit
    reads = Reads(monkeypatch)
    cw, rc = forged_closing(built, built.quote)
    raw_append(built.ledger, run_stream(built.quote), "qa.cache_written", cw)
    raw_append(built.ledger, run_stream(built.quote), "qa.run_completed", rc)
    after = ask(built, Q_FOUNDER, governance=gov)
    assert reads.count == 1  # the run's last event moved: read and checked again
    assert after.cache_hit and served(after) == served(before)
    assert after.answer != FORGED_ANSWER
    # The insider also points the row at the forged write: refused, as on a first hit.
    with built.ledger.engine.begin() as conn:
        conn.execute(text("UPDATE providence_cache SET answer = :a WHERE run_id = :r"),
                     {"a": FORGED_ANSWER, "r": built.quote})  # fmt: skip
    with pytest.raises(ProjectionError, match="nothing was served"):
        ask(built, Q_FOUNDER, governance=gov)
    assert reads.count == 2


@pytest.mark.parametrize(
    ("column", "value"),
    [("answer", "The Silverrun River is 9000 kilometres long. [E1]"), ("audit_mode", "HYBRID"),
     ("label", "UNVERIFIED"), ("run_dag_root", "0" * 64), ("written_seq", 1)],
)  # fmt: skip
def test_an_edited_row_is_refused_after_the_run_was_served(
    built: Built, column: str, value: Any
) -> None:
    assert ask(built).cache_hit  # remembered
    with built.ledger.engine.begin() as conn:
        conn.execute(text(f"UPDATE providence_cache SET {column} = :v WHERE run_id = :r"),
                     {"v": value, "r": built.lattice})  # fmt: skip
    with pytest.raises(ProjectionError, match=rf"differs from run {built.lattice}.*{column}"):
        ask(built)


def test_the_first_hit_of_a_fresh_answer_reads_nothing_back_and_serves_what_the_check_does(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "What honey does the Eldorian honeybee produce?"
    miss = ask(built, question)
    assert not miss.cache_hit
    reads = Reads(monkeypatch)
    first = ask(built, question)
    assert first.cache_hit and reads.count == 0  # remembered when the miss recorded it
    cache._MEMO.clear()  # the same hit in a process that remembers nothing
    fresh = ask(built, question)
    assert reads.count == 1 and served(fresh) == served(first)
    assert (first.answer, first.evidence, first.citations) == (miss.answer, miss.evidence,
                                                               miss.citations)  # fmt: skip


def test_a_row_edited_after_the_miss_is_refused_at_the_first_hit(built: Built) -> None:
    question = "What honey does the Eldorian honeybee produce?"
    miss = ask(built, question)
    with built.ledger.engine.begin() as conn:
        conn.execute(text("UPDATE providence_cache SET label = 'STRICT' WHERE cache_key = :k"),
                     {"k": miss.cache_key})  # fmt: skip
    with pytest.raises(ProjectionError, match=rf"differs from run {miss.run_id}.*label"):
        ask(built, question)
