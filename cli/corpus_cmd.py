"""`aborist ingest`, `aborist shards`, `aborist documents`, `aborist delete-shard`,
`aborist retrieve`.

Thin click layer over :func:`aborist.corpus.ingest`, :func:`aborist.corpus.list_shards`
and :func:`aborist.retrieval.retriever.retrieve`: parse arguments, call one service function,
print, map domain and ledger errors to one line on stderr and exit 1.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import click

from aborist.corpus.ingest import DEFAULT_ROLE, IngestProgress, IngestReport, check_paths
from aborist.corpus.ingest import ingest as ingest_documents
from aborist.corpus.shard import (
    ShardInfo,
    delete_shard,
    read_documents,
    resolve_shard,
    survey_shards,
    validate_shard_name,
)
from aborist.errors import AboristError
from aborist.retrieval.records import RetrievalResult
from aborist.retrieval.retriever import DEFAULT_BUDGET_BYTES
from aborist.retrieval.retriever import retrieve as retrieve_context
from aborist.settings import load_settings
from cli.common import PathArg, db_option, embedded_ledger
from cli.term import printable
from ledger.errors import LedgerError

__all__ = ["COMMANDS", "delete_shard_cmd", "documents", "ingest", "retrieve", "shards"]

LISTED_SKIPS = 20
"""An ingest lists every skipped file up to this many; beyond, only the summary by reason
(``--json`` always has them all)."""
_REASON_END = re.compile(r" \(|;|: ")


def _dump(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2))


def _print_ingest(report: IngestReport) -> None:
    verb = "updated" if report.changed else "unchanged"
    click.echo(
        printable(f"shard {report.shard} {verb}: {len(report.documents)} documents, "
                  f"{report.n_chunks} chunks, {report.concepts} concept relations")
    )  # fmt: skip
    click.echo(f"  source_root {report.source_root}")
    click.echo(f"  versions    {report.canonicalization_version} / {report.chunking_version}")
    click.echo(printable(f"  file        {report.path}"))
    click.echo(printable(f"  ingested    {len(report.ingested)} file(s) as {report.role}"))
    if report.pruned:
        click.echo(f"  pruned      {len(report.pruned)} document(s) whose file is gone:")
        for uri in report.pruned:
            click.echo(printable(f"    {uri}"))
    if report.stale_temps_removed:
        click.echo(
            f"  removed     {report.stale_temps_removed} temporary file(s) left by an "
            "interrupted ingest"
        )
    if report.notes:
        click.echo(f"notes on {len(report.notes)} file(s):")
        for n in report.notes:
            click.echo(printable(f"  {n.path}: {n.reason}"))
    if report.skipped:
        kinds = Counter(reason_kind(s.reason) for s in report.skipped)
        summary = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items(), key=_by_count))
        click.echo(printable(f"skipped {len(report.skipped)} file(s): {summary}"))
        if len(report.skipped) <= LISTED_SKIPS:
            for s in report.skipped:
                click.echo(printable(f"  {s.path}: {s.reason}"))
        else:
            click.echo(f"  (the {len(report.skipped)} files are listed by --json)")


def reason_kind(reason: str) -> str:
    """A skip reason without its particulars, for the summary: ``malformed PDF (…)`` →
    ``malformed PDF``, ``unsupported file type .png; supported: …`` → ``unsupported file
    type .png``."""
    m = _REASON_END.search(reason)
    return reason[: m.start()] if m else reason


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


class _IngestBar:
    """A self-overwriting progress line on stderr (files, MB, ETA), on a terminal only
    and at most five times a second; piped or redirected output gets none."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.started = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def __call__(self, p: IngestProgress) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.2 and p.files < p.total_files):
            return
        self.last = now
        elapsed = max(now - self.started, 1e-9)
        rate = p.bytes / elapsed
        left = max(p.total_bytes - p.bytes, 0)
        eta = f"{int(left / rate) // 60}:{int(left / rate) % 60:02d}" if rate > 0 else "?"
        width = 24
        filled = width * p.files // max(p.total_files, 1)
        line = (
            f"[{'#' * filled}{'.' * (width - filled)}] {p.files}/{p.total_files} files  "
            f"{p.bytes / 1e6:.1f}/{p.total_bytes / 1e6:.1f} MB  ETA {eta}"
        )
        click.echo("\r" + line.ljust(78), err=True, nl=False)
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            click.echo("\r" + " " * 78 + "\r", err=True, nl=False)


@click.command("ingest")
@click.argument("paths", nargs=-1, type=PathArg(path_type=Path))
@click.option("--shard", required=True, help="Shard name (letters, digits, '.', '_', '-').")
@click.option(
    "--role",
    default=DEFAULT_ROLE,
    show_default=True,
    help="source_role of these documents, e.g. primary, secondary, commentary.",
)
@click.option("--replace", is_flag=True, help="Drop documents of the shard that are not in PATHS.")
@click.option(
    "--prune",
    is_flag=True,
    help="Drop documents of the shard whose files no longer exist (PATHS may be omitted).",
)
@click.option(
    "--no-ledger",
    is_flag=True,
    help="Do not record corpus.shard_ingested (aborist query then refuses the shard unless "
    "--allow-unrecorded-shards, and replay flags such runs).",
)
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the ingest report as JSON.")
def ingest(
    paths: tuple[Path, ...],
    shard: str,
    role: str,
    replace: bool,
    prune: bool,
    no_ledger: bool,
    db_url: str | None,
    as_json: bool,
) -> None:
    """Ingest .txt, .md, .rst, .html, .pdf and .docx files (directories recursively).

    Files already in the shard are replaced by their new version; others are kept
    (unless --replace). Unsupported, binary or non-UTF-8 files, anything that is not a
    regular file (pipes, devices), files over 64 MiB, symlink loops, unreadable
    directories, PDFs that need a password or have no text layer (OCR is not offered)
    and malformed PDF or DOCX files are skipped and listed, one line each. Two ingests
    into one shard take turns. The shard's Merkle source root is recorded in the
    ledger as corpus.shard_ingested.

    --prune drops the documents whose files are gone (the event lists them). On a
    terminal a progress line (files, MB, ETA) is drawn on stderr; piped, nothing is.
    An interrupted ingest's temporary files are removed by the next ingest of the shard.

    Example: aborist ingest docs/ handbook.md --shard handbook --role primary
    """
    if not paths and not prune:
        raise click.UsageError("give at least one PATH (or --prune to only drop gone files)")
    settings = load_settings(db_url=db_url)
    bar = _IngestBar(sys.stderr.isatty() and not as_json)
    options: dict[str, Any] = {
        "shards_dir": settings.shards_path(),
        "replace": replace,
        "prune": prune,
        "progress": bar,
    }
    try:
        if paths:
            check_paths(paths)
        if not no_ledger:
            embedded_ledger(settings)
        if no_ledger:
            report = ingest_documents(paths, shard, role, **options)
        else:
            from ledger.store import Ledger

            with Ledger.open(settings.ledger_url()) as ledger:
                report = ingest_documents(paths, shard, role, ledger=ledger, **options)
    except (AboristError, LedgerError) as e:
        raise click.ClickException(printable(str(e))) from e
    finally:
        bar.close()
    if as_json:
        _dump(report.to_dict())
    else:
        _print_ingest(report)


@click.command("shards")
@click.option("--json", "as_json", is_flag=True, help="Print the shards as JSON.")
def shards(as_json: bool) -> None:
    """List the shards with their document and chunk counts and source roots.

    Example: aborist shards --json
    """
    settings = load_settings()
    try:
        infos, broken = survey_shards(settings.shards_path())
    except AboristError as e:
        raise click.ClickException(printable(str(e))) from e
    _list_shards(infos, settings.shards_path(), as_json)
    if broken:  # the readable ones are listed (stdout stays one listing, --json too); each
        for line in broken:  # broken one is named on stderr, and the exit is 1
            click.echo(printable(f"Error: {line}"), err=True)
        raise click.exceptions.Exit(1)


def _list_shards(infos: list[ShardInfo], where: Path, as_json: bool) -> None:
    if as_json:
        _dump([i.to_dict() for i in infos])
        return
    if not infos:
        click.echo(printable(f"no shards in {where}; run `aborist ingest PATH --shard NAME`"))
        return
    width = max(len(i.name) for i in infos)
    click.echo(f"{'shard':<{width}}  {'docs':>6}  {'chunks':>7}  versions           source_root")
    for i in infos:
        versions = f"{i.canonicalization_version}/{i.chunking_version}"
        click.echo(
            printable(
                f"{i.name:<{width}}  {i.documents:>6}  {i.chunks:>7}  {versions:<17}  "
                f"{i.source_root}"
            )
        )


@click.command("documents")
@click.option("--shard", required=True, help="Shard name (or path to its file).")
@click.option("--json", "as_json", is_flag=True, help="Print the documents as JSON.")
def documents(shard: str, as_json: bool) -> None:
    """List what a shard holds: each document's title, file, format, role and chunks.

    Example: aborist documents --shard handbook
    """
    settings = load_settings()
    try:
        path = resolve_shard(shard, settings.shards_path())
        docs = read_documents(path)
    except AboristError as e:
        raise click.ClickException(printable(str(e))) from e
    if as_json:
        _dump([d.to_dict() for d in docs])
        return
    click.echo(printable(f"shard {shard}: {len(docs)} document(s)"))
    width = max((len(d.format) for d in docs), default=6)
    for d in docs:
        click.echo(
            printable(f"  {d.format:<{width}}  {d.n_chunks:>5} chunks  {d.source_role:<10} "
                      f"{d.title}  ({d.source_uri})")
        )  # fmt: skip


@click.command("delete-shard")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--no-ledger", is_flag=True, help="Do not record corpus.shard_deleted in the ledger.")
def delete_shard_cmd(name: str, yes: bool, no_ledger: bool) -> None:
    """Delete the shard NAME (its file; waits for an ingest of it to finish).

    The ledger keeps every event about the shard, so runs that used it stay auditable;
    the deletion itself is recorded as corpus.shard_deleted with the last source root.

    Example: aborist delete-shard old-handbook --yes
    """
    settings = load_settings()
    try:
        validate_shard_name(name)
        path = resolve_shard(name, settings.shards_path())
    except AboristError as e:
        raise click.ClickException(printable(str(e))) from e
    if not yes and not click.confirm(f"delete shard {name} ({path})?", default=False):
        raise click.ClickException("not deleted")
    try:
        if no_ledger:
            info = delete_shard(path)
            root = info.source_root if info is not None else None
        else:
            from aborist.corpus.ingest import shard_stream
            from aborist.events import ShardDeleted
            from ledger.store import Ledger

            embedded_ledger(settings)
            # The ledger is opened (its schema read) before the file goes: a ledger that
            # cannot record the deletion (not migrated, corrupt, unreachable) keeps it.
            with Ledger.open(settings.ledger_url()) as ledger:
                info = delete_shard(path)
                root = info.source_root if info is not None else None
                ledger.append(
                    shard_stream(name), [ShardDeleted(shard=name, source_root=root).to_event()]
                )
    except (AboristError, LedgerError) as e:
        raise click.ClickException(printable(str(e))) from e
    click.echo(printable(f"deleted shard {name} ({path}); last source_root {root or 'unreadable'}"))


def _print_ranking(result: RetrievalResult, limit: int) -> None:
    click.echo(printable(f"mode {result.mode}: {result.query or '(no searchable terms)'}"))
    if result.mode == "OR":
        click.echo(printable(f"  AND found {result.and_hits}: {result.and_query}"))
    for s in result.synonyms:
        click.echo(printable(f"  synonyms injected for {s.matched!r}: {', '.join(s.added)}"))
    for r in result.rewrites:
        click.echo(printable(f"  rewrote {r.unit!r} ({r.rule}): {', '.join(r.to) or 'dropped'}"))
    if result.rivals:
        pairs = ", ".join(f"{a} (rival {b})" for a, b in result.rivals)
        click.echo(printable(f"  rivalry exclusion on: {pairs}"))
    elif result.comparative:
        click.echo("  comparative question: rivalry exclusion off")
    click.echo(
        f"{len(result.chunks)} chunks selected, {result.used_bytes} of "
        f"{result.budget_bytes} bytes; {len(result.candidates)} candidates"
    )
    click.echo(f"{'#':>3}  {'decision':<21} {'rerank':>6} {'bm25':>7}  {'path':<8}  chunk")
    for n, c in enumerate(result.candidates[:limit], start=1):
        rerank = "-" if c.rerank is None else f"{c.rerank:.3f}"
        where = f"{c.shard}: {c.title}"
        if c.section and c.section != c.title:
            where += f" > {c.section}"
        click.echo(
            printable(f"{n:>3}  {c.decision:<21} {rerank:>6} {c.bm25:>7.3f}  "
                      f"{c.accept_path or '-':<8}  {where} [{c.chunk_index}]")
        )  # fmt: skip
    if len(result.candidates) > limit:
        click.echo(f"  … {len(result.candidates) - limit} more (use --limit or --json)")


@click.command("retrieve")
@click.argument("question")
@click.option(
    "--shard",
    "shards",
    multiple=True,
    help="Shard to search (repeatable); default: every shard.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=DEFAULT_BUDGET_BYTES,
    show_default=True,
    help="Context budget in bytes.",
)
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="Candidates to print.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print every decision as JSON.")
def retrieve(
    question: str, shards: tuple[str, ...], budget: int, limit: int, as_json: bool
) -> None:
    """Show how retrieval ranks the shards' chunks for QUESTION, and why.

    Prints the FTS5 query, AND or OR mode, injected synonyms, and for each candidate its
    BM25 score, accept path, rerank score and whether it made the context budget.
    A question `aborist query` refuses (only punctuation or only common words, too long,
    not valid text) is refused here too, with the same line.

    Example: aborist retrieve "What is ownership?" --shard rust-book
    """
    from aborist.pipeline.question import check_question

    settings = load_settings()
    try:
        question = check_question(question)
        result = retrieve_context(
            question, list(shards), shards_dir=settings.shards_path(), budget_bytes=budget
        )
    except AboristError as e:
        raise click.ClickException(printable(str(e))) from e
    if as_json:
        _dump(result.to_dict(include_text=True))
    else:
        _print_ranking(result, limit)


COMMANDS = [ingest, shards, documents, delete_shard_cmd, retrieve]
