"""Break the replay's checkpoint line, then mend it: a payload edited with its stored
hashes left as they were fails the chain at its seq; a recorded checkpoint past it is then
checked with a consistency proof over the stored hashes, which still hold, and the line
read ``ok checkpoint 1 checked against the tree of the hashes the chain check
recomputed`` though the chain recomputed none of them from that seq on. It now says how
many were held only to the stored hashes, and from which seq. Both backends."""

from __future__ import annotations

from click.testing import CliRunner

from aborist.audit import replay
from cli.audit.ledger_cli import cli
from ledger.tlog.proofs import checkpoint
from tests.audit.builders import Built
from tests.ledger.tamper import tamper


def test_a_checkpoint_past_a_chain_failure_is_named_as_held_to_stored_hashes(
    built: Built,
) -> None:
    lg = built.ledger
    checkpoint(lg)
    ev = built.event(built.lattice, "qa.answer_verified")
    tamper(lg, "UPDATE events SET payload = REPLACE(payload, 'STRICT', 'STRICK') WHERE seq = :s",
           s=ev.seq)  # fmt: skip
    report = replay(lg)
    assert report.first("chain") is not None and report.first("chain").seq == ev.seq
    assert report.checkpoints_checked == 1 and report.checkpoints_unrehashed == 1
    assert report.to_dict()["summary"]["checkpoints_unrehashed"] == 1
    result = CliRunner().invoke(cli, ["replay", "--db", built.url])
    assert result.exit_code == 1, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("ok   checkpoint"))
    assert line.endswith(
        f"; 1 of them only against the stored hashes, which the chain did not recompute from "
        f"seq {ev.seq} on (it failed there): they do not show those events unedited"
    ), line


def test_an_honest_checkpoint_line_has_no_such_clause(built: Built) -> None:
    checkpoint(built.ledger)
    report = replay(built.ledger)
    assert report.ok and report.checkpoints_checked == 1 and report.checkpoints_unrehashed == 0
    result = CliRunner().invoke(cli, ["replay", "--db", built.url])
    assert result.exit_code == 0 and "only against the stored hashes" not in result.output
