"""Envelope validation (docs/ledger-format.md, "The event envelope"): a row whose hashes
hold but whose fields break the format is a finding naming its seq and field, in
``verify``, ``replay`` and ``verify-bundle``, on both backends; the library's own appends
always pass, and refuse what the checks would flag."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aborist.audit import replay
from cli.audit.ledger_cli import cli
from ledger.envelope import NewEvent
from ledger.envelope_check import EnvelopeCheck
from ledger.errors import PayloadError
from ledger.store import Ledger
from ledger.verify import verify_ledger
from tests.conftest import backend_of
from tests.ledger.raw import append_raw

_DEEP = '{"a":' * 5000 + "1" + "}" * 5000

#: (field named by the finding, the row's overrides).
HOSTILE: dict[str, tuple[str, dict[str, Any]]] = {
    "recorded_at_prose": ("recorded_at", {"recorded_at": "last tuesday"}),
    "recorded_at_month_13": ("recorded_at", {"recorded_at": "2026-13-01T00:00:00.000000Z"}),
    "recorded_at_no_fraction": ("recorded_at", {"recorded_at": "2026-11-29T19:35:33Z"}),
    "recorded_at_offset": ("recorded_at", {"recorded_at": "2026-11-29T19:35:33.123456+00:00"}),
    "recorded_at_backwards": ("recorded_at", {"recorded_at": "2000-01-01T00:00:00.000000Z"}),
    "type_grammar": ("type", {"type": "Not.A.Valid TYPE!"}),
    "stream_escape": ("stream", {"stream": "run:\x1b[31mred\nline"}),
    "stream_blank": ("stream", {"stream": " run:x"}),
    "event_id_prose": ("event_id", {"event_id": "not-a-uuid"}),
    "event_id_upper": ("event_id", {"event_id": "6F1C1A52-8D5E-4A4B-9A7E-3F0C2B1D9E10"}),
    "event_id_v1": ("event_id", {"event_id": "6f1c1a52-8d5e-1a4b-9a7e-3f0c2b1d9e10"}),
    "type_version_zero": ("type_version", {"type_version": 0}),
    "payload_duplicate_keys": ("payload", {"payload": '{"b":1,"a":2,"a":3}'}),
    "payload_not_jcs": ("payload", {"payload": '{"b":1, "a":2}'}),
    "payload_unsorted": ("payload", {"payload": '{"b":1,"a":2}'}),
    "payload_integral_float": ("payload", {"payload": '{"a":1.0}'}),
    "payload_not_object": ("payload", {"payload": "[1,2]"}),
    "payload_not_json": ("payload", {"payload": "{not json"}),
    "payload_deep": ("payload", {"payload": _DEEP}),
    "payload_huge": ("payload", {"payload": '{"a":"' + "x" * (9 * 2**20) + '"}'}),
    "payload_lone_surrogate": ("payload", {"payload": '{"a":"\\ud800"}'}),
    "payload_big_int": ("payload", {"payload": '{"a":9007199254740993}'}),
}


def _honest(lg: Ledger, n: int = 3) -> None:
    for i in range(n):
        lg.append("shard:s", [NewEvent("corpus.shard_ingested", {"i": i, "x": [1, {"y": "é"}]})])


def test_honest_appends_pass(ledger: Ledger) -> None:
    _honest(ledger, 5)
    report = verify_ledger(ledger)
    assert report.ok and report.envelope.ok
    assert report.envelope.events_checked == 5


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_field_is_a_finding_at_its_seq(pipeline_ledger: Ledger, case: str) -> None:
    lg = pipeline_ledger
    _honest(lg)
    name, fields = HOSTILE[case]
    row = append_raw(lg, **fields)
    report = verify_ledger(lg)
    assert report.chain.ok, report.chain.failure  # the hashes hold: only the envelope fails
    assert not report.ok
    assert [(f.seq, f.field) for f in report.envelope.findings] == [(row["seq"], name)]
    replayed = replay(lg)
    d = replayed.first("envelope")
    assert d is not None and (d.seq, d.detail) == (row["seq"], name)
    assert replayed.checks["envelope"] == "diverged"


def test_every_finding_is_counted_and_the_checks_go_on(pipeline_ledger: Ledger) -> None:
    lg = pipeline_ledger
    _honest(lg)
    first = append_raw(lg, event_id="not-a-uuid", type="Bad Type")
    _honest(lg, 1)
    second = append_raw(lg, payload='{"a":1,"a":1}')
    report = verify_ledger(lg)
    found = [(f.seq, f.field) for f in report.envelope.findings]
    assert found == [(first["seq"], "event_id"), (first["seq"], "type"), (second["seq"], "payload")]
    assert report.envelope.events_checked == second["seq"]
    assert replay(lg).counts["envelope"] == 3


def test_the_clock_rule_on_append(ledger: Ledger) -> None:
    """A clock that steps back does not make recorded_at go back: it stands still."""
    times = iter(["2026-11-29T19:35:33.500000Z", "2026-11-29T19:35:33.100000Z"])
    lg = Ledger(ledger.engine, clock=lambda: next(times))
    a = lg.append("s", [NewEvent("test.ticked", {})])[0]
    b = lg.append("s", [NewEvent("test.ticked", {})])[0]
    assert b.recorded_at == a.recorded_at == "2026-11-29T19:35:33.500000Z"
    assert verify_ledger(lg).ok


def test_a_malformed_clock_is_refused(ledger: Ledger) -> None:
    lg = Ledger(ledger.engine, clock=lambda: "last tuesday")
    with pytest.raises(PayloadError, match="recorded_at"):
        lg.append("s", [NewEvent("test.ticked", {})])
    assert ledger.read() == []


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "event",
    [
        NewEvent("test.named", {}, event_id="not-a-uuid"),
        NewEvent("test.named", {}, event_id="6F1C1A52-8D5E-4A4B-9A7E-3F0C2B1D9E10"),
        NewEvent("test.deep", {"a": _nested(64)}),
        NewEvent("test.deeper", {"a": _nested(5000)}),
        NewEvent("test.surrogate", {"a": "\ud800"}),
        NewEvent("test.huge", {"a": "x" * (9 * 2**20)}),
    ],
    ids=["event_id", "event_id_upper", "depth_65", "depth_5000", "lone_surrogate", "huge"],
)
def test_append_refuses_what_verify_would_flag(ledger: Ledger, event: NewEvent) -> None:
    with pytest.raises(PayloadError):
        ledger.append("s", [event])
    assert ledger.read() == []


def test_append_takes_the_deepest_payload_verify_accepts(ledger: Ledger) -> None:
    ledger.append("s", [NewEvent("test.deep", {"a": _nested(63)})])  # 64 levels with the object
    assert verify_ledger(ledger).ok


def test_a_text_in_an_integer_column(ledger: Ledger) -> None:
    """SQLite keeps whatever a raw INSERT puts in an INTEGER column."""
    if backend_of(ledger.engine.url.render_as_string()) != "sqlite":
        pytest.skip("PostgreSQL refuses a text in an integer column at INSERT")
    _honest(ledger)
    row = append_raw(ledger, stream_seq="abc", type_version=1.5)
    report = verify_ledger(ledger)
    assert not report.ok
    assert {(f.seq, f.field) for f in report.envelope.findings} == {
        (row["seq"], "stream_seq"),
        (row["seq"], "type_version"),
    }


def test_cli_verify_names_seq_and_field(pipeline_ledger: Ledger, tmp_path: Path) -> None:
    lg = pipeline_ledger
    _honest(lg)
    row = append_raw(lg, recorded_at="last tuesday")
    url = lg.engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(cli, ["verify", "--db", url])
    assert result.exit_code == 1, result.output
    assert f"seq {row['seq']}: recorded_at" in result.output
    assert "FAIL envelope" in result.output
    replayed = CliRunner().invoke(cli, ["replay", "--db", url])
    assert replayed.exit_code == 1
    assert "FAIL envelope" in replayed.output and f"seq {row['seq']}" in replayed.output


def test_the_check_alone() -> None:
    """EnvelopeCheck is pure: the same findings from the rows, with no database."""
    from ledger.envelope import RecordedEvent

    ev = RecordedEvent(1, "x", "s", 1, "t.x", 1, "2026-11-29T19:35:33.123456Z", "{}", "", "", "")
    check = EnvelopeCheck()
    check.check(ev)
    assert [f.field for f in check.current] == ["event_id"]
