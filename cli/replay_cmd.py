"""``aborist-ledger replay``: the click layer over :func:`aborist.audit.replay`.

Exit codes: 0 when everything held, 1 when anything diverged (or the ledger could not be
read: one line on stderr), 2 for usage errors (click's default). docs/replay.md has the
JSON shape.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from aborist.audit import ReplayReport
from aborist.audit import replay as run_replay
from cli.common import clean_errors, pipeline_ledger, read_json_object
from cli.term import printable

__all__ = ["replay"]


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
    line("checkpoint", f"{report.checkpoints_checked} checked by consistency proof")
    line("blob", f"{report.blobs_checked} blobs hash to their addresses")
    line("dag", f"{report.dags_checked} run DAGs, {report.stages_checked} stages; runs: {runs}")
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
    if report.not_reexecuted_count:
        click.echo(printable(f"note {report.not_reexecuted_count} stage(s) not re-executed:"))
        for n in report.not_reexecuted:
            click.echo(printable(f"     run {n.run}, stage {n.stage}: {n.reason}"))
    click.echo("replay: everything held" if report.ok else "replay: DIVERGED")


@click.command("replay")
@click.option("--db", "db_url", metavar="URL",
              help="Ledger database URL (default: $ABORIST_DB_URL, else SQLite under "
                   "$ABORIST_HOME).")  # fmt: skip
@click.option("--run", "run_id", metavar="RUN_ID", help="Only this run's DAG and stages.")
@click.option("--since", type=click.IntRange(min=0), default=0, metavar="SEQ",
              help="Only events after SEQ (chained from the hash of event SEQ).")  # fmt: skip
@click.option("--deep", is_flag=True,
              help="Re-execute parse, verify, repair, render and label from the recorded "
                   "inputs and compare byte for byte.")  # fmt: skip
@click.option("--checkpoint", "checkpoint_file", metavar="FILE",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A checkpoint kept outside the database (from `aborist-ledger checkpoint "
                   "--json`); a consistency proof to the current head must hold.")  # fmt: skip
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
    jobs: int | None,
    as_json: bool,
) -> None:
    """Recompute every hash, DAG and projection; exit 1 naming the first divergence.

    Checks the chain, every run's DAG against what was recorded and projected, the
    projections rebuilt in a scratch database, and with --deep re-runs every
    deterministic stage. Version skew is reported, not counted as divergence.

    Example: aborist-ledger replay --deep --checkpoint cp.json
    """
    checkpoint = (
        read_json_object(checkpoint_file, "checkpoint", error=click.BadParameter)
        if checkpoint_file is not None
        else None
    )
    with pipeline_ledger(db_url) as lg, clean_errors():
        report = run_replay(
            lg, run_id=run_id, since=since, deep=deep, checkpoint=checkpoint,
            parallel=None if jobs is None else jobs == 2,
        )  # fmt: skip
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        _print_text(report)
    sys.exit(0 if report.ok else 1)
