"""What a run does when what it reads was changed behind the ledger's back: an edited
answer-cache row (a projection, with no triggers) is never served, and a shard whose chunk
text no longer matches its stored hash fails the run instead of reaching the verifier.
Both are recorded as failed runs, with the chain intact. On SQLite and PostgreSQL.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from aborist.clients.extractive import ExtractiveClient
from aborist.errors import CorpusError, InputError, ProjectionError
from aborist.pipeline.query import query
from ledger.store import Ledger
from ledger.verify import verify_ledger
from tests.eldoria import falsify_river_length

Q = "How long is the Silverrun River?"
ANSWER = "The Silverrun River is 412 kilometres long."


def ask_q(ledger: Ledger, corpus: Any, question: str = Q, **kw: Any) -> Any:
    return query(
        question, ledger=ledger, client=ExtractiveClient(), shards_dir=corpus.shards_dir, **kw
    )


def edit_cache(ledger: Ledger, sql: str, **params: Any) -> None:
    with ledger.reader.begin() as conn:
        conn.execute(text(sql), params)


def last_failure(ledger: Ledger) -> dict[str, Any]:
    [last] = ledger.read(gt=ledger.head()[0] - 1)
    assert last.type == "qa.run_failed"
    assert last.stream.startswith("run:")
    return dict(last.data)


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("answer", "The Silverrun River is 9000 kilometres long. [E1]"),
        ("audit_mode", "HYBRID"),
        ("label", "UNVERIFIED"),
        ("run_dag_root", "0" * 64),
    ],
)
def test_an_edited_cache_row_is_never_served(
    pipeline_ledger: Ledger, corpus: Any, column: str, value: str
) -> None:
    first = ask_q(pipeline_ledger, corpus)
    assert ANSWER in first.answer and not first.cache_hit
    edit_cache(
        pipeline_ledger,
        f"UPDATE providence_cache SET {column} = :v WHERE cache_key = :k",
        v=value,
        k=first.cache_key,
    )
    with pytest.raises(ProjectionError, match=rf"differs from run {first.run_id}.*{column}"):
        ask_q(pipeline_ledger, corpus)
    failed = last_failure(pipeline_ledger)
    assert (failed["stage"], failed["error_type"]) == ("cache", "ProjectionError")
    assert verify_ledger(pipeline_ledger).ok
    # With the row restored from the events, the same question is a hit again.
    pipeline_ledger.rebuild_projections()
    again = ask_q(pipeline_ledger, corpus)
    assert again.cache_hit and again.answer == first.answer


def test_a_cache_row_pointing_at_another_run_is_never_served(
    pipeline_ledger: Ledger, corpus: Any
) -> None:
    river = ask_q(pipeline_ledger, corpus)
    bees = ask_q(pipeline_ledger, corpus, "What honey does the Eldorian honeybee produce?")
    edit_cache(
        pipeline_ledger,
        "UPDATE providence_cache SET run_id = :r, answer = :a WHERE cache_key = :k",
        r=bees.run_id,
        a=bees.answer,
        k=river.cache_key,
    )
    with pytest.raises(ProjectionError, match="record no cache write for that key"):
        ask_q(pipeline_ledger, corpus)
    assert last_failure(pipeline_ledger)["stage"] == "cache"


def test_a_shard_edited_after_ingest_fails_the_run(pipeline_ledger: Ledger, corpus: Any) -> None:
    falsify_river_length(corpus.shards_dir)
    with pytest.raises(CorpusError, match=r"no longer matches its hash.*re-ingest it"):
        ask_q(pipeline_ledger, corpus, use_cache=False)
    failed = last_failure(pipeline_ledger)
    assert (failed["stage"], failed["error_type"]) == ("evidence", "CorpusError")
    assert verify_ledger(pipeline_ledger).ok


@pytest.mark.parametrize("question", ["river \ud800 length?", "\udcff"])
def test_a_question_with_a_lone_surrogate_is_refused_before_any_event(
    pipeline_ledger: Ledger, corpus: Any, question: str
) -> None:
    plain = r"not valid text: character \d+ is (the byte 0xFF|half of a character \(the lone)"
    with pytest.raises(InputError, match=plain):
        ask_q(pipeline_ledger, corpus, question)
    assert pipeline_ledger.head()[0] == 0  # nothing was recorded
