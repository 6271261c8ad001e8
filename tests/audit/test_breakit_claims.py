"""Break the audit's claims, then mend them: attacks on a real ledger (built by running
queries; SQLite and PostgreSQL) after which replay said more than it had checked.

- an event of a type this code knows recorded under another ``type_version`` (a future
  schema), every later hash recomputed: replay read it as version 1, re-executed it and
  said "everything held"; it is now an ``envelope`` finding at its seq, and the run's
  history stops before it (nothing reads it as a version it is not);
- a run recorded by another verifier version (version skew): ``deep`` counted it among the
  runs re-executed and the last line said "everything held"; the count is now of the runs
  re-executed and the last line names the skew;
- ``--since SEQ`` with a checkpoint: the last line said events ``1–N`` were covered by the
  checkpoint, though events ``1–SEQ`` were never re-hashed (an edited payload there went
  unseen); the events covered are now those re-hashed, and the rest are named.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from aborist.audit import replay
from aborist.audit.bundle import export_run, verify_bundle
from aborist.audit.checks.dags import check_run
from aborist.audit.findings import CorpusNotRecorded, ReplayReport
from aborist.audit.report import render_report
from aborist.errors import InputError
from cli.audit.audit_cmd import verify_bundle as verify_bundle_command
from cli.audit.ledger_cli import cli
from ledger.envelope import GENESIS_HASH, event_hash
from ledger.store import Ledger
from ledger.tlog.proofs import checkpoint
from tests.audit.builders import Built
from tests.audit.test_tamper_replay import external_checkpoint, only, rewrite
from tests.html_dom import Dom
from tests.ledger.tamper import drop_triggers, tamper

if verify_bundle_command.name not in cli.commands:
    cli.add_command(verify_bundle_command)


def rechain_header(lg: Ledger, seq: int, **fields: Any) -> None:
    """Set header ``fields`` of event ``seq`` and recompute its hash and every later one
    (a consistent rewrite of the chain); recorded checkpoints and tiles are deleted."""
    events = list(lg.iter_events())
    prev, rows = GENESIS_HASH, []
    for e in events:
        header = {
            "seq": e.seq, "event_id": e.event_id, "stream": e.stream,
            "stream_seq": e.stream_seq, "type": e.type, "type_version": e.type_version,
            "recorded_at": e.recorded_at, "payload_hash": e.payload_hash,
        }  # fmt: skip
        if e.seq == seq:
            header.update(fields)
        h = event_hash(**header, prev_hash=prev)
        if e.seq >= seq:
            rows.append({**header, "prev": prev, "h": h})
        prev = h
    drop_triggers(lg)
    with lg.engine.begin() as conn:
        conn.execute(
            text("UPDATE events SET type_version = :type_version, prev_hash = :prev, "
                 "hash = :h WHERE seq = :seq"),
            rows,
        )  # fmt: skip
        conn.execute(text("DELETE FROM checkpoints"))
        conn.execute(text("DELETE FROM merkle_tiles"))


# -- a type_version this code does not read ------------------------------------------------


@pytest.mark.parametrize("stage", ["qa.answer_verified", "qa.cache_written"])
def test_a_future_type_version_is_not_read_as_version_1(built: Built, stage: str) -> None:
    lg = built.ledger
    ev = built.event(built.lattice, stage)
    rechain_header(lg, ev.seq, type_version=2)
    lg.rebuild_projections()
    for parallel in (False, True):
        report = replay(lg, deep=True, parallel=parallel)
        assert not report.ok
        env = only(report, "envelope")
        assert (env.seq, env.detail, env.found) == (ev.seq, "type_version", "2"), env
        assert env.expected == f"1 (the version of {stage} this code reads)", env
        hist = only(report, "history")
        assert (hist.seq, hist.run, hist.stage) == (ev.seq, built.lattice, stage), hist
        assert hist.detail.startswith("type_version 2 of "), hist
    result = CliRunner().invoke(cli, ["replay", "--deep", "--db", built.url])
    assert result.exit_code == 1 and "FAIL envelope" in result.output, result.output
    report = verify_bundle(export_run(lg, built.lattice))
    assert not report.ok and report.first is not None
    assert report.first.kind == "history" and report.first.seq == ev.seq, report.to_dict()


def test_an_ingest_of_a_future_type_version_records_no_corpus(built: Built) -> None:
    lg = built.ledger
    [ingest, *_] = lg.read(types=["corpus.shard_ingested"])
    rechain_header(lg, ingest.seq, type_version=7)
    report = replay(lg)
    env = only(report, "envelope")
    assert (env.seq, env.detail, env.found) == (ingest.seq, "type_version", "7"), env
    corpus = only(report, "corpus")  # its runs read a shard no (readable) ingest recorded
    assert corpus.found == "none", corpus


# -- version skew is not "everything held" -------------------------------------------------


def test_version_skew_is_not_counted_as_re_executed(built: Built, tmp_path: Path) -> None:
    lg = built.ledger
    honest = replay(lg, deep=True)
    assert honest.ok and honest.skew_count == 0

    def edit(ev: object, payload: dict[str, Any]) -> bool:
        if getattr(ev, "stream", "") == f"run:{built.quote}" and "verdict" in payload:
            payload["verdict"]["verifier_version"] = "aborist-verifier/0.1.0"
            return True
        return False

    assert rewrite(lg, edit) > 0
    report = replay(lg, deep=True)
    assert report.ok and report.skew_count == 1  # skew is no divergence (exit 0)
    assert report.deep_runs == honest.deep_runs - 1, (report.deep_runs, honest.deep_runs)
    result = CliRunner().invoke(cli, ["replay", "--deep", "--db", built.url])
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert not last.startswith("replay: everything held"), last
    assert "1 run not re-executed in full (version skew)" in last, last
    as_json = CliRunner().invoke(cli, ["replay", "--deep", "--json", "--db", built.url]).output
    assert json.loads(as_json)["held_line"] == last  # the line serve's replay page shows
    out = json.loads(CliRunner().invoke(cli, ["replay", "--deep", "--json",
                                              "--db", built.url]).output)  # fmt: skip
    assert out["summary"]["deep_runs"] == report.deep_runs and out["version_skew_count"] == 1
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps(export_run(lg, built.quote)), encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify-bundle", str(bundle)])
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert (
        "everything checked held (run completed), but the run was not re-executed "
        "in full (version skew)" in last
    ), last


def test_a_render_skew_is_not_everything_held(built: Built, tmp_path: Path) -> None:
    """The rendering is what a reader is shown; one recorded under another
    ``render_version`` is not re-executed (its text is taken as recorded), so a rendering
    rewritten with its version is skew: the last line names it."""
    lg = built.ledger

    def edit(ev: object, payload: dict[str, Any]) -> bool:
        if getattr(ev, "stream", "") == f"run:{built.quote}" and "render_version" in payload:
            payload["render_version"] = "render/0"
            payload["answer"] = "Nobody founded Brackwater."
            return True
        return False

    assert rewrite(lg, edit) > 0
    report = replay(lg, deep=True)
    assert report.ok and report.skew_count == 1 and report.skewed_runs == 1, report.to_dict()
    result = CliRunner().invoke(cli, ["replay", "--deep", "--db", built.url])
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert "but 1 run not re-executed in full (version skew)" in last, last
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps(export_run(lg, built.quote)), encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify-bundle", str(bundle)])
    assert result.exit_code == 0, result.output
    assert "not re-executed in full (version skew)" in result.output.splitlines()[-1]


def _edit_rank(lg: Ledger, seq: int) -> None:
    """Edit one byte of a retrieval record (its first candidate's rank), hashes untouched."""
    tamper(lg, "UPDATE events SET payload = replace(payload, :a, :b) WHERE seq = :s",
           a='"bm25_rank":1,', b='"bm25_rank":7,', s=seq)  # fmt: skip


# -- --since: the checkpoint covers only what was re-hashed --------------------------------


def test_since_does_not_claim_the_events_it_did_not_rehash(built: Built) -> None:
    lg = built.ledger
    cp = external_checkpoint(lg)
    first, second = lg.read(types=["corpus.shard_ingested"])[:2]
    # the first ingest's document title edited, its hashes left: no run, no projection
    # and no later check reads it, so only re-hashing it shows the edit
    tamper(lg, "UPDATE events SET payload = replace(payload, '\"title\":\"', '\"title\":\"X') "
           "WHERE seq = :s", s=first.seq)  # fmt: skip
    assert lg.read(gt=first.seq - 1, lte=first.seq)[0].payload != first.payload
    assert only(replay(lg, checkpoint=cp), "chain").seq == first.seq  # in full, it is named
    since = second.seq
    report = replay(lg, since=since, checkpoint=cp)
    assert report.ok, report.to_dict()["divergences"]  # nothing after `since` was touched
    vouched = report.vouched_for()
    assert vouched["covered"] == [since + 1, cp["tree_size"]], vouched
    assert f"events 1–{since} were not re-hashed" in vouched["text"], vouched


def test_a_broken_chain_covers_nothing_from_the_break(built: Built) -> None:
    lg = built.ledger
    cp = external_checkpoint(lg)
    ev = built.event(built.lattice, "qa.retrieval_completed")
    _edit_rank(lg, ev.seq)
    report = replay(lg, checkpoint=cp)
    assert only(report, "chain").seq == ev.seq
    vouched = report.vouched_for()
    assert vouched["covered"] == [1, ev.seq - 1], vouched
    assert f"from event {ev.seq} on" in vouched["text"], vouched


# -- the HTML report: "included" only for an event whose hashes hold ------------------------


def test_report_does_not_mark_an_edited_event_included(built: Built) -> None:
    """An event whose payload was edited (its stored hashes left, so the stored hash is
    still a leaf of the checkpoint) was shown ✓ with "inclusion verified for every event":
    the report never re-hashed the payload. The cache check is no DAG stage, so the DAG
    line could not show it either."""
    lg = built.ledger
    checkpoint(lg)
    ev = built.event(built.quote, "qa.cache_checked")
    tamper(lg, "UPDATE events SET payload = replace(payload, :a, :b) WHERE seq = :s",
           a='"hit":false', b='"hit":false ', s=ev.seq)  # fmt: skip
    assert lg.read(gt=ev.seq - 1, lte=ev.seq)[0].payload != ev.payload
    dom = Dom(render_report(lg, built.quote))
    state = dom.by_id("checkpoint").all_text()
    assert "inclusion verified for every event" not in state, state
    assert f"event {ev.seq}" in state and "does not hash" in state, state
    row = next(r for r in dom.find("tr") if r.all_text().startswith(f"{ev.seq}"))
    assert "✓" not in row.all_text(), row.all_text()
    other = next(r for r in dom.find("tr") if r.all_text().startswith(f"{ev.seq + 1}"))
    assert "✓" in other.all_text()


def test_a_hit_report_checks_the_events_of_the_run_it_shows(built: Built) -> None:
    """A cache hit's page shows the served run's answer and verdict: an edit of that run's
    payload (hashes left) must not stand under "inclusion verified for every event"."""
    lg = built.ledger
    checkpoint(lg)
    honest = Dom(render_report(lg, built.hit))
    assert "inclusion verified for every event" in honest.by_id("checkpoint").all_text()
    assert built.lattice in honest.by_id("served-events").all_text()
    ev = built.event(built.lattice, "qa.answer_rendered")
    assert "412 kilometres" in ev.payload
    tamper(lg, "UPDATE events SET payload = replace(payload, :a, :b) WHERE seq = :s",
           a="412 kilometres", b="999 kilometres", s=ev.seq)  # fmt: skip
    state = Dom(render_report(lg, built.hit)).by_id("checkpoint").all_text()
    assert "inclusion verified for every event" not in state, state
    assert f"event {ev.seq}" in state and "does not hash" in state, state


def test_the_held_line_names_what_was_left_unproven() -> None:
    """Runs flagged "corpus not recorded" (allowed by --allow-unrecorded-shards) held, but
    no ingest vouches for their evidence: the last line says so rather than "everything
    held", as it does for skew (tests/pipeline/test_corpus_binding.py builds such runs)."""
    report = ReplayReport(head_seq=9)
    assert report.held_line().startswith("replay: everything held: self-consistent")
    report.unrecorded(CorpusNotRecorded(3, "r1", "lake", "0" * 64))
    assert report.held_line().startswith(
        "replay: everything checked held, but 1 run flagged corpus not recorded: "
    ), report.held_line()
    report.skewed_runs = 2
    assert (
        "but 2 runs not re-executed in full (version skew) and 1 run flagged corpus not recorded"
        in (report.held_line())
    )


# -- a checkpoint file is a closed object ---------------------------------------------------


@pytest.mark.parametrize("field", ["signature", "cosigned_by"])
def test_a_checkpoint_file_with_a_field_no_check_reads_is_refused(
    built: Built, tmp_path: Path, field: str
) -> None:
    """A JSON checkpoint is unsigned: a "signature" or "cosigned_by" in it was ignored, and
    replay said the events were covered by the checkpoint you gave, as if it had been
    checked. Like a bundle's checkpoint, it holds only what `checkpoint --json` prints."""
    cp = dict(external_checkpoint(built.ledger), **{field: "w1.example+c4459a38 ok"})
    with pytest.raises(InputError, match=f"unknown field.*{field}"):
        replay(built.ledger, checkpoint=cp)
    path = tmp_path / "cp.json"
    path.write_text(json.dumps(cp), encoding="utf-8")
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps(export_run(built.ledger, built.quote)), encoding="utf-8")
    for command in (["replay", "--db", built.url], ["verify-bundle", str(bundle)]):
        result = CliRunner().invoke(cli, [*command, "--checkpoint", str(path)])
        assert result.exit_code == 1, result.output
        assert "Traceback" not in result.output and f"unknown field(s) {field}" in result.output


# -- the anchor is the hashes replay verified, not a second read ----------------------------


def _answer_twice(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rewrite history consistently, then make the database answer a read of the event
    hashes alone (the checkpoint's tree) with the original hashes, while a read of whole
    rows (the chain) gets the rewritten ones. On PostgreSQL the insider does it with a view
    that looks at ``current_query()``; on SQLite (no such function) the second read is
    made to return them, as a database swapped back between the two reads would."""
    lg = built.ledger
    original = lg.event_hashes()

    def edit(ev: object, payload: dict[str, Any]) -> bool:
        if getattr(ev, "stream", "") == f"run:{built.failed}" and "message" in payload:
            payload["message"] = "the operator says this run never failed"
            return True
        return False

    assert rewrite(lg, edit) > 0
    assert replay(lg).ok  # a consistent rewrite: only a checkpoint kept elsewhere tells
    if lg.engine.dialect.name != "postgresql":
        monkeypatch.setattr(Ledger, "event_hashes", lambda self, size=None: original[:size])
        real = Ledger.snapshot

        def snapshot(self: Ledger, read: Any) -> Any:
            (seq, _), rows = real(self, read)
            return (seq, original[seq - 1].hex()), rows

        monkeypatch.setattr(Ledger, "snapshot", snapshot)
        return
    tamper(
        lg,
        "CREATE TABLE original_hashes (seq BIGINT PRIMARY KEY, hash TEXT NOT NULL)",
        *[f"INSERT INTO original_hashes VALUES ({i}, '{h.hex()}')"
          for i, h in enumerate(original, 1)],
        "ALTER TABLE events RENAME TO events_real",
        "CREATE VIEW events AS SELECT r.seq, r.event_id, r.stream, r.stream_seq, r.type, "
        "r.type_version, r.recorded_at, r.payload, r.payload_hash, r.prev_hash, CASE WHEN "
        "current_query() ILIKE '%payload%' THEN r.hash ELSE o.hash END AS hash "
        "FROM events_real r JOIN original_hashes o ON o.seq = r.seq",
    )  # fmt: skip
    assert lg.event_hashes() == original  # the hashes alone: the original history's


def test_a_checkpoint_is_held_to_the_hashes_the_chain_verified(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    cp = external_checkpoint(built.ledger)
    original_head = built.ledger.head()[1]
    _answer_twice(built, monkeypatch)
    for parallel in (False, True):
        report = replay(built.ledger, checkpoint=cp, parallel=parallel)
        assert not report.ok, report.vouched_for()
        d = only(report, "checkpoint")
        assert d.seq == cp["tree_size"] and d.expected == cp["root"], d
        assert "the events this replay verified" in d.detail, d
        assert report.vouched_for()["anchored"] is False
        # the head it prints is the one it verified, and the other answer is named
        assert report.head_hash != original_head, report.head_hash
        chain = only(report, "chain")
        assert (chain.seq, chain.found) == (report.head_seq, original_head), chain
        assert chain.detail == "head hash (read with the projections)", chain


def test_a_run_is_bound_to_the_ingests_the_chain_read(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ingest the runs of shard ``geo`` were bound to is rewritten (another source
    root, every later hash recomputed), so nothing the chain reads records their root; but
    the database answers the corpus check's own read of the ingests with the original
    payload. The binding is to the ingest rows the chain read, so it is still named."""
    lg = built.ledger
    [geo] = [e for e in lg.read(types=["corpus.shard_ingested"]) if e.data["shard"] == "geo"]

    def edit(ev: object, payload: dict[str, Any]) -> bool:
        if getattr(ev, "seq", None) == geo.seq:
            payload["source_root"] = "ab" * 32
            return True
        return False

    assert rewrite(lg, edit) > 0
    d = only(replay(lg), "corpus")  # read honestly, the runs' root is no ingest's
    assert d.found == "none", d
    if lg.engine.dialect.name != "postgresql":
        real = Ledger.read

        def read(self: Ledger, **kw: Any) -> Any:
            rows = real(self, **kw)
            if kw.get("types") == ["corpus.shard_ingested"]:
                rows = [geo if r.seq == geo.seq else r for r in rows]
            return rows

        monkeypatch.setattr(Ledger, "read", read)
    else:
        tamper(
            lg,
            "CREATE TABLE original_payload (seq BIGINT PRIMARY KEY, payload TEXT NOT NULL)",
            "ALTER TABLE events RENAME TO events_real",
            "CREATE VIEW events AS SELECT r.seq, r.event_id, r.stream, r.stream_seq, r.type, "
            "r.type_version, r.recorded_at, CASE WHEN current_query() ILIKE '%type IN%' AND "
            "o.payload IS NOT NULL THEN o.payload ELSE r.payload END AS payload, "
            "r.payload_hash, r.prev_hash, r.hash FROM events_real r "
            "LEFT JOIN original_payload o ON o.seq = r.seq",
        )  # fmt: skip
        with lg.engine.begin() as conn:
            conn.execute(text("INSERT INTO original_payload VALUES (:s, :p)"),
                         {"s": geo.seq, "p": geo.payload})  # fmt: skip
    assert lg.read(types=["corpus.shard_ingested"])[0].payload == geo.payload  # the lie
    for parallel in (False, True):
        d = only(replay(lg, parallel=parallel), "corpus")
        assert d.stage == "cache" and "the chain did not read" in d.found, d


def test_a_hit_is_held_to_a_run_the_pass_read(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache hit is rewritten to name a run that is in no row the chain reads (every
    later hash recomputed, its root that of the run the database will show); the database
    answers a read of that run's stream alone with a run made from the served one. A full
    replay has read every run: it does not read one again for the hit, so the hit is named."""
    lg = built.ledger
    ghost = "f" * 32
    fake = [
        dataclasses.replace(
            e, stream=f"run:{ghost}", payload=e.payload.replace(built.lattice, ghost)
        )
        for e in lg.read_stream(f"run:{built.lattice}")
    ]
    fake_dag = check_run(ghost, fake, None).dag
    assert fake_dag is not None

    def edit(ev: object, payload: dict[str, Any]) -> bool:
        if getattr(ev, "stream", "") != f"run:{built.hit}":
            return False
        for key in ("hit_run_id", "served_from_run_id"):
            if payload.get(key) == built.lattice:
                payload[key] = ghost
        if "run_dag_root" in payload:
            payload["run_dag_root"] = fake_dag.root
        return True

    assert rewrite(lg, edit) > 0
    honest = replay(lg)
    assert only(honest, "cache").found == "none" and only(honest, "dag").found == "none"
    if lg.engine.dialect.name != "postgresql":
        real = Ledger.read_stream

        def read_stream(self: Ledger, stream: str, **kw: Any) -> Any:
            return fake if stream == f"run:{ghost}" else real(self, stream, **kw)

        monkeypatch.setattr(Ledger, "read_stream", read_stream)
    else:
        rest = "recorded_at, payload_hash, prev_hash, hash"
        tamper(
            lg,
            "ALTER TABLE events RENAME TO events_real",
            "CREATE VIEW events AS SELECT seq, event_id, stream, stream_seq, type, "
            f"type_version, payload, {rest} FROM events_real UNION ALL SELECT seq, event_id, "
            f"'run:{ghost}' AS stream, stream_seq, type, type_version, replace(payload, "
            f"'{built.lattice}', '{ghost}') AS payload, {rest} FROM events_real "
            f"WHERE stream = 'run:{built.lattice}' AND current_query() ILIKE '%stream = %'",
        )  # fmt: skip
    assert [e.payload for e in lg.read_stream(f"run:{ghost}")] == [e.payload for e in fake]
    for parallel in (False, True):
        report = replay(lg, parallel=parallel)
        assert only(report, "cache").found == "none", report.to_dict()["divergences"]
        assert only(report, "dag").found == "none"


@pytest.mark.parametrize("created_at", ["garbage", 5, None, "2026-12-01"])
def test_a_checkpoint_file_whose_created_at_is_no_timestamp_is_refused(created_at: object) -> None:
    from aborist.audit.checks.checkpoints import parse_checkpoint
    from aborist.errors import InputError

    good = {"tree_size": 3, "root": "ab" * 32}
    assert parse_checkpoint({**good, "created_at": "2026-12-01T13:08:27.913649Z"}) == (3, "ab" * 32)
    assert parse_checkpoint(good) == (3, "ab" * 32)
    with pytest.raises(InputError, match="created_at must be a timestamp"):
        parse_checkpoint({**good, "created_at": created_at})
