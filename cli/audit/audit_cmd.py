"""``aborist-ledger export``, ``verify-bundle`` and ``report``: the click layer over
:mod:`aborist.audit.bundle` and :mod:`aborist.audit.report` (docs/replay.md, "Bundles"
and "Audit report").

``verify-bundle`` opens no database: a third party needs only the bundle and aborist.
Exit codes: 0 when everything held, 1 when anything failed (the first failure named) or
the input could not be read (one line on stderr), 2 for usage errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from aborist.audit.bundle import BundleReport, export_run
from aborist.audit.bundle import verify_bundle as verify_run_bundle
from aborist.audit.findings import clip
from aborist.audit.report import report_result
from aborist.errors import AboristError
from cli.audit.trust_args import TrustArgs, bundle_prover, trust_options
from cli.common import clean_errors, db_option, pipeline_ledger, read_json_object, write_text
from cli.term import printable

__all__ = ["export", "report", "verify_bundle"]


@click.command("export")
@click.option("--run", "run_id", required=True, metavar="RUN_ID", help="The run to export.")
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the bundle (JSON).",
)
@click.option(
    "--since-checkpoint",
    "since_file",
    metavar="FILE",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A checkpoint the recipient holds (from `aborist-ledger checkpoint --json`); "
    "the bundle carries a consistency proof from its size.",
)
@click.option(
    "--sign",
    "key_file",
    metavar="KEYFILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write OUTPUT.tlog-proof: the run's c2sp.org/tlog-proof@v1, its checkpoint "
    "signed with this log key.",
)
@db_option
def export(
    run_id: str, output: Path, since_file: Path | None, key_file: Path | None, db_url: str | None
) -> None:
    """Write one run as a bundle that verifies with no database.

    The bundle holds the run's events, every blob they reference, a checkpoint covering
    the run (the latest recorded one, else a new one is recorded), an inclusion proof for
    every event, and consistency proofs to every recorded checkpoint.

    Example: aborist-ledger export --run 8e46b6db59e8 -o bundle.json
    """
    if key_file is not None:
        from cli.audit.tlog_cmd import read_signer

        read_signer(key_file)  # a bad key fails before anything is written
    extra = []
    if since_file is not None:
        from aborist.audit.replay import parse_checkpoint

        try:
            extra.append(parse_checkpoint(read_json_object(since_file, "checkpoint"))[0])
        except AboristError as e:
            raise click.ClickException(f"{since_file}: {e}") from e
    from aborist.pipeline.recorded import load_run

    with pipeline_ledger(db_url) as lg, clean_errors():
        resolved = load_run(lg, run_id).run_id
        bundle = export_run(lg, resolved, extra_sizes=extra)
    write_text(output, json.dumps(bundle, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    if key_file is not None:
        from cli.audit.tlog_cmd import write_tlog_proof

        write_tlog_proof(bundle, key_file, output.with_name(output.name + ".tlog-proof"))
    cp = bundle["checkpoint"]
    click.echo(
        f"exported run {resolved}: {len(bundle['events'])} events, {len(bundle['blobs'])} "
        f"blobs, checkpoint {cp['tree_size']} {cp['root']} -> {output}"
    )


def _print_bundle(report: BundleReport) -> None:
    click.echo(
        printable(f"run {report.run_id}: {report.events} events, {report.blobs} blobs; "
                  f"checkpoint {report.checkpoint.get('tree_size')} "
                  f"{report.checkpoint.get('root', '')}")
    )  # fmt: skip
    if report.end is not None:
        click.echo(printable(f"run status: {report.end.describe()}"))
    for check, state in report.checks.items():
        tag = {"held": "ok  ", "diverged": "FAIL", "skipped": "skip"}[state]
        click.echo(f"{tag} {check}")
        d = report.failures.get(check)
        if d is not None:
            click.echo(printable(f"     first failure: {d.message()}"))
    for s in report.deep.version_skew:
        click.echo(printable(f"SKEW {s.message()}"))
    for n in report.deep.not_reexecuted:
        click.echo(printable(f"note stage {n.stage} not re-executed: {n.reason}"))
    first = report.first
    vouched = report.vouched_for()["text"]
    if first is None and report.end is not None and report.end.status == "incomplete":
        click.echo(
            "verify-bundle: everything held, but the run is incomplete: the bundle cannot "
            f"show whether its stream has later events; {vouched}"
        )
    elif first is None and (
        report.deep.skewed_runs or report.unrecorded_shards or report.served_from
    ):
        left = []
        if report.served_from:  # a hit: its answer, label and DAG root are another run's
            served = clip(report.served_from)
            left.append(
                f"the answer it served, its label and DAG root are run {served}'s, "
                "which this bundle does not hold (export and verify that run)"
            )
        if report.deep.skewed_runs:
            left.append("the run was not re-executed in full (version skew)")
        if report.unrecorded_shards:  # no ingest vouches for the evidence it read
            names = ", ".join(report.unrecorded_shards)
            left.append(f"it read shard(s) no recorded ingest vouches for ({names})")
        click.echo(
            printable(
                f"verify-bundle: everything checked held (run {report.status}), "
                f"but {' and '.join(left)}: {vouched}"
            )
        )
    elif first is None:
        click.echo(printable(f"verify-bundle: everything held (run {report.status}): {vouched}"))
    else:
        click.echo(printable(f"verify-bundle: FAILED at {first.kind}: {first.message()}"), err=True)


@click.command("verify-bundle")
@click.argument(
    "bundle_file", metavar="BUNDLE", type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--checkpoint",
    "checkpoint_file",
    metavar="FILE",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A checkpoint you trust: a signed note (from `aborist-ledger checkpoint --sign`, "
    "checked with --key) or the JSON of `checkpoint --json`; the bundle's checkpoint must "
    "equal it or be consistent with it.",
)
@trust_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def verify_bundle(
    bundle_file: Path, checkpoint_file: Path | None, trust: TrustArgs, as_json: bool
) -> None:
    """Verify an exported bundle offline (no database) and re-run its stages.

    Recomputes every payload and event hash, checks each inclusion proof against the
    bundle's checkpoint, every blob against its address, the run DAG, and re-executes
    the deterministic stages. Reports the run's status (completed, cached, failed,
    incomplete); a labelled run without its qa.run_completed fails as truncated. Exit 0
    when everything held, 1 naming the first failure.

    Example: aborist-ledger verify-bundle bundle.json --checkpoint cp.json
    """
    bundle = read_json_object(bundle_file, "bundle")
    trusted = trust.resolve(checkpoint_file)
    trust.check_state(bundle_prover(bundle))
    try:
        report = verify_run_bundle(bundle, checkpoint=trusted)
    except AboristError as e:
        raise click.ClickException(str(e)) from e
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        _print_bundle(report)
    if report.ok:
        trust.save_state()
    sys.exit(0 if report.ok else 1)


@click.command("report")
@click.argument("run_id", metavar="RUN_ID")
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the HTML report.",
)
@db_option
def report(run_id: str, output: Path, db_url: str | None) -> None:
    """Write a one-page, self-contained HTML audit report of one run.

    The question, the answer with each claim coloured by its verdict and linked to its
    evidence, the spotlighted excerpts, the repair, the run DAG as SVG, and the run's
    chain position and checkpoint. No network, no scripts. Exit 1 (the page still
    written) when it shows the run does not hold or a section could not be read.

    Example: aborist-ledger report 8e46b6db59e8 -o run.html
    """
    with pipeline_ledger(db_url) as lg, clean_errors():
        page = report_result(lg, run_id)
    html_text, unreadable = page.html, page.unreadable
    write_text(output, html_text)
    if unreadable:  # the page names them; the exit code says the report is not whole
        click.echo(
            printable(
                f"report: wrote {output}, but its {', '.join(unreadable)} section(s) could not "
                "be read from the run's events (a payload not in the shape this code reads); "
                "run `aborist-ledger replay`"
            ),
            err=True,
        )
        sys.exit(1)
    if page.problems:  # the page says so too: the exit code does not read as "it held"
        more = f" (+{len(page.problems) - 1} more)" if len(page.problems) > 1 else ""
        click.echo(
            printable(
                f"report: wrote {output}, which shows the run does not hold: "
                f"{page.problems[0]}{more}; run `aborist-ledger replay`"
            ),
            err=True,
        )
        sys.exit(1)
    click.echo(printable(f"wrote {output}"))
