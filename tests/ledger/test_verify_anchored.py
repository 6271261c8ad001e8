"""`verify` says which events the recorded checkpoints it confirmed cover, and how many
after the newest of them no checkpoint covers: its ``ok`` lines used to be all a reader
saw, and a ledger whose last checkpoint was 300 events ago read as anchored throughout.
Both backends."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cli.audit.ledger_cli import cli
from ledger.envelope import NewEvent
from ledger.store import Ledger
from ledger.tlog.proofs import checkpoint
from ledger.verify import verify_ledger
from tests.ledger.tamper import tamper


def _append(lg: Ledger, n: int, stream: str = "run:a") -> None:
    lg.append(stream, [NewEvent("test.appended", {"i": i}) for i in range(n)])


def _verify(lg: Ledger) -> tuple[int, list[str], dict[str, object]]:
    url = lg.engine.url.render_as_string(hide_password=False)
    text = CliRunner().invoke(cli, ["verify", "--db", url])
    data = json.loads(CliRunner().invoke(cli, ["verify", "--db", url, "--json"]).output)
    return text.exit_code, text.output.splitlines(), data["anchored"]


def test_events_after_the_newest_checkpoint_are_named_not_anchored(ledger: Ledger) -> None:
    _append(ledger, 10)
    checkpoint(ledger)
    _append(ledger, 5, "run:b")
    code, lines, anchored = _verify(ledger)
    assert code == 0  # an unanchored tail is no failure, but it is said
    assert lines[-1] == (
        "note not anchored: after the newest checkpoint verify confirmed (size 10; events "
        "1–10), 5 events (seq 11–15) are covered by no confirmed checkpoint (`aborist-ledger "
        "checkpoint` records one)"
    ), lines
    assert anchored == {"checkpoint": 10, "covered": [1, 10], "unanchored": [11, 15],
                        "unanchored_events": 5}  # fmt: skip
    _append(ledger, 1, "run:c")
    assert verify_ledger(ledger).anchored()["unanchored"] == [11, 16]


def test_no_checkpoint_means_no_event_is_anchored(ledger: Ledger) -> None:
    _append(ledger, 3)
    code, lines, anchored = _verify(ledger)
    assert code == 0 and lines[-1].startswith(
        "note not anchored: no recorded checkpoint was confirmed, so 3 events (seq 1–3) are "
        "covered by no confirmed checkpoint"
    ), lines
    assert anchored["covered"] is None and anchored["unanchored_events"] == 3


def test_a_checkpoint_at_the_head_covers_every_event_as_the_databases_own_record(
    ledger: Ledger,
) -> None:
    _append(ledger, 4)
    checkpoint(ledger)
    code, lines, anchored = _verify(ledger)
    assert code == 0 and lines[-1].startswith(
        "ok   anchored: events 1–4 are covered by the recorded checkpoint of size 4 (the "
        "database's own record"
    ), lines
    assert anchored["unanchored"] is None and anchored["unanchored_events"] == 0


def test_a_rejected_checkpoint_anchors_nothing(ledger: Ledger) -> None:
    """The newest checkpoint's root forged: it is no anchor, and the tail runs from the
    newest one verify confirmed."""
    _append(ledger, 6)
    checkpoint(ledger)
    _append(ledger, 6, "run:b")
    checkpoint(ledger)
    tamper(ledger, "UPDATE checkpoints SET root = :r WHERE tree_size = 12", r="ab" * 32)
    code, lines, anchored = _verify(ledger)
    assert code == 1
    assert anchored["checkpoint"] == 6 and anchored["unanchored"] == [7, 12], anchored
    assert lines[-1].startswith("note not anchored: after the newest checkpoint verify confirmed "
                                "(size 6; events 1–6), 6 events (seq 7–12)")  # fmt: skip


def test_a_checkpoint_past_a_chain_failure_anchors_nothing(ledger: Ledger) -> None:
    _append(ledger, 8)
    checkpoint(ledger)
    tamper(ledger, "UPDATE events SET payload = :p WHERE seq = 3", p='{"i":99}')
    code, lines, anchored = _verify(ledger)
    assert code == 1 and anchored["covered"] is None and anchored["unanchored"] == [1, 8]
    assert any(x.startswith("skip checkpoints: 1 not checked") for x in lines), lines


def test_one_event_past_the_checkpoint(ledger: Ledger) -> None:
    _append(ledger, 2)
    checkpoint(ledger)
    _append(ledger, 1, "run:b")
    _, lines, _ = _verify(ledger)
    assert "1 event (seq 3) is covered by no confirmed checkpoint" in lines[-1], lines
