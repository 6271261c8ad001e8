"""Break the replay's checkpoint line, then mend it. Both backends.

A payload edited with its stored hashes left as they were fails the chain at its seq; a
recorded checkpoint past it is then checked with a consistency proof over the stored
hashes, which still hold, and the line read ``ok checkpoint 1 checked against the tree of
the hashes the chain check recomputed`` though the chain recomputed none of them from that
seq on. Then the line counted a checkpoint it *rejected* as checked too (``FAIL
checkpoint 1 checked …`` for a recorded root the events do not give). The line now says
how many were confirmed, how many rejected, how many held only to the stored hashes, and
never counts a rejected one as checked."""

from __future__ import annotations

import json

from click.testing import CliRunner

from aborist.audit import replay
from cli.audit.ledger_cli import cli
from ledger.tlog.proofs import checkpoint
from tests.audit.builders import Built
from tests.ledger.tamper import tamper


def checkpoint_line(output: str) -> str:
    return next(x for x in output.splitlines() if x[5:].startswith("checkpoint "))


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
    assert report.checkpoints_confirmed == 0 and report.checkpoints_unrehashed == 1
    summary = report.to_dict()["summary"]
    assert summary["checkpoints_unrehashed"] == 1 and summary["checkpoints_confirmed"] == 0
    assert report.checks["checkpoint"] == "skipped"  # nothing confirmed, nothing rejected
    result = CliRunner().invoke(cli, ["replay", "--db", built.url])
    assert result.exit_code == 1, result.output
    line = checkpoint_line(result.output)
    assert line.startswith("skip checkpoint  0 confirmed against the tree"), line
    assert line.endswith(
        f"; 1 held only by a consistency proof over the stored hashes, which the chain did not "
        f"recompute from seq {ev.seq} on (it failed there): they do not show those events "
        "unedited"
    ), line


def test_an_honest_checkpoint_line_has_no_such_clause(built: Built) -> None:
    checkpoint(built.ledger)
    report = replay(built.ledger)
    assert report.ok and report.checkpoints_confirmed == 1 and report.checkpoints_unrehashed == 0
    result = CliRunner().invoke(cli, ["replay", "--db", built.url])
    assert result.exit_code == 0 and "only by a consistency proof" not in result.output
    line = checkpoint_line(result.output)
    assert line == (
        "ok   checkpoint  1 confirmed against the tree of the hashes the chain check "
        "recomputed, 0 rejected"
    ), line


def test_a_rejected_checkpoint_is_never_counted_as_checked(built: Built) -> None:
    """Two recorded checkpoints, the second's root forged: 1 confirmed, 1 rejected (the line
    used to read ``FAIL checkpoint 2 checked against the tree …``)."""
    lg = built.ledger
    first = checkpoint(lg)
    tamper(lg, "INSERT INTO checkpoints (tree_size, root, created_at) "
               "VALUES (:n, :r, :t)", n=first.tree_size - 1, r="ab" * 32,
           t=first.created_at)  # fmt: skip
    report = replay(lg)
    assert report.checkpoints_confirmed == 1 and report.checkpoints_rejected == 1
    d = report.first("checkpoint")
    assert d is not None and d.seq == first.tree_size - 1
    result = CliRunner().invoke(cli, ["replay", "--db", built.url])
    assert result.exit_code == 1
    line = checkpoint_line(result.output)
    assert line.startswith("FAIL checkpoint  1 confirmed against the tree") and line.endswith(
        ", 1 rejected"
    ), line
    assert " checked against" not in line
    data = json.loads(CliRunner().invoke(cli, ["replay", "--db", built.url, "--json"]).output)
    s = data["summary"]
    assert (s["checkpoints_confirmed"], s["checkpoints_rejected"]) == (1, 1)
    assert s["checkpoints_checked"] == 1  # the confirmed one only


def test_a_checkpoint_with_a_bad_created_at_is_rejected_not_confirmed(built: Built) -> None:
    """Its root holds, but its ``created_at`` is not a timestamp the ledger writes: one
    outcome, rejected (it was counted confirmed and rejected at once)."""
    lg = built.ledger
    checkpoint(lg)
    tamper(lg, "UPDATE checkpoints SET created_at = 'yesterday'")
    report = replay(lg)
    assert report.checkpoint_outcomes == {"rejected": 1}
    assert report.checks["checkpoint"] == "diverged"


def test_the_file_is_named_and_judged_on_its_own(built: Built, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A forged recorded checkpoint does not make the file the auditor gave "not hold":
    the last line covers what the file covers, and the line names the file's outcome."""
    lg = built.ledger
    cp = checkpoint(lg)
    tamper(lg, "UPDATE checkpoints SET root = :r", r="cd" * 32)
    cp_file = tmp_path / "cp.json"
    cp_file.write_text(json.dumps(cp.to_dict()))
    result = CliRunner().invoke(cli, ["replay", "--db", built.url, "--checkpoint", str(cp_file)])
    assert result.exit_code == 1
    line = checkpoint_line(result.output)
    assert ", 1 rejected" in line and line.endswith("; the checkpoint you gave: confirmed"), line
    last = result.output.splitlines()[-1]
    assert f"events 1–{cp.tree_size} are covered by the checkpoint you gave" in last, last
    # and a file that is itself rejected is named so
    cp_file.write_text(json.dumps(dict(cp.to_dict(), root="ef" * 32)))
    result = CliRunner().invoke(cli, ["replay", "--db", built.url, "--checkpoint", str(cp_file)])
    assert checkpoint_line(result.output).endswith("; the checkpoint you gave: rejected")
    assert "does not hold" in result.output.splitlines()[-1]


def test_a_checkpoint_at_or_below_since_is_held_to_stored_hashes_only(built: Built) -> None:
    """Under ``--since SEQ`` the chain re-hashes events after SEQ only: a checkpoint of size
    SEQ or less is held to stored hashes alone (its root used to be taken from the fold's
    seed, the stored hashes of 1..SEQ, and counted as checked against recomputed ones)."""
    lg = built.ledger
    size = checkpoint(lg).tree_size
    for since, outcome in ((size - 1, "confirmed"), (size, "unrehashed")):
        report = replay(lg, since=since)
        assert report.ok and report.checkpoint_outcomes == {outcome: 1}, (since, report)
    result = CliRunner().invoke(cli, ["replay", "--db", built.url, "--since", str(size - 1)])
    line = checkpoint_line(result.output)
    assert line.startswith("ok   checkpoint  1 confirmed") and line.endswith(
        f"recomputed (events 1–{size - 1} taken as stored: --since {size - 1}), 0 rejected"
    ), line
    result = CliRunner().invoke(cli, ["replay", "--db", built.url, "--since", str(size)])
    assert result.exit_code == 0, result.output
    line = checkpoint_line(result.output)
    assert line.startswith("skip checkpoint  0 confirmed") and (
        f"which the chain did not recompute for events 1–{size} (--since {size})" in line
    ), line
