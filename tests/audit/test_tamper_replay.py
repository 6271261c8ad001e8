"""Tamper detection: an insider edits a real ledger (built by running queries) in
every way listed, on SQLite and PostgreSQL, and replay names the kind, seq and run.

The insider drops the append-only triggers first (:mod:`tests.ledger.tamper`). The most
careful insider (:func:`rewrite`) also recomputes every later payload hash, event hash,
``prev_hash`` link and run DAG and rebuilds the projections, so the ledger is consistent
with itself: only a checkpoint kept outside the database (``replay --checkpoint``) or
re-execution (``replay --deep``) can tell.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from aborist.audit import ReplayReport, replay
from aborist.audit.findings import Divergence
from aborist.pipeline.dag import DAG_VERSION, STAGE_EVENTS, build_dag, recorded_version, stages_for
from aborist.pipeline.run import label_stage_hash
from cli.audit.ledger_cli import cli
from ledger.canonical import canonical_text, sha256_hex
from ledger.envelope import GENESIS_HASH, RecordedEvent, event_hash
from ledger.store import Ledger
from ledger.tlog.proofs import checkpoint
from tests.audit.builders import Built, add_repair_runs
from tests.ledger.tamper import drop_triggers, tamper


def only(report: ReplayReport, kind: str) -> Divergence:
    d = report.first(kind)
    assert d is not None, (kind, report.to_dict()["divergences"])
    return d


# -- the careful insider ----------------------------------------------------------------


def rewrite(lg: Ledger, edit: Callable[[RecordedEvent, dict[str, Any]], bool]) -> int:
    """Apply ``edit`` to payloads (it returns True when it changed one), then re-derive
    every run DAG (in the shape of the version its label records) and root, re-chain
    every later event, delete the recorded checkpoints
    and rebuild the projections: a history rewritten consistently. Returns rows changed."""
    events = list(lg.iter_events())
    data = [json.loads(e.payload) for e in events]
    for e, d in zip(events, data, strict=True):
        edit(e, d)
    roots: dict[str, str] = {}
    by_run: dict[str, dict[str, int]] = {}
    for i, e in enumerate(events):
        if e.stream.startswith("run:"):
            by_run.setdefault(e.stream[4:], {}).setdefault(e.type, i)
    for rid, at in by_run.items():
        if "qa.answer_labelled" not in at:
            continue
        mode = data[at["qa.run_started"]]["mode"]
        version = recorded_version(data[at["qa.answer_labelled"]]) or DAG_VERSION
        hashes = {}
        for stage in stages_for(mode, repaired="qa.answer_repaired" in at, version=version):
            payload = data[at[STAGE_EVENTS[stage]]]
            hashes[stage] = (label_stage_hash(payload) if stage == "final_label"
                             else sha256_hex(canonical_text(payload).encode("utf-8")))  # fmt: skip
        dag = build_dag(mode, hashes, version)
        roots[rid] = dag.root
        data[at["qa.answer_labelled"]]["run_dag"] = dag.to_dict()
        for t in ("qa.cache_written", "qa.run_completed"):
            if t in at:
                data[at[t]]["run_dag_root"] = dag.root
    for at in by_run.values():
        done = data[at["qa.run_completed"]] if "qa.run_completed" in at else None
        if done is not None and done.get("served_from_run_id") in roots:
            done["run_dag_root"] = roots[done["served_from_run_id"]]
    rows = []
    prev = GENESIS_HASH
    for e, d in zip(events, data, strict=True):
        payload = canonical_text(d)
        ph = sha256_hex(payload.encode("utf-8"))
        h = event_hash(seq=e.seq, event_id=e.event_id, stream=e.stream, stream_seq=e.stream_seq,
                       type=e.type, type_version=e.type_version, recorded_at=e.recorded_at,
                       payload_hash=ph, prev_hash=prev)  # fmt: skip
        if h != e.hash:
            rows.append({"s": e.seq, "p": payload, "ph": ph, "prev": prev, "h": h})
        prev = h
    drop_triggers(lg)
    with lg.engine.begin() as conn:
        conn.execute(
            text("UPDATE events SET payload = :p, payload_hash = :ph, prev_hash = :prev, "
                 "hash = :h WHERE seq = :s"),
            rows,
        )  # fmt: skip
        conn.execute(text("DELETE FROM checkpoints"))
    lg.rebuild_projections()
    return len(rows)


def external_checkpoint(lg: Ledger) -> dict[str, Any]:
    """A checkpoint as `aborist-ledger checkpoint --json` prints it, kept off the database."""
    return checkpoint(lg).to_dict()


# -- the cases ------------------------------------------------------------------------


@pytest.mark.parametrize("edit", [("STRICT", "STRICK"), ('"verdict":{', '"verdict":[')])
def test_edited_payload_byte(built: Built, edit: tuple[str, str]) -> None:
    ev = built.event(built.lattice, "qa.answer_verified")
    tamper(built.ledger, "UPDATE events SET payload = replace(payload, :a, :b) WHERE seq = :s",
           a=edit[0], b=edit[1], s=ev.seq)  # fmt: skip
    assert built.event(built.lattice, "qa.answer_verified").payload != ev.payload
    report = replay(built.ledger, deep=True)
    chain = only(report, "chain")
    assert (chain.seq, chain.run, chain.detail) == (ev.seq, built.lattice, "payload_hash")
    dag = only(report, "dag")
    if edit[0] == "STRICT":  # the verify stage no longer hashes to the recorded node
        assert (dag.run, dag.stage) == (built.lattice, "verify")
        assert dag.seq == built.event(built.lattice, "qa.answer_labelled").seq
    else:  # the payload is no longer JSON: the run cannot be read, and says where
        assert (dag.run, dag.seq, dag.detail) == (built.lattice, ev.seq, "qa.answer_verified")


def test_answer_edited_in_providence_cache_only(built: Built) -> None:
    tamper(built.ledger, "UPDATE providence_cache SET answer = 'Forty-two.' WHERE run_id = :r",
           r=built.lattice)  # fmt: skip
    report = replay(built.ledger)
    assert set(report.divergences) == {"projection"}
    d = only(report, "projection")
    assert (d.run, d.stage) == (built.lattice, "providence_cache")
    assert d.detail.endswith(".answer") and d.found == "Forty-two."
    assert d.seq == built.event(built.lattice, "qa.cache_written").seq


def test_deleted_event(built: Built) -> None:
    ev = built.event(built.quote, "qa.prompt_built")
    tamper(built.ledger, "DELETE FROM events WHERE seq = :s", s=ev.seq)
    report = replay(built.ledger)
    chain = only(report, "chain")
    assert chain.seq == ev.seq and chain.detail.startswith("seq (gap")
    # The run's history stops where its stages no longer follow the grammar: the model's
    # answer cannot follow the context without the prompt between them.
    history = only(report, "history")
    answered = built.event(built.quote, "qa.model_answered")
    assert (history.seq, history.run, history.found) == (answered.seq, built.quote,
                                                         "qa.model_answered")  # fmt: skip
    assert "cannot follow qa.context_assembled" in history.detail


def test_swapped_events(built: Built) -> None:
    a = built.event(built.lattice, "qa.model_answered").seq
    b = built.event(built.lattice, "qa.claims_parsed").seq
    tamper(built.ledger,
           "UPDATE events SET seq = -1 WHERE seq = :a",
           "UPDATE events SET seq = :a WHERE seq = :b",
           "UPDATE events SET seq = :b WHERE seq = -1", a=a, b=b)  # fmt: skip
    report = replay(built.ledger)
    chain = only(report, "chain")
    assert (chain.seq, chain.run, chain.detail) == (a, built.lattice, "prev_hash")


def test_inserted_event(built: Built) -> None:
    k = built.event(built.quote, "qa.run_started").seq - 1
    [before] = built.ledger.read(gt=k - 1, lte=k)
    payload = canonical_text({"forged": True})
    ph = sha256_hex(payload.encode("utf-8"))
    fields = {"seq": k + 1, "event_id": "00000000-0000-4000-8000-000000000001",
              "stream": "run:forged", "stream_seq": 1, "type": "qa.run_started",
              "type_version": 1, "recorded_at": before.recorded_at}  # fmt: skip
    h = event_hash(**fields, payload_hash=ph, prev_hash=before.hash)  # type: ignore[arg-type]
    tamper(built.ledger,
           "UPDATE events SET seq = -(seq + 1) WHERE seq > :k",
           "UPDATE events SET seq = -seq WHERE seq < 0",
           "INSERT INTO events (seq, event_id, stream, stream_seq, type, type_version, "
           "recorded_at, payload, payload_hash, prev_hash, hash) VALUES (:seq, :event_id, "
           ":stream, :stream_seq, :type, :type_version, :recorded_at, :payload, :ph, :prev, :h)",
           k=k, payload=payload, ph=ph, prev=before.hash, h=h, **fields)  # fmt: skip
    report = replay(built.ledger)
    chain = only(report, "chain")
    # The forged event links to its predecessor; the chain breaks at the next event.
    assert (chain.seq, chain.run, chain.detail) == (k + 2, built.quote, "prev_hash")
    # The forged run_started is no run's start (no mode, no run id): it is not part of
    # any history, so the scratch fold passes over it as the live one never saw it.
    history = only(report, "history")
    assert (history.seq, history.run) == (k + 1, "forged")
    assert history.detail.startswith("qa.run_started names its own stream")


@pytest.mark.parametrize("deep", [False, True])
def test_blob_bytes_changed(built: Built, deep: bool) -> None:
    answered = built.event(built.lattice, "qa.model_answered")
    blob = answered.data["raw_answer_blob"]
    tamper(built.ledger, "UPDATE blobs SET bytes = :b WHERE hash = :h",
           b=b"The Silverrun River is 9 kilometres long. [E1]", h=blob)  # fmt: skip
    report = replay(built.ledger, deep=deep)
    assert set(report.divergences) == {"blob"}
    d = only(report, "blob")
    assert (d.seq, d.run, d.stage, d.expected) == (answered.seq, built.lattice, "raw_answer", blob)
    if deep:
        assert any(n.run == built.lattice for n in report.not_reexecuted)


def test_rewritten_history_caught_by_checkpoint(built: Built) -> None:
    cp = external_checkpoint(built.ledger)
    failed = built.event(built.failed, "qa.run_failed")

    def edit(ev: RecordedEvent, payload: dict[str, Any]) -> bool:
        if ev.seq != failed.seq:
            return False
        payload["message"] = "nothing went wrong"
        return True

    assert rewrite(built.ledger, edit) >= 1
    assert replay(built.ledger, deep=True).ok  # consistent with itself: only the checkpoint
    report = replay(built.ledger, checkpoint=cp)
    assert set(report.divergences) == {"checkpoint"}
    d = only(report, "checkpoint")
    assert d.seq == cp["tree_size"] and d.expected == cp["root"] and d.found != cp["root"]


def test_verdict_edited_consistently_caught_by_deep_and_checkpoint(built: Built) -> None:
    cp = external_checkpoint(built.ledger)
    verified = built.event(built.lattice, "qa.answer_verified")

    def edit(ev: RecordedEvent, payload: dict[str, Any]) -> bool:
        if ev.seq != verified.seq:
            return False
        payload["verdict"]["n_verbatim"] = 0
        return True

    rewrite(built.ledger, edit)
    assert replay(built.ledger).ok  # chain, DAGs and projections agree with the forgery
    deep = replay(built.ledger, deep=True)
    assert set(deep.divergences) == {"deep"}
    d = only(deep, "deep")
    assert (d.seq, d.run, d.stage) == (verified.seq, built.lattice, "verify")
    assert d.detail == "$.verdict.n_verbatim" and d.found == "0"
    assert set(replay(built.ledger, checkpoint=cp).divergences) == {"checkpoint"}


def test_verifier_version_edited_is_version_skew(built: Built) -> None:
    cp = external_checkpoint(built.ledger)
    verified = built.event(built.quote, "qa.answer_verified")

    def edit(ev: RecordedEvent, payload: dict[str, Any]) -> bool:
        if ev.seq != verified.seq:
            return False
        payload["verdict"]["verifier_version"] = "aborist-verifier/0.9.0"
        return True

    rewrite(built.ledger, edit)
    report = replay(built.ledger, deep=True)
    assert report.ok and report.skew_count == 1
    [skew] = report.version_skew
    assert (skew.seq, skew.run, skew.field) == (verified.seq, built.quote, "verifier_version")
    assert skew.recorded == "aborist-verifier/0.9.0"
    assert [(n.run, n.stage) for n in report.not_reexecuted] == [(built.quote, "all")]
    assert set(replay(built.ledger, checkpoint=cp).divergences) == {"checkpoint"}


def test_cli_exits_1_naming_the_divergence(built: Built) -> None:
    if "replay" not in cli.commands:  # pragma: no cover - registered by test_replay
        from cli.audit.replay_cmd import replay as replay_command

        cli.add_command(replay_command)
    ev = built.event(built.quote, "qa.model_answered")
    tamper(built.ledger, "DELETE FROM events WHERE seq = :s", s=ev.seq)
    result = CliRunner().invoke(cli, ["replay", "--db", built.url])
    assert result.exit_code == 1
    assert "FAIL chain" in result.stdout and f"seq {ev.seq}" in result.stdout
    data = json.loads(CliRunner().invoke(cli, ["replay", "--db", built.url, "--json"]).stdout)
    assert data["ok"] is False
    assert data["divergences"][0]["kind"] == "chain" and data["divergences"][0]["seq"] == ev.seq


@pytest.mark.parametrize("method", ["mechanical", "reprompt"])
def test_repair_post_verdict_edited_consistently(built: Built, method: str) -> None:
    runs = dict(zip(("mechanical", "reprompt"), add_repair_runs(built), strict=True))
    cp = external_checkpoint(built.ledger)
    repaired = built.event(runs[method], "qa.answer_repaired")
    assert repaired.data["method"] == method

    def edit(ev: RecordedEvent, payload: dict[str, Any]) -> bool:
        if ev.seq != repaired.seq:
            return False
        payload["outcome"]["post_verdict"]["n_verbatim"] += 1
        return True

    rewrite(built.ledger, edit)
    assert replay(built.ledger).ok  # the DAG was re-derived along with the forgery
    report = replay(built.ledger, deep=True)
    assert set(report.divergences) == {"deep"}
    d = only(report, "deep")
    assert (d.seq, d.run, d.stage) == (repaired.seq, runs[method], "repair")
    assert d.detail == "$.outcome.post_verdict.n_verbatim"
    assert set(replay(built.ledger, checkpoint=cp).divergences) == {"checkpoint"}


@pytest.mark.parametrize(
    ("event_type", "field", "detail"),
    [("qa.reprompt_attempted", "accepted", "$.accepted"),
     ("qa.answer_repaired", "original_text", "$.outcome.original_text")],
)  # fmt: skip
def test_reprompt_decision_edited_consistently(
    built: Built, event_type: str, field: str, detail: str
) -> None:
    """What the re-prompt decided from the reply (accepted or not, what it replaced) is
    derived again from the recorded reply, not taken as recorded."""
    _, reprompt = add_repair_runs(built)
    target = built.event(reprompt, event_type)

    def edit(ev: RecordedEvent, payload: dict[str, Any]) -> bool:
        if ev.seq != target.seq:
            return False
        if field == "accepted":
            payload["accepted"] = not payload["accepted"]
        else:
            payload["outcome"]["original_text"] += " (forged)"
        return True

    rewrite(built.ledger, edit)
    assert replay(built.ledger).ok  # consistent with itself: only --deep can tell
    report = replay(built.ledger, deep=True)
    assert set(report.divergences) == {"deep"}
    d = only(report, "deep")
    assert (d.seq, d.run, d.stage, d.detail) == (target.seq, reprompt, "repair", detail)


@pytest.mark.parametrize(
    "scope", ["all", "run", "since", "deep", "deep-forked"]
)  # fmt: skip
def test_blob_stored_as_text(built: Built, scope: str) -> None:
    """``UPDATE blobs SET bytes = CAST(bytes AS TEXT)`` (SQLite keeps the TEXT; before,
    ``iter_blobs`` / the batch reads raised TypeError): a blob finding at the referencing
    event, in every way replay reads blobs (the full scan, the referenced ones, the
    batches of --deep here and in the forked worker). PostgreSQL's bytea refuses the
    value (``tests/ledger/test_tamper_db.py``), so that half has nothing to detect."""
    if built.ledger.engine.dialect.name == "postgresql":
        pytest.skip("PostgreSQL's bytea column refuses a text value (test_tamper_db.py)")
    answered = built.event(built.lattice, "qa.model_answered")
    blob = answered.data["raw_answer_blob"]
    tamper(built.ledger, "UPDATE blobs SET bytes = CAST(bytes AS TEXT) WHERE hash = :h", h=blob)
    kwargs: dict[str, Any] = {
        "all": {}, "run": {"run_id": built.lattice}, "since": {"since": answered.seq - 1},
        "deep": {"deep": True, "parallel": False}, "deep-forked": {"deep": True, "parallel": True},
    }[scope]  # fmt: skip
    report = replay(built.ledger, **kwargs)
    assert set(report.divergences) == {"blob"}, report.to_dict()["divergences"]
    d = only(report, "blob")
    assert (d.seq, d.run, d.stage, d.expected, d.found) == (
        answered.seq, built.lattice, "raw_answer", blob, "TEXT"
    )  # fmt: skip
    assert d.detail == f"blob {blob} is stored as TEXT, not bytes"
    if scope.startswith("deep"):
        assert any(n.run == built.lattice for n in report.not_reexecuted)
        if "replay" not in cli.commands:  # pragma: no cover - registered by test_replay
            from cli.audit.replay_cmd import replay as replay_command

            cli.add_command(replay_command)
        result = CliRunner().invoke(cli, ["replay", "--db", built.url, "--deep"])
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert "FAIL blob" in result.stdout and d.detail in result.stdout
