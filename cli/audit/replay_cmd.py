"""``aborist-ledger replay``: the click layer over :func:`aborist.audit.replay`.

Exit codes: 0 when everything held, 1 when anything diverged (or the ledger could not be
read: one line on stderr), 2 for usage errors (click's default). The last line says what
vouches for the events: the checkpoint given (which seqs it covers) or nothing outside the
database. docs/replay.md has the JSON shape.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from aborist.audit import ReplayReport
from aborist.audit import replay as run_replay
from cli.audit.trust_args import TrustArgs, ledger_prover, trust_options
from cli.common import clean_errors, pipeline_ledger, seq_range
from cli.term import printable

__all__ = ["checkpoint_text", "replay"]


def _print_text(report: ReplayReport) -> None:
    def line(check: str, text: str) -> None:
        state = report.checks.get(check, "held")
        tag = {"held": "ok  ", "diverged": "FAIL", "skipped": "skip"}[state]
        click.echo(printable(f"{tag} {check:<11} {text}"))
        d = report.first(check)
        if d is not None:
            more = report.counts.get(check, 1) - 1
            tail = f" (+{more} more)" if more else ""
            click.echo(printable(f"     first divergence: {d.message()}{tail}"))

    runs = ", ".join(f"{k} {v}" for k, v in sorted(report.runs.items())) or "none"
    line(
        "chain",
        f"{report.events_checked} events chained; head {report.head_seq} {report.head_hash}",
    )
    line("envelope", "every field as docs/ledger-format.md has it (recorded_at in order)")
    line("checkpoint", checkpoint_text(report))
    if report.checks.get("tile") == "skipped":
        why = (
            "--since: they are re-derived from event 1"
            if report.scope.get("since")
            else "no tiles stored yet: a checkpoint stores them once 256 events are in"
        )
        line("tile", f"no stored Merkle tile checked ({why})")
    else:
        line("tile", f"{report.tiles_checked} stored Merkle tiles re-derived from the events")
    line("blob", f"{report.blobs_checked} blobs hash to their addresses")
    line("history", f"every run read against the run grammar; runs: {runs}")
    line("dag", f"{report.dags_checked} run DAGs, {report.stages_checked} stages")
    line("cache", "cache keys recomputed from each run's record; hits held to what they served")
    proven = (
        f"; {report.corpus_chunks} evidence chunks proven leaves of their source roots"
        if report.checks.get("deep") != "skipped"
        else " (add --deep to prove each evidence chunk is a leaf of its root)"
    )
    line("corpus", f"{report.corpus_runs} runs read only shards an ingest recorded{proven}")
    if report.checks.get("deep") == "skipped":
        line("deep", "not run (add --deep to re-execute the deterministic stages)")
    else:
        line("deep", f"{report.deep_runs} runs, {report.deep_stages} stages re-executed")
    rows = ", ".join(f"{k} {v}" for k, v in sorted(report.projection_rows.items()))
    line("projection", f"rebuilt and compared row for row: {rows}")
    if report.skew_count:
        click.echo(f"SKEW {report.skew_count} recorded by another version (not re-executed):")
        for s in report.version_skew:
            click.echo(printable(f"     {s.message()}"))
    if report.corpus_not_recorded_count:
        click.echo(
            f"FLAG {report.corpus_not_recorded_count} run(s): corpus not recorded (allowed "
            "by --allow-unrecorded-shards; no ingest vouches for their evidence):"
        )
        for c in report.corpus_not_recorded:
            click.echo(printable(f"     {c.message()}"))
    if report.not_reexecuted_count:
        click.echo(printable(f"note {report.not_reexecuted_count} stage(s) not re-executed:"))
        for n in report.not_reexecuted:
            click.echo(printable(f"     run {n.run}, stage {n.stage}: {n.reason}"))
    if report.ok:
        click.echo(report.held_line())
    else:
        click.echo(f"replay: DIVERGED (what held is {report.vouched_for()['text']})")


def checkpoint_text(report: ReplayReport) -> str:
    """The ``checkpoint`` line: how many checkpoints were confirmed (held to the tree of
    the hashes the chain check recomputed), rejected (a divergence), held only to the
    stored hashes (a consistency proof past the events the chain re-hashed) and not
    checked at all; a rejected one is never counted as checked (docs/replay.md,
    "Output")."""
    confirmed, rejected = report.checkpoints_confirmed, report.checkpoints_rejected
    stored, unchecked = report.checkpoints_unrehashed, report.checkpoints_unchecked
    if not (confirmed or rejected or stored or unchecked):
        return "none checked: none is recorded in the database, none was given (--checkpoint FILE)"
    since = int(report.scope.get("since") or 0)
    text = f"{confirmed} confirmed against the tree of the hashes the chain check recomputed"
    if confirmed and since:
        text += f" (events 1–{since} taken as stored: --since {since})"
    text += f", {rejected} rejected"
    if stored:
        broke = report.first("chain")
        if broke is not None and broke.seq is not None:
            why = f"from seq {broke.seq} on (it failed there)"
        elif since:
            why = f"for events 1–{since} (--since {since})"
        else:
            why = "that far"
        text += (
            f"; {stored} held only by a consistency proof over the stored hashes, which the "
            f"chain did not recompute {why}: they do not show those events unedited"
        )
    if unchecked:
        text += f"; {unchecked} not checked (no tree of the event hashes to hold them to)"
    if report.checkpoint_file is not None:
        text += f"; the checkpoint you gave: {report.checkpoint_file}"
    return text


@click.command("replay")
@click.option("--db", "db_url", metavar="URL",
              help="Ledger database URL (default: $ABORIST_DB_URL, else SQLite under "
                   "$ABORIST_HOME).")  # fmt: skip
@click.option("--run", "run_id", metavar="RUN_ID", help="Only this run's DAG and stages.")
@click.option("--since", type=seq_range(min=0), default=0, metavar="SEQ",
              help="Only events after SEQ (chained from the hash of event SEQ).")  # fmt: skip
@click.option("--deep", is_flag=True,
              help="Re-execute parse, verify, repair, render and label from the recorded "
                   "inputs and compare byte for byte.")  # fmt: skip
@click.option("--checkpoint", "checkpoint_file", metavar="FILE",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A checkpoint kept outside the database: a signed note (from "
                   "`aborist-ledger checkpoint --sign`, checked with --key) or the JSON of "
                   "`checkpoint --json`; a consistency proof to the current head must "
                   "hold.")  # fmt: skip
@trust_options
@click.option("--jobs", type=click.IntRange(1, 2), default=None, metavar="N",
              help="CPUs to use: 1 keeps every check in this process; 2 runs the chain "
                   "and the projection rebuild in a second process and, with --deep, "
                   "shares the re-execution with a third (default: 2 on ledgers of 20,000 "
                   "events or more when two CPUs are available). The report is the same "
                   "either way.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def replay(
    db_url: str | None,
    run_id: str | None,
    since: int,
    deep: bool,
    checkpoint_file: Path | None,
    trust: TrustArgs,
    jobs: int | None,
    as_json: bool,
) -> None:
    """Recompute every hash, DAG and projection; exit 1 naming the first divergence.

    Checks the chain, every run's DAG against what was recorded and projected, the
    projections rebuilt in a scratch database, and with --deep re-runs every
    deterministic stage. Version skew is reported, not counted as divergence.

    Example: aborist-ledger replay --deep --checkpoint cp.json
    """
    checkpoint = trust.resolve(checkpoint_file)
    with pipeline_ledger(db_url) as lg, clean_errors():
        trust.check_state(ledger_prover(lg))
        report = run_replay(
            lg, run_id=run_id, since=since, deep=deep, checkpoint=checkpoint,
            parallel=None if jobs is None else jobs == 2,
        )  # fmt: skip
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        _print_text(report)
    if report.ok:
        trust.save_state()
    sys.exit(0 if report.ok else 1)
