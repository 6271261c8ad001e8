"""Break the audit, then mend it: rows of ``events`` the chain's pass never reads. Both
backends, on a real ledger (built by running queries).

The chain check reads seqs ``1..head`` in pages (``seq > a AND seq <= b``); whatever
reads a stream (a run's events: the report, export, the web pages) reads by ``stream``.
So a row the pass does not read is read by everything else, unchecked:

- a row at seq 0 or below: a plain INSERT writes one (no trigger or constraint refuses
  it, no trigger is dropped): verify and replay said everything held, while the run's
  stream held a forged event, or a whole forged run sat at seqs -100..;
- with the primary key dropped: a row whose seq is NULL (verify and replay held; replay
  died reading the head on PostgreSQL, which sorts NULL first), a second row at a seq a
  page ends on (the next page starts after it: held), and on SQLite a seq that is text
  (a traceback in verify, replay and export).

Each is now a ``chain`` finding naming the row (replay: without a seq, so the events the
chain verified stay covered), and export and the report refuse or name such an event.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from aborist.audit import replay
from aborist.audit.bundle import export_run
from aborist.audit.report import report_page
from aborist.errors import InputError
from cli.audit.audit_cmd import report as report_command
from cli.audit.ledger_cli import cli
from ledger.envelope import NewEvent
from ledger.store import Ledger
from ledger.verify import verify_ledger
from tests.audit.builders import Built
from tests.audit.test_tamper_replay import external_checkpoint
from tests.ledger.tamper import drop_triggers, tamper

if report_command.name not in cli.commands:
    cli.add_command(report_command)

_FORGED_ID = "00000000-0000-4000-8000-00000000f00d"
_COPY = text(
    "INSERT INTO events (seq, event_id, stream, stream_seq, type, type_version, recorded_at, "
    "payload, payload_hash, prev_hash, hash) SELECT :seq, :eid, stream, :ss, type, "
    "type_version, recorded_at, payload, payload_hash, prev_hash, hash FROM events "
    "WHERE seq = :src"
)


def _forge_cache_write(built: Built, seq: object) -> None:
    """A copy of the lattice run's cache write at ``seq``, as the run's next event."""
    lg = built.ledger
    n = len(built.events(built.lattice))
    src = built.event(built.lattice, "qa.cache_written").seq
    with lg.engine.begin() as conn:
        conn.execute(_COPY, {"seq": seq, "eid": _FORGED_ID, "ss": n + 1, "src": src})


def _drop_keys(lg: Ledger) -> None:
    """The insider drops the events table's keys (and NOT NULL on seq)."""
    if lg.engine.dialect.name == "postgresql":
        tamper(
            lg,
            "ALTER TABLE events DROP CONSTRAINT events_pkey CASCADE",
            "ALTER TABLE events ALTER COLUMN seq DROP NOT NULL",
            "ALTER TABLE events DROP CONSTRAINT uq_events_stream_position",
            "ALTER TABLE events DROP CONSTRAINT events_event_id_key",
        )
        return
    drop_triggers(lg)
    with lg.engine.begin() as conn:  # SQLite: rebuilt without them
        conn.execute(text("CREATE TABLE events_copy AS SELECT * FROM events"))
        conn.execute(text("DROP TABLE events"))
        conn.execute(text("ALTER TABLE events_copy RENAME TO events"))


def _assert_caught(built: Built, seq: int | None, why: str) -> None:
    lg = built.ledger
    checked = verify_ledger(lg)
    f = checked.chain.failure
    assert not checked.ok and f is not None, checked.to_dict()
    assert (f.seq, f.check) == (seq, "row"), f
    assert why in f.found and "qa.cache_written" in f.found, f
    for parallel in (False, True):
        report = replay(lg, parallel=parallel)
        d = report.divergences.get("chain")
        assert d is not None and d.detail == "a row the chain's pass does not read", (
            report.to_dict()
        )
        assert d.seq is None and d.run == built.lattice and why in d.found, d
    result = CliRunner().invoke(cli, ["verify", "--db", built.url])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "FAIL chain at " in result.output and why in result.output, result.output


@pytest.mark.parametrize("seq", [0, -1])
def test_a_row_below_seq_1_is_a_chain_finding(built: Built, seq: int, tmp_path: Path) -> None:
    lg = built.ledger
    cp = external_checkpoint(lg)
    _forge_cache_write(built, seq)  # a plain INSERT: no trigger dropped
    assert len(built.events(built.lattice)) == 13  # every stream reader sees it
    _assert_caught(built, seq, "a seq below 1, so no pass over the chain reads it")
    # the events the chain verified are still the checkpoint's: only the stray row is named
    report = replay(lg, checkpoint=cp)
    assert report.vouched_for()["covered"] == [1, cp["tree_size"]], report.vouched_for()
    with pytest.raises(InputError, match=f"has seq {seq}, which is no position in the chain"):
        export_run(lg, built.lattice)
    result = CliRunner().invoke(
        cli, ["export", "--run", built.lattice, "-o", str(tmp_path / "b.json"), "--db", built.url]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "which is no position in the chain" in result.output


def test_a_whole_run_below_seq_1_is_caught_and_never_shown_included(built: Built) -> None:
    """The quote run copied, by plain INSERTs, to seqs -100.. under another run id."""
    lg = built.ledger
    forged = "f" * 32
    rows = [
        {"seq": -100 + i, "eid": f"00000000-0000-4000-8000-{i:012x}", "st": f"run:{forged}",
         "ss": e.stream_seq, "t": e.type, "tv": e.type_version, "ra": e.recorded_at,
         "p": e.payload.replace(built.quote, forged), "ph": e.payload_hash,
         "pv": e.prev_hash, "h": e.hash}
        for i, e in enumerate(built.events(built.quote))
    ]  # fmt: skip
    with lg.engine.begin() as conn:
        conn.execute(
            text("INSERT INTO events (seq, event_id, stream, stream_seq, type, type_version, "
                 "recorded_at, payload, payload_hash, prev_hash, hash) VALUES (:seq, :eid, "
                 ":st, :ss, :t, :tv, :ra, :p, :ph, :pv, :h)"),
            rows,
        )  # fmt: skip
    checked = verify_ledger(lg)
    assert not checked.ok and checked.chain.failure is not None
    assert checked.chain.failure.seq == -100, checked.chain.failure
    report = replay(lg)
    assert not report.ok and report.divergences["chain"].run == forged, report.to_dict()
    html, unreadable = report_page(lg, forged)
    assert unreadable == []
    assert "has seq -100, which is no position in the chain" in html
    assert "inclusion verified" not in html
    with pytest.raises(InputError, match="has seq -100"):
        export_run(lg, forged)


def test_a_row_whose_seq_is_null_is_a_chain_finding(built: Built, tmp_path: Path) -> None:
    _drop_keys(built.ledger)
    _forge_cache_write(built, None)
    _assert_caught(built, None, "its seq is NULL, so no pass over the chain reads it")
    result = CliRunner().invoke(cli, ["verify", "--db", built.url])
    assert "FAIL chain at a row with no integer seq: row mismatch" in result.output
    result = CliRunner().invoke(
        cli, ["export", "--run", built.lattice, "-o", str(tmp_path / "b.json"), "--db", built.url]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "has seq None, which is no position in the chain" in result.output


def test_a_second_row_where_a_page_ends_is_a_chain_finding(built: Built) -> None:
    """Pages are 5000 rows: a second row at seq 5000 is past the first page's end and
    before the second's start."""
    lg = built.ledger
    head = lg.head()[0]
    for lo in range(head, 5100, 500):
        lg.append(f"filler:{lo}", [NewEvent("test.appended", {"i": i})
                                   for i in range(lo, min(lo + 500, 5100))])  # fmt: skip
    _drop_keys(lg)
    _forge_cache_write(built, 5000)
    checked = verify_ledger(lg)
    f = checked.chain.failure
    assert not checked.ok and f is not None and f.seq == 5000, checked.to_dict()
    report = replay(lg)
    assert not report.ok, report.to_dict()
    d = report.divergences["chain"]
    assert d.seq == 5000 or "2 rows hold seq 5000" in str(d.found), d


def test_a_seq_that_is_text_is_one_line_not_a_traceback(built: Built) -> None:
    lg = built.ledger
    if lg.engine.dialect.name == "postgresql":  # a bigint column: the insider cannot
        _drop_keys(lg)
        with pytest.raises(Exception, match="invalid input syntax for type bigint"):
            _forge_cache_write(built, "9x")
        return
    _drop_keys(lg)
    _forge_cache_write(built, "9x")
    checked = verify_ledger(lg)
    f = checked.chain.failure
    assert f is not None and f.check == "seq (not an integer)" and f.found == "'9x'", f
    for command in (["verify"], ["replay"]):
        result = CliRunner().invoke(cli, [*command, "--db", built.url])
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception
        )
        assert "Traceback" not in result.output and "'9x'" in result.output, result.output
    assert (
        json.loads(CliRunner().invoke(cli, ["verify", "--db", built.url, "--json"]).output)["ok"]
        is False
    )
