"""Break the audit, then mend it: two events that hold one ``event_id``. The ``UNIQUE``
constraint refuses that, but an insider can drop it (PostgreSQL) or rebuild the table
without it (SQLite, dropping the insert guard with it) and append a chained, well-formed
event that repeats an earlier event's id. ``verify`` said every field was well-formed and
exited 0, ``replay`` said everything held, and ``rebuild`` went on; a reader that takes
the id for the event (a consumer deduplicating by id) would drop a chained event. Now
``verify`` fails naming the seqs (``rebuild`` refuses in one line), ``replay`` has an
``envelope`` divergence at the later seq. Both backends."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from aborist.audit import replay
from cli.audit.ledger_cli import cli
from ledger.store import Ledger
from ledger.verify import verify_ledger
from tests.audit.builders import Built
from tests.ledger.raw import append_raw


def drop_event_id_uniqueness(lg: Ledger) -> None:
    """What the insider does first: no constraint or trigger refuses a repeated id."""
    with lg.engine.begin() as conn:
        if lg.engine.dialect.name == "postgresql":
            names = conn.execute(text(
                "SELECT conname FROM pg_constraint WHERE conrelid = 'events'::regclass "
                "AND contype = 'u'")).scalars().all()  # fmt: skip
            for name in names:
                if "event_id" in name:
                    conn.execute(text(f'ALTER TABLE events DROP CONSTRAINT "{name}"'))
            return
        sql = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = 'events'")).scalar()
        keep = conn.execute(text(
            "SELECT sql FROM sqlite_master WHERE tbl_name = 'events' AND sql IS NOT NULL "
            "AND type IN ('index', 'trigger') AND name <> 'events_no_replace'"
        )).scalars().all()  # fmt: skip
        assert "UNIQUE (event_id)" in sql, sql
        conn.execute(text(sql.replace("CREATE TABLE events", "CREATE TABLE events_new", 1)
                          .replace("UNIQUE (event_id)", "CHECK (1)")))  # fmt: skip
        conn.execute(text("INSERT INTO events_new SELECT * FROM events"))
        conn.execute(text("DROP TABLE events"))
        conn.execute(text("ALTER TABLE events_new RENAME TO events"))
        for statement in keep:
            conn.execute(text(statement))


def test_a_repeated_event_id_is_a_finding(built: Built) -> None:
    lg = built.ledger
    first = lg.read(gt=0, lte=1)[0]
    assert verify_ledger(lg).event_id_failure is None  # the control: every id once
    drop_event_id_uniqueness(lg)
    row = append_raw(lg, event_id=first.event_id)
    report = verify_ledger(lg)
    assert report.chain.ok and report.envelope.ok  # the row is chained and well-formed
    assert not report.ok
    assert report.event_id_failure == {"event_id": first.event_id, "seqs": [1, row["seq"]]}
    result = CliRunner().invoke(cli, ["verify", "--db", built.url])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert (
        f"FAIL event ids: 2 events (seq 1, {row['seq']}) hold the event id {first.event_id}"
        in result.output
    ), result.output
    data = json.loads(CliRunner().invoke(cli, ["verify", "--db", built.url, "--json"]).output)
    assert data["ok"] is False and data["event_id_failure"]["seqs"] == [1, row["seq"]]

    rep = replay(lg)
    d = rep.first("envelope")
    assert d is not None and d.seq == row["seq"] and d.detail == "event_id", rep.to_dict()
    assert d.found == f"2 events hold it (seq 1, {row['seq']})"
    assert not rep.ok and rep.checks["envelope"] == "diverged"
    # --since past the first holder still sees the repeat (the later one is in scope)
    assert replay(lg, since=row["seq"] - 1).first("envelope") is not None

    result = CliRunner().invoke(cli, ["rebuild", "--db", built.url])
    assert result.exit_code == 1 and not isinstance(result.exception, AssertionError)
    assert result.stderr.count("\n") == 1 and "event ids: 2 events" in result.stderr, result.stderr


def test_every_id_once_is_said(built: Built) -> None:
    result = CliRunner().invoke(cli, ["verify", "--db", built.url])
    head = built.ledger.head()[0]
    assert result.exit_code == 0
    assert f"ok   event ids: {head} events, no id held twice" in result.output


def test_replay_since_sees_a_repeat_in_scope_behind_one_out_of_scope(built: Built) -> None:
    """Two repeated ids: seq 1's (repeated at a) and seq 2's (repeated at b). With
    ``--since a`` only b's repeat is in scope; the query returned only the id first held
    earliest (seq 1's, out of scope), so replay said the envelope held."""
    lg = built.ledger
    e1, e2 = lg.read(gt=0, lte=1)[0], lg.read(gt=1, lte=2)[0]
    drop_event_id_uniqueness(lg)
    a = append_raw(lg, event_id=e1.event_id)
    b = append_raw(lg, event_id=e2.event_id)
    rep = replay(lg, since=a["seq"])
    d = rep.first("envelope")
    assert d is not None and d.seq == b["seq"] and d.detail == "event_id", rep.to_dict()
    assert not rep.ok
    assert replay(lg, since=b["seq"]).first("envelope") is None  # both out of scope


def test_a_copied_row_at_seq_1_is_reported_not_a_database_error(built: Built) -> None:
    """PostgreSQL, every constraint and trigger dropped, the row at seq 1 copied: the
    repeated-id query's ``= (SELECT … WHERE seq = 1)`` met two rows and ``verify`` stopped
    with "more than one row returned by a subquery" instead of its report."""
    lg = built.ledger
    if lg.engine.dialect.name != "postgresql":
        pytest.skip("SQLite's scalar subquery takes the first row: no error to provoke")
    with lg.engine.begin() as conn:
        names = conn.execute(text(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'events'::regclass"
        )).scalars().all()  # fmt: skip
        for name in names:
            conn.execute(text(f'ALTER TABLE events DROP CONSTRAINT "{name}" CASCADE'))
        conn.execute(text("ALTER TABLE events DISABLE TRIGGER ALL"))
        conn.execute(text("INSERT INTO events SELECT * FROM events WHERE seq = 1"))
    result = CliRunner().invoke(cli, ["verify", "--db", built.url])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "more than one row" not in result.output + result.stderr
    assert "FAIL" in result.output, result.output
