"""Hostile rows never crash the audit. Rows are appended by raw SQL with hashes that hold
(no trigger dropped): payloads nested thousands deep, unparsable, huge, with duplicate
keys or not in their own RFC 8785 form, known fields of the wrong types, odd unicode,
odd types and streams. ``verify``, ``replay`` (also ``--run``, ``--since``, ``--deep``),
``rebuild``, ``export`` and ``verify-bundle`` exit 0 or 1 with one report, never a
traceback; a bad payload is a finding at its seq and the other checks still run. Both
backends."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.exc import DBAPIError

from aborist.audit import replay
from aborist.events import EVENT_TYPES
from cli.audit.ledger_cli import cli
from ledger.canonical import canonical_text
from tests.audit.builders import Built
from tests.ledger.raw import append_raw

_DEEP = '{"a":' * 5000 + "1" + "}" * 5000

#: The hostile payloads of the issue, each refused by the one bounded parse.
PAYLOADS = {
    "deep_5000": '{"x":' + "[" * 5000 + "]" * 5000 + "}",
    "deep_objects": _DEEP,
    "unparsable": '{"mode":"strict",',
    "huge": '{"question":"' + "x" * (9 * 2**20) + '"}',
    "duplicate_keys": '{"b":1,"a":2,"a":3}',
    "not_jcs": '{"mode": "strict"}',
}


def _ran(result: Result) -> Result:
    """The command ended as the CLI promises: exit 0 or 1, no traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.output[-2000:],
        repr(result.exception),
    )
    assert result.exit_code in (0, 1), result.output[-2000:]
    assert "Traceback" not in result.output
    return result


def _audit(built: Built, run_id: str, tmp: Path, since: int) -> dict[str, int]:
    """Every audit command over the ledger; their exit codes."""
    runner, db = CliRunner(), ["--db", built.url]
    codes = {}
    for name, args in {
        "verify": ["verify"],
        "events --json": ["events", "--json"],
        "replay": ["replay"],
        "replay --run": ["replay", "--run", run_id],
        "replay --since": ["replay", "--since", str(since)],
        "replay --deep": ["replay", "--deep"],
        "replay --deep --json": ["replay", "--deep", "--json"],
        "rebuild": ["rebuild"],
        "rebuild --force": ["rebuild", "--force"],
    }.items():
        codes[name] = _ran(runner.invoke(cli, [*args, *db])).exit_code
    bundle = tmp / "bundle.json"
    exported = _ran(runner.invoke(cli, ["export", "--run", run_id, "-o", str(bundle), *db]))
    if exported.exit_code == 0:
        codes["verify-bundle"] = _ran(runner.invoke(cli, ["verify-bundle", str(bundle)])).exit_code
    return codes


def test_each_hostile_payload_is_a_finding_at_its_seq(built: Built, tmp_path: Path) -> None:
    """Into a real run's stream, after its last event: each payload is an envelope
    divergence at its seq, every command exits 1, and the other checks still ran."""
    stream = f"run:{built.quote}"
    rows = [
        append_raw(built.ledger, stream=stream, type="qa.run_completed", payload=payload)
        for payload in PAYLOADS.values()
    ]
    seqs = [r["seq"] for r in rows]
    report = replay(built.ledger, deep=True)
    assert report.first("chain") is None  # the hashes hold
    d = report.first("envelope")
    assert d is not None and (d.seq, d.run, d.detail) == (seqs[0], built.quote, "payload")
    assert report.counts["envelope"] == len(PAYLOADS)
    assert report.checks["blob"] == "held" and report.checks["projection"] != "skipped"
    assert report.dags_checked >= 1  # the other runs were still checked
    codes = _audit(built, built.quote, tmp_path, since=seqs[0] - 1)
    assert codes.pop("events --json") == 0  # a listing, not a check: refused payloads named
    # Forced, the rebuild folds each run's history; rows past the run's end are not part of
    # it (the run grammar), so nothing of theirs is read, and it succeeds.
    assert codes.pop("rebuild --force") == 0
    assert set(codes.values()) == {1}, codes
    assert "verify-bundle" in codes


@pytest.mark.parametrize("payload", ["null", "[]", "0.000001", '"text"'])
def test_a_json_value_that_is_no_object_where_blobs_are_named_is_a_finding(
    built: Built, tmp_path: Path, payload: str
) -> None:
    """Canonical JSON, but no object, in an event whose payload names blobs: export and
    verify-bundle list no blob from it and report it; no traceback."""
    row = append_raw(built.ledger, stream=f"run:{built.quote}", type="qa.prompt_built",
                     payload=payload)  # fmt: skip
    d = replay(built.ledger).first("envelope")
    assert d is not None and (d.seq, d.detail) == (row["seq"], "payload")
    codes = _audit(built, built.quote, tmp_path, since=row["seq"] - 1)
    assert codes["verify-bundle"] == 1 and codes["replay --run"] == 1


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large],
)  # fmt: skip
@given(data=st.data())
def test_random_hostile_rows_never_crash_the_audit(
    built: Built, tmp_path_factory: Any, data: st.DataObject
) -> None:
    """The ledger is shared by the examples: each appends 1-3 more rows on top (an
    append-only ledger only ever gets more hostile), then runs every audit command."""
    runs = [built.lattice, built.quote, built.hit, built.failed]
    for _ in range(data.draw(st.integers(1, 3), label="rows")):
        fields = data.draw(_rows(runs), label="row")
        if "event_id" in fields:  # unique, as the column requires
            fields["event_id"] = f"{fields['event_id']}{next(_SERIAL)}"
        try:
            append_raw(built.ledger, **fields)
        except DBAPIError:  # a value the column refuses (PostgreSQL: VARCHAR(36) event_id)
            continue
    head = built.ledger.read(gt=0)[-1].seq
    run_id = data.draw(st.sampled_from(runs), label="run")
    # Drawn apart from the head, so the draws do not depend on what earlier examples added.
    since = data.draw(st.integers(0, 10_000), label="since") % head
    _audit(built, run_id, tmp_path_factory.mktemp("bundle"), since)


# -- strategies -----------------------------------------------------------------------------

# Text both backends can store: PostgreSQL's TEXT holds no NUL and only valid UTF-8.
_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_TEXT = st.text(_CHARS, max_size=20)
_ODD_TEXT = st.one_of(
    _TEXT,
    st.sampled_from(["", " ", "\x1b[31m", "line\nbreak", "\u2028", "\ufeff", "é" * 3, "🜁",
                     "\u202eevil", "a" * 500]),
)  # fmt: skip
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    _ODD_TEXT,
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)
_KNOWN = sorted(EVENT_TYPES)
_SERIAL = itertools.count()


def _known_fields(type_: str) -> st.SearchStrategy[dict[str, Any]]:
    names = sorted(EVENT_TYPES[type_].model_fields)
    return st.dictionaries(st.sampled_from(names), _JSON, max_size=len(names))


def _deep(depth: int, opener: str) -> str:
    closer = {"[": "]", '{"a":': "}"}[opener]
    return opener * depth + "1" + closer * depth


def _payload_text(type_: str) -> st.SearchStrategy[str]:
    """Payload texts: canonical and not, of known fields with any values, or hostile."""
    fields = _known_fields(type_) if type_ in EVENT_TYPES else st.dictionaries(_TEXT, _JSON)
    canonical = fields.map(lambda d: _canonical_or(d, json.dumps(d)))
    loose = fields.map(lambda d: json.dumps(d, ensure_ascii=True))
    return st.one_of(
        canonical,
        canonical,
        loose,
        _JSON.map(lambda v: json.dumps(v, ensure_ascii=False)),
        st.builds(_deep, st.sampled_from([65, 5000, 100_000]), st.sampled_from(["[", '{"a":'])),
        st.sampled_from([
            '{"a":"\\ud800"}', '{"a":"\\udc00\\ud800"}', '{"\\ud83d":1}', '{"a":1e400}',
            '{"a":' + "9" * 5000 + "}", '{"a":-0}', '{"a":NaN}', '{"a":1,"a":2}', "null", "[]",
            '"text"', "{", "", " {}", "{}\n", '{"a":1}{"b":2}', "\ufeff{}",
        ]),
    )  # fmt: skip


def _canonical_or(value: Any, fallback: str) -> str:
    try:
        return canonical_text(value)
    except ValueError:  # an integer outside the I-JSON range: the loose text instead
        return fallback


@st.composite
def _rows(draw: st.DrawFn, runs: list[str]) -> dict[str, Any]:
    stream = draw(st.one_of(
        st.sampled_from([f"run:{r}" for r in runs]),
        st.sampled_from(["run:forged0001", "shard:geo", "shard:bees"]),
        _ODD_TEXT.filter(bool),
    ), label="stream")  # fmt: skip
    type_ = draw(st.one_of(st.sampled_from(_KNOWN), _ODD_TEXT.filter(bool)), label="type")
    row: dict[str, Any] = {
        "stream": stream,
        "type": type_,
        "payload": draw(_payload_text(type_), label="payload"),
    }
    if draw(st.booleans()):
        row["event_id"] = draw(st.one_of(st.uuids().map(str), _ODD_TEXT.filter(bool)))
    if draw(st.booleans()):
        row["recorded_at"] = draw(st.one_of(
            st.sampled_from(["last tuesday", "2000-01-01T00:00:00.000000Z",
                             "2999-12-31T23:59:59.999999Z", "2026-02-30T00:00:00.000000Z"]),
            _ODD_TEXT.filter(bool),
        ))  # fmt: skip
    if draw(st.booleans()):
        row["type_version"] = draw(st.integers(-3, 2**31 - 1))
    return row
