"""`aborist-ledger`: create, list, verify, checkpoint and prove the ledger.

The database comes from ``--db URL``, else ``ABORIST_DB_URL`` (or ``db_url`` in the config
file), else SQLite at ``ledger.db`` in the data home (:mod:`aborist.settings`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from aborist import __version__
from aborist.settings import load_settings
from cli.common import (
    AboristGroup,
    clean_errors,
    db_option,
    emit_json,
    home_option,
    json_option,
    seq_range,
)
from cli.term import printable
from ledger.chain import MESSAGE_CLIP
from ledger.engine import ledger_engine, parse_url, sqlite_path
from ledger.envelope import RecordedEvent
from ledger.jsonsafe import JSONRefusedError
from ledger.store import Ledger

if TYPE_CHECKING:
    from ledger.verify import LedgerReport


def resolve_url(db_url: str | None) -> str:
    return load_settings(db_url=db_url).ledger_url()


@contextmanager
def open_ledger(db_url: str | None, *, with_projections: bool = False) -> Iterator[Ledger]:
    with clean_errors():
        if with_projections:
            from aborist.projections import open_ledger as open_with_projections

            lg = open_with_projections(resolve_url(db_url))
        else:
            lg = Ledger.open(resolve_url(db_url))
        try:
            yield lg
        finally:
            lg.close()


@click.group(cls=AboristGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aborist-ledger")
@home_option
def cli() -> None:
    """Inspect and audit aborist's append-only, hash-chained ledger.

    Example: aborist-ledger migrate && aborist-ledger verify
    """


@cli.command()
@db_option
def migrate(db_url: str | None) -> None:
    """Create the ledger schema, or upgrade it to the latest revision.

    Example: aborist-ledger migrate --db postgresql+psycopg://postgres@127.0.0.1/test
    """
    from aborist.migrations import upgrade

    with clean_errors():
        url = parse_url(resolve_url(db_url))
        path = sqlite_path(url)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise click.ClickException(f"cannot create {path.parent}: {e.strerror}") from e
        engine = ledger_engine(url)
        try:
            from ledger.store import translate_errors

            with translate_errors(url.render_as_string(hide_password=True)):
                before, after = upgrade(engine)
        finally:
            engine.dispose()
    where = url.render_as_string(hide_password=True)
    now = ", ".join(sorted(after))
    if before == after:
        click.echo(printable(f"{where}: schema already at {now}"))
    else:
        was = ", ".join(sorted(before)) or "empty"
        click.echo(printable(f"{where}: schema upgraded from {was} to {now}"))


@cli.command()
@db_option
@click.option("--stream", help="Only events of this stream.")
@click.option("--since", type=seq_range(min=0), default=0, help="Only events after this seq.")
@click.option("--limit", type=seq_range(min=1), default=None, help="At most N events.")
@click.option("--type", "types", multiple=True, help="Only events of this type (repeatable).")
@json_option
def events(
    db_url: str | None,
    stream: str | None,
    since: int,
    limit: int | None,
    types: tuple[str, ...],
    as_json: bool,
) -> None:
    """List events in ledger order.

    Example: aborist-ledger events --stream shard:handbook --limit 5
    """
    with open_ledger(db_url) as lg, clean_errors():
        rows = lg.read(gt=since, limit=limit, stream=stream, types=list(types) or None)
    if as_json:
        emit_json({"events": [_event_json(r) for r in rows]})
        return
    for r in rows:
        click.echo(
            printable(f"{r.seq:>8}  {r.recorded_at}  {r.stream}#{r.stream_seq}  {r.type}"
                      f"  {r.hash[:16]}  {_abbrev(r.payload)}")
        )  # fmt: skip
    if not rows:
        click.echo("no events", err=True)


def _event_json(ev: RecordedEvent) -> dict[str, Any]:
    """The event with its payload parsed; a payload the bounded parse refuses stays the
    stored text, with ``payload_refused`` saying why (``aborist-ledger verify`` names it)."""
    row = ev.to_dict()
    try:
        row["payload"] = ev.data
    except JSONRefusedError as e:
        row["payload_refused"] = e.reason
    return row


def _abbrev(payload: str, width: int = 80) -> str:
    return payload if len(payload) <= width else payload[: width - 1] + "…"


@cli.command()
@db_option
@json_option
def verify(db_url: str | None, as_json: bool) -> None:
    """Recompute every hash and link; exit 1 naming the first bad seq.

    Checks payload hashes, event hashes, prev_hash links, gapless seq and stream
    positions, every envelope field (RFC 3339 recorded_at never going back, UUID
    event_id held by one event only, type and stream grammar, each payload its own RFC
    8785 form), every blob against its address, and every recorded checkpoint root. The
    last line says how many events after the newest checkpoint it confirmed no
    checkpoint covers (recorded checkpoints are the database's own record).

    Example: aborist-ledger verify --json
    """
    from ledger.verify import verify_ledger

    with open_ledger(db_url) as lg, clean_errors():
        report = verify_ledger(lg)
    if as_json:
        emit_json(report.to_dict())
    else:
        c = report.chain
        if c.failure is not None:
            click.echo(printable(f"FAIL chain at {c.failure.message()}"))
        else:
            click.echo(f"ok   chain: {c.events_checked} events, head {c.head_seq} {c.head_hash}")
        env = report.envelope
        if env.ok:
            click.echo(f"ok   envelope: {env.events_checked} events, every field well-formed")
        else:
            click.echo(f"FAIL envelope: {env.count} field(s) break docs/ledger-format.md")
            for finding in env.findings:
                click.echo(f"     {finding.message()}")
            if env.count > len(env.findings):
                click.echo(f"     (+{env.count - len(env.findings)} more)")
        if report.event_id_failure is not None:
            click.echo(printable(f"FAIL event ids: {repeated_id_text(report.event_id_failure)}"))
        else:
            click.echo(f"ok   event ids: {report.last_seq} events, no id held twice")
        if report.blob_failure:
            b = report.blob_failure
            if b["expected"] == "bytes":  # the row holds no bytes at all
                click.echo(printable(f"FAIL blob {_c(b['blob'])}: {_c(b['found'])}"))
            else:
                click.echo(printable(f"FAIL blob {_c(b['blob'])}: bytes hash to {_c(b['found'])}"))
        else:
            click.echo(f"ok   blobs: {report.blobs_checked} match their hashes")
        _echo_checkpoints(report)
        if report.tile_failure:
            t = report.tile_failure
            click.echo(printable(f"FAIL tile {_c(t['tile'])}: {_c(t['found'])}"))
        elif c.failure is not None:
            click.echo(f"skip tiles: not checked (the chain failed at {c.failure.where})")
        elif report.tiles_held:
            click.echo(f"ok   tiles: {report.tiles_checked} match the events")
        else:  # the tiles reach past the events the chain verified (appended meanwhile)
            click.echo(
                f"ok   tiles: {report.tiles_checked} match the event hashes read for them, "
                f"which reach past the {c.head_seq} events the chain verified (not held to it)"
            )
        click.echo(anchored_line(report))
    sys.exit(0 if report.ok else 1)


def _echo_checkpoints(report: LedgerReport) -> None:
    """`verify`'s checkpoint line(s): held to the tree of the events the chain re-hashed,
    and the ones past a chain failure named as not checked."""
    if report.checkpoint_failure:
        f = report.checkpoint_failure
        click.echo(
            printable(
                f"FAIL checkpoint {_c(f['tree_size'])}: expected {_c(f['expected'])}, found "
                f"{_c(f['found'])}"
            )
        )
    elif report.chain.ok or report.checkpoints_checked:
        click.echo(
            f"ok   checkpoints: {report.checkpoints_checked} roots match the tree of the "
            "events re-hashed above"
        )
    skipped = report.checkpoints_unchecked
    if skipped and report.chain.failure is not None:
        sizes = ", ".join(map(str, skipped[:5])) + (", …" if len(skipped) > 5 else "")
        click.echo(
            f"skip checkpoints: {len(skipped)} not checked (size {sizes}): they reach past "
            f"the chain failure at {report.chain.failure.where}"
        )


def _c(value: object) -> str:
    """A value of a finding as one line shows it: clipped to :data:`MESSAGE_CLIP`
    characters (SQLite keeps a hash or root of any length, and a 2 MB one was printed
    whole); ``--json`` keeps it as found."""
    text = str(value)
    return text if len(text) <= MESSAGE_CLIP else text[: MESSAGE_CLIP - 1] + "…"


def repeated_id_text(failure: dict[str, Any]) -> str:
    """What a repeated event id's finding says: the id and the seqs that hold it."""
    seqs = failure["seqs"]
    shown = ", ".join(map(str, seqs[:5])) + (", …" if len(seqs) > 5 else "")
    eid = str(failure["event_id"])[:40]
    return f"{len(seqs)} events (seq {shown}) hold the event id {eid}; each event has its own"


def anchored_line(report: LedgerReport) -> str:
    """`verify`'s anchoring line: which events the recorded checkpoints it confirmed
    cover, and how many past the newest of them no checkpoint covers, so the chain's
    ``ok`` is never read as the whole ledger anchored (docs/ledger-format.md)."""
    a = report.anchored()
    k, n = report.anchored_size, a["unanchored_events"]
    if report.last_seq == 0:
        return "note not anchored: the ledger holds no event yet"
    if n == 0:
        return (
            f"ok   anchored: events 1–{k} are covered by the recorded checkpoint of size {k} "
            "(the database's own record: `replay --checkpoint FILE` holds them to one kept "
            "elsewhere)"
        )
    low, high = a["unanchored"]
    span = f"{low}–{high}" if high > low else f"{high}"
    events = f"{n} events (seq {span}) are" if n != 1 else f"1 event (seq {span}) is"
    if k == 0:
        where = "no recorded checkpoint was confirmed, so"
    else:
        where = f"after the newest checkpoint verify confirmed (size {k}; events 1–{k}),"
    return (
        f"note not anchored: {where} {events} covered by no confirmed checkpoint "
        "(`aborist-ledger checkpoint` records one)"
    )


@cli.command()
@db_option
@click.option("--sign", "key_file", metavar="KEYFILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Print the checkpoint as a C2SP signed note, signed with this log key "
                   "(from `aborist-ledger keygen`).")  # fmt: skip
@json_option
def checkpoint(db_url: str | None, key_file: Path | None, as_json: bool) -> None:
    """Record the current tree size and Merkle root, and print them.

    Keep the printed root somewhere the ledger's operators cannot edit: a later
    consistency proof against it shows history was only appended to. With --sign the
    checkpoint is a signed note that anyone holding the verifier key can check.

    Example: aborist-ledger checkpoint --sign log.key > cp.note
    """
    from cli.audit.tlog_cmd import read_signer, signed_note
    from ledger.tlog.proofs import checkpoint as make_checkpoint

    if key_file is not None:
        read_signer(key_file)  # a bad key file fails before anything is recorded
    with open_ledger(db_url) as lg, clean_errors():
        cp = make_checkpoint(lg)
    note = signed_note(cp, key_file) if key_file is not None else None
    if as_json:
        emit_json(cp.to_dict() if note is None else dict(cp.to_dict(), note=note))
    elif note is not None:
        click.echo(note, nl=False)
    else:
        click.echo(f"tree_size {cp.tree_size}\nroot      {cp.root}\ncreated   {cp.created_at}")


@cli.command()
@db_option
@click.argument("seq", type=seq_range(min=1), required=False)
@click.option("--size", type=seq_range(min=1), help="Tree size (default: latest checkpoint).")
@click.option(
    "--consistency",
    nargs=2,
    type=seq_range(min=1),
    metavar="SIZE1 SIZE2",
    help="Print a consistency proof between two tree sizes instead.",
)
@json_option
def prove(
    db_url: str | None,
    seq: int | None,
    size: int | None,
    consistency: tuple[int, int] | None,
    as_json: bool,
) -> None:
    """Print an inclusion proof for event SEQ, or a consistency proof.

    Example: aborist-ledger prove 42 --json; aborist-ledger prove --consistency 10 42
    """
    from ledger.tlog.proofs import prove_consistency, prove_inclusion

    if consistency and seq is not None:
        raise click.UsageError("give either SEQ or --consistency SIZE1 SIZE2, not both")
    if not consistency and seq is None:
        raise click.UsageError("give SEQ, or --consistency SIZE1 SIZE2")
    with open_ledger(db_url) as lg, clean_errors():
        if consistency:
            cproof = prove_consistency(lg, consistency[0], consistency[1])
            data = cproof.to_dict()
        else:
            assert seq is not None
            iproof = prove_inclusion(lg, seq, size)
            data = iproof.to_dict()
    if as_json:
        emit_json(data)
        return
    for key, value in data.items():
        if key in ("proof", "proof_base64"):
            continue
        click.echo(printable(f"{key:<12} {value}"))
    click.echo("proof")
    for p in data["proof"]:
        click.echo(printable(f"  {p}"))
    if not data["verified"]:
        raise click.ClickException("the proof does not verify against the root")


@cli.command()
@db_option
@json_option
@click.option(
    "--force",
    is_flag=True,
    help="Rebuild even when the ledger fails verification (a warning goes to stderr).",
)
def rebuild(db_url: str | None, as_json: bool, force: bool) -> None:
    """Drop every projection (answer cache, run DAGs, runs) and fold all events again.

    The projections are read models: the ledger's events are the truth, and a rebuilt
    table equals the live one row for row. The events are verified first (the chain and
    every recorded checkpoint): folding edited events would make the answer cache agree
    with the forgery, so a ledger that fails is refused (exit 1) unless --force.

    Example: aborist-ledger rebuild
    """
    from aborist.projections import rebuild_projections
    from ledger.verify import verify_ledger

    with open_ledger(db_url, with_projections=True) as lg, clean_errors():
        # Blobs are left out: no projection reads them (`aborist-ledger verify` does).
        checked = verify_ledger(lg, blobs=False)
        if not checked.ok:
            c, cp = checked.chain.failure, checked.checkpoint_failure
            env = checked.envelope
            if c is not None:
                why = f"chain at {c.message()}"
            elif not env.ok:
                why = f"envelope at {env.findings[0].message()}"
                if env.count > 1:
                    why += f" (+{env.count - 1} more)"
            elif cp is None and checked.tile_failure is not None:
                t = checked.tile_failure
                why = f"tile {_c(t['tile'])}: {_c(t['found'])}"
            elif cp is None and checked.event_id_failure is not None:
                why = f"event ids: {repeated_id_text(checked.event_id_failure)}"
            else:
                assert cp is not None
                why = f"checkpoint {_c(cp['tree_size'])}: expected {_c(cp['expected'])}"
                why += f", found {_c(cp['found'])}"
            if not force:
                raise click.ClickException(
                    f"refusing to rebuild: the ledger fails verification ({why}); the "
                    "projections would be folded from events that cannot be trusted. Run "
                    "`aborist-ledger replay` to see what diverged, or rebuild with --force"
                )
            click.echo(
                f"warning: rebuilding from a ledger that fails verification ({why})", err=True
            )
        folded = rebuild_projections(lg)
        positions = lg.projection_positions()
    if as_json:
        emit_json({"events_folded": folded, "positions": positions, "verified": checked.ok})
    else:
        names = ", ".join(f"{k} at seq {v}" for k, v in sorted(positions.items()))
        click.echo(f"rebuilt from {folded} events: {names}")


from cli.audit.replay_cmd import replay as replay_command  # noqa: E402

cli.add_command(replay_command)

from cli.audit.audit_cmd import export as export_command  # noqa: E402
from cli.audit.audit_cmd import report as report_command  # noqa: E402
from cli.audit.audit_cmd import verify_bundle as verify_bundle_command  # noqa: E402

cli.add_command(export_command)
cli.add_command(verify_bundle_command)
cli.add_command(report_command)

from cli.audit.tlog_cmd import keygen as keygen_command  # noqa: E402
from cli.audit.tlog_cmd import publish as publish_command  # noqa: E402
from cli.audit.tlog_cmd import verify_checkpoint as verify_checkpoint_command  # noqa: E402

cli.add_command(keygen_command)
cli.add_command(publish_command)
cli.add_command(verify_checkpoint_command)

from cli.audit.witness_cmd import witness as witness_command  # noqa: E402

cli.add_command(witness_command)


def main() -> None:
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()


__all__ = ["cli", "main"]
