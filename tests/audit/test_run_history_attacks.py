"""Events added to a finished run, and an answer planted for a question nobody asked: refused
at append through the library; written around it by plain SQL (correct hashes, no trigger
dropped), named by replay, replay --deep --checkpoint and verify-bundle at their seq with
the rule they break, never served, never counted twice. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from aborist.audit import replay
from aborist.audit.bundle import export_run, verify_bundle
from aborist.clients.extractive import ExtractiveClient
from aborist.errors import ProjectionError, RunGrammarError
from aborist.events import CacheWritten, RunCompleted, run_stream
from aborist.pipeline.keys import KeyDimensions, cache_key, question_hash
from aborist.pipeline.query import query
from aborist.pipeline.run import Governance
from aborist.projections import rebuild_projections
from cli.audit.ledger_cli import cli
from ledger.store import Ledger
from ledger.tlog.proofs import checkpoint
from tests.audit.builders import Q_FOUNDER, Built, raw_append

FORGED_ANSWER = "Brackwater was founded by the Emperor of the Moon. [E1]"
Q_NEVER = "Who paints the lighthouse of Brackwater?"


def projections(lg: Ledger) -> dict[str, list[tuple[Any, ...]]]:
    out = {}
    with lg.reader.connect() as conn:
        for table, key in (("runs", "run_id"), ("providence_cache", "cache_key"),
                           ("run_dag_nodes", "run_id, ordinal")):  # fmt: skip
            out[table] = [tuple(r) for r in conn.execute(text(f"SELECT * FROM {table} "
                                                              f"ORDER BY {key}"))]  # fmt: skip
    return out


def forged_closing(b: Built, run_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A second cache write and completion for ``run_id``: STRICT, with a made-up answer."""
    written = b.event(run_id, "qa.cache_written").data
    done = b.event(run_id, "qa.run_completed").data
    cw = {**written, "answer": FORGED_ANSWER, "audit_mode": "STRICT", "label": "STRICT"}
    rc = {**done, "audit_mode": "STRICT", "label": "STRICT"}
    return cw, rc


def planted(b: Built, run_id: str) -> dict[str, Any]:
    """A cache write filing ``FORGED_ANSWER`` under the key of a question nobody asked."""
    written = b.event(run_id, "qa.cache_written").data
    dims = dict(written["key_dimensions"], question_hash=question_hash(Q_NEVER))
    return {**written, "answer": FORGED_ANSWER, "key_dimensions": dims,
            "cache_key": cache_key(KeyDimensions(**dims))}  # fmt: skip


# -- through the library: refused, nothing written --------------------------------------


def test_library_refuses_events_after_a_finished_run(built: Built) -> None:
    lg = built.ledger
    before, head = projections(lg), lg.head()
    cw, rc = forged_closing(built, built.quote)
    stream = run_stream(built.quote)
    for expected in (len(built.events(built.quote)), None):
        with pytest.raises(RunGrammarError, match=r"nothing after qa\.run_completed") as e:
            lg.append(stream, [CacheWritten(**cw).to_event(), RunCompleted(**rc).to_event()],
                      expected_stream_seq=expected)  # fmt: skip
        assert f"seq {head[0] + 1}" in str(e.value) and "nothing was written" in str(e.value)
    assert lg.head() == head and projections(lg) == before
    # The question is still answered from the run's own history.
    again = query(Q_FOUNDER, ledger=lg, client=ExtractiveClient(), shards_dir=built.shards,
                  governance=Governance(mode="quote"))  # fmt: skip
    assert again.cache_hit and again.answer != FORGED_ANSWER


def test_library_refuses_a_planted_answer_for_a_never_asked_question(built: Built) -> None:
    lg = built.ledger
    head = lg.head()
    for run_id in (built.lattice, built.failed, built.hit):
        stream = run_stream(run_id)
        with pytest.raises(RunGrammarError, match=r"nothing after qa\.run_"):
            lg.append(stream, [CacheWritten(**planted(built, built.lattice)).to_event()])
    assert lg.head() == head
    assert not lg.fetch("SELECT 1 FROM providence_cache WHERE cache_key = :k",
                        {"k": planted(built, built.lattice)["cache_key"]})  # fmt: skip


def test_library_refuses_a_stage_twice_or_out_of_order(built: Built) -> None:
    """An unfinished run cannot be given a second stage event or one out of order."""
    lg = built.ledger
    events = built.events(built.lattice)
    prefix = [e for e in events if e.type in ("qa.run_started", "qa.cache_checked")]
    retrieval = next(e for e in events if e.type == "qa.retrieval_completed")
    from ledger.envelope import NewEvent

    stream = run_stream("openrun0001")
    started = dict(prefix[0].data, run_id="openrun0001")
    lg.append(stream, [NewEvent("qa.run_started", started),
                       NewEvent("qa.cache_checked", prefix[1].data)])  # fmt: skip
    with pytest.raises(RunGrammarError, match=r"cannot follow qa\.cache_checked"):
        lg.append(stream, [NewEvent("qa.prompt_built", {"prompt_blob": "0" * 64,
                                                         "prompt_version": "x"})])  # fmt: skip
    lg.append(stream, [NewEvent("qa.retrieval_completed", retrieval.data)])
    with pytest.raises(RunGrammarError, match=r"one qa\.retrieval_completed per run"):
        lg.append(stream, [NewEvent("qa.retrieval_completed", retrieval.data)])
    with pytest.raises(RunGrammarError, match="only the pipeline's stage events"):
        lg.append(stream, [NewEvent("qa.something_else", {})])
    assert len(lg.read_stream(stream)) == 3


# -- around the library: plain SQL with correct hashes ----------------------------------


def test_raw_events_after_a_finished_run_are_named_and_never_counted(
    built: Built, tmp_path: Path
) -> None:
    lg = built.ledger
    clean = replay(lg, deep=True)
    assert clean.ok, clean.to_dict()["divergences"]
    kept = checkpoint(lg)  # the auditor keeps it outside the database
    size = kept.tree_size
    cp = {"tree_size": size, "root": kept.root}
    before = projections(lg)
    cw, rc = forged_closing(built, built.quote)
    forged = raw_append(lg, run_stream(built.quote), "qa.cache_written", cw)
    raw_append(lg, run_stream(built.quote), "qa.run_completed", rc)

    for deep in (False, True):
        report = replay(lg, deep=deep, checkpoint=cp)
        assert not report.ok
        d = report.first("history")
        assert d is not None and (d.seq, d.run) == (forged.seq, built.quote)
        assert d.detail.startswith("nothing after qa.run_completed")
        assert report.runs == clean.runs  # the forged run is not counted twice
        assert report.checks["chain"] == "held"  # the hashes are all correct
    cp_file = tmp_path / "cp.json"
    cp_file.write_text(json.dumps(cp), encoding="utf-8")
    res = CliRunner().invoke(cli, ["replay", "--db", built.url, "--deep", "--checkpoint",
                                   str(cp_file)])  # fmt: skip
    assert res.exit_code == 1, res.output
    assert f"seq {forged.seq}, run {built.quote}" in res.output
    assert "nothing after qa.run_completed" in res.output
    assert (
        f"events 1–{size} are covered by the checkpoint you gave; {size + 1}–{size + 2} "
        "come after it and nothing outside this database vouches for them"
    ) in res.output

    bundle = export_run(lg, built.quote)
    got = verify_bundle(bundle, checkpoint=cp)
    assert not got.ok and got.status == "completed"
    first = got.first
    assert first is not None and (first.kind, first.seq) == ("history", forged.seq)

    # The live projection never folded the rows; a rebuild passes over them as well.
    assert projections(lg) == before
    rebuild_projections(lg)
    assert projections(lg) == before
    again = query(Q_FOUNDER, ledger=lg, client=ExtractiveClient(), shards_dir=built.shards,
                  governance=Governance(mode="quote"))  # fmt: skip
    assert again.cache_hit and again.answer != FORGED_ANSWER


def test_raw_planted_answer_for_a_never_asked_question_is_never_served(built: Built) -> None:
    lg = built.ledger
    plant = planted(built, built.lattice)
    forged = raw_append(lg, run_stream(built.lattice), "qa.cache_written", plant)
    # The insider files the answer in the projection too, as the fold would have.
    row = lg.fetch("SELECT run_dag_blob, created_at FROM providence_cache WHERE run_id = :r",
                   {"r": built.lattice})[0]  # fmt: skip
    with lg.engine.begin() as conn:
        conn.execute(
            text("INSERT INTO providence_cache (cache_key, answer, audit_mode, label, run_id, "
                 "run_dag_root, run_dag_blob, key_dimensions, created_at, written_seq, "
                 "hit_count, last_hit_at) VALUES (:k, :a, :m, :l, :r, :root, :blob, :dims, "
                 ":at, :seq, 0, NULL)"),
            {"k": plant["cache_key"], "a": FORGED_ANSWER, "m": plant["audit_mode"],
             "l": plant["label"], "r": built.lattice, "root": plant["run_dag_root"],
             "blob": row[0], "dims": json.dumps(plant["key_dimensions"]), "at": row[1],
             "seq": forged.seq},
        )  # fmt: skip
    with pytest.raises(ProjectionError, match="nothing was served"):
        query(Q_NEVER, ledger=lg, client=ExtractiveClient(), shards_dir=built.shards)
    report = replay(lg)
    d = report.first("history")
    assert d is not None and (d.seq, d.run) == (forged.seq, built.lattice)
    assert d.detail.startswith("nothing after qa.run_completed")
    # A rebuild holds each run's history: the planted row is gone.
    rebuild_projections(lg)
    assert not lg.fetch("SELECT 1 FROM providence_cache WHERE cache_key = :k",
                        {"k": plant["cache_key"]})  # fmt: skip


def test_a_run_whose_cache_key_is_not_its_own_question_diverges(built: Built) -> None:
    """A whole run copied by plain SQL under a new id, its cache check and write filed
    under the key of a question it never asked: the grammar holds, the recomputed key
    dimensions do not."""
    lg = built.ledger
    plant = planted(built, built.lattice)
    rid = "plantedrun0001"
    seqs = {}
    for ev in built.events(built.lattice):
        payload = ev.data
        if ev.type == "qa.run_started":
            payload["run_id"] = rid
        elif ev.type in ("qa.cache_checked", "qa.cache_written"):
            payload.update(key_dimensions=plant["key_dimensions"], cache_key=plant["cache_key"])
        seqs[ev.type] = raw_append(lg, run_stream(rid), ev.type, payload).seq
    report = replay(lg)
    d = report.first("cache")
    assert d is not None and (d.seq, d.run) == (seqs["qa.cache_checked"], rid)
    assert d.detail == "key_dimensions.question_hash, recomputed from the run's own record"
    assert d.expected == built.event(built.lattice, "qa.cache_checked").data[
        "key_dimensions"]["question_hash"]  # fmt: skip
    assert report.first("history") is None


def test_a_hit_names_the_cache_write_and_answer_it_served(built: Built) -> None:
    written = built.event(built.lattice, "qa.cache_written")
    checked = built.event(built.hit, "qa.cache_checked").data
    from aborist.pipeline.cache import answer_hash

    assert checked["hit_written_seq"] == written.seq
    assert checked["hit_answer_hash"] == answer_hash(written.data["answer"])


@pytest.mark.parametrize(("field", "value"), [("hit_written_seq", 1),
                                              ("hit_answer_hash", "0" * 64)])  # fmt: skip
def test_replay_checks_what_a_hit_says_it_served(built: Built, field: str, value: Any) -> None:
    """A hit copied by plain SQL whose served seq or answer hash is not the served run's."""
    lg = built.ledger
    rid = "forgedhit0001"
    for ev in built.events(built.hit):
        payload = ev.data
        if ev.type == "qa.run_started":
            payload["run_id"] = rid
        elif ev.type == "qa.cache_checked":
            payload[field] = value
        last = raw_append(lg, run_stream(rid), ev.type, payload)
    report = replay(lg)
    d = report.first("cache")
    assert d is not None and d.run == rid and d.seq == last.seq - 1
    assert d.detail.startswith(f"{field} of the hit")


def test_reports_say_what_vouches_for_the_events(built: Built, tmp_path: Path) -> None:
    lg = built.ledger
    report = replay(lg)
    assert report.ok
    assert report.vouched_for()["anchored"] is False
    res = CliRunner().invoke(cli, ["replay", "--db", built.url])
    assert res.exit_code == 0, res.output
    assert res.output.rstrip().endswith(
        "replay: everything held: self-consistent, not anchored to anything outside the "
        "database (give --checkpoint FILE, a checkpoint kept elsewhere, to anchor it)"
    )
    kept = checkpoint(lg)
    cp = {"tree_size": kept.tree_size, "root": kept.root}
    report = replay(lg, checkpoint=cp)
    assert report.vouched_for() == {
        "anchored": True, "covered": [1, kept.tree_size], "unanchored": None,
        "text": f"events 1–{kept.tree_size} are covered by the checkpoint you gave",
    }  # fmt: skip
    bundle = export_run(lg, built.quote)
    seqs = [e["seq"] for e in bundle["events"]]
    alone = verify_bundle(bundle)
    assert alone.ok and alone.vouched_for()["anchored"] is False
    assert alone.vouched_for()["text"].startswith("self-consistent: the bundle's checkpoint")
    anchored = verify_bundle(bundle, checkpoint=cp)
    assert anchored.ok and anchored.vouched_for()["covered"] == seqs
    assert anchored.vouched_for()["text"] == (  # the run's events, not "events 1–N"
        f"this run's {len(seqs)} event(s) at seqs {seqs[0]}–{seqs[-1]} are covered by the "
        f"checkpoint you gave (size {kept.tree_size})"
    )
    # A run answered after the checkpoint: its events are vouched for by nothing outside.
    later = query("Where does the Silverrun River flow?", ledger=lg, client=ExtractiveClient(),
                  shards_dir=built.shards)  # fmt: skip
    bundle = export_run(lg, later.run_id)
    got = verify_bundle(bundle, checkpoint=cp)
    assert got.ok, got.to_dict()["failures"]
    v = got.vouched_for()
    assert v["covered"] == [] and v["unanchored"] == [e["seq"] for e in bundle["events"]]
    assert v["anchored"] is False and v["text"].startswith("none of this run's events")
    assert "come after it and nothing outside the exporting database vouches" in v["text"]
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    cp_file = tmp_path / "cp.json"
    cp_file.write_text(json.dumps(cp), encoding="utf-8")
    res = CliRunner().invoke(cli, ["verify-bundle", str(path), "--checkpoint", str(cp_file)])
    assert res.exit_code == 0, res.output
    assert v["text"] in res.output


def test_a_run_written_through_the_library_under_another_questions_key_is_never_served(
    built: Built,
) -> None:
    """Every event of a copied run appended through the library (the grammar holds), its
    cache check and write filed under the key of a question it never asked: the fold
    writes the cache row, but the hit is refused, since the run's own record does not give
    that key; replay names the cache check."""
    from ledger.envelope import NewEvent

    lg = built.ledger
    plant = planted(built, built.lattice)
    rid = "plantedrun0002"
    events = []
    for ev in built.events(built.lattice):
        payload = ev.data
        if ev.type == "qa.run_started":
            payload["run_id"] = rid
        elif ev.type in ("qa.cache_checked", "qa.cache_written"):
            payload.update(key_dimensions=plant["key_dimensions"], cache_key=plant["cache_key"])
        if ev.type == "qa.cache_written":
            payload["answer"] = FORGED_ANSWER
        events.append(NewEvent(ev.type, payload))
    lg.append(run_stream(rid), events)
    assert lg.fetch("SELECT run_id FROM providence_cache WHERE cache_key = :k",
                    {"k": plant["cache_key"]}) == [(rid,)]  # fmt: skip
    with pytest.raises(ProjectionError, match="does not give that key; nothing was served"):
        query(Q_NEVER, ledger=lg, client=ExtractiveClient(), shards_dir=built.shards)
    d = replay(lg).first("cache")
    assert d is not None and d.run == rid


def test_a_cache_write_that_does_not_repeat_its_label_is_never_served(built: Built) -> None:
    """A run copied through the library under the same question's key, its cache write
    holding a made-up answer: the fold files it (a later write replaces the row), but the
    hit is refused, since the answer is not the one the run's label concluded."""
    from aborist.pipeline.query import query as ask_again
    from ledger.envelope import NewEvent

    lg = built.ledger
    rid = "copiedrun0003"
    events = []
    for ev in built.events(built.lattice):
        payload = ev.data
        if ev.type == "qa.run_started":
            payload["run_id"] = rid
        if ev.type == "qa.cache_written":
            payload["answer"] = FORGED_ANSWER
        events.append(NewEvent(ev.type, payload))
    lg.append(run_stream(rid), events)
    with pytest.raises(ProjectionError, match="does not repeat the answer and label"):
        ask_again("How long is the Silverrun River?", ledger=lg, client=ExtractiveClient(),
                  shards_dir=built.shards)  # fmt: skip
