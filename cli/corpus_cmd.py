"""`aborist ingest`, `aborist shards`, `aborist retrieve` (issue 3).

Thin click layer over :func:`aborist.corpus.ingest`, :func:`aborist.corpus.list_shards`
and :func:`aborist.retrieval.retriever.retrieve`: parse arguments, call one service function,
print, map domain and ledger errors to one line on stderr and exit 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from aborist.corpus.ingest import DEFAULT_ROLE, IngestReport, check_paths
from aborist.corpus.ingest import ingest as ingest_documents
from aborist.corpus.shard import list_shards
from aborist.errors import AboristError
from aborist.retrieval.retriever import DEFAULT_BUDGET_BYTES, RetrievalResult
from aborist.retrieval.retriever import retrieve as retrieve_context
from aborist.settings import load_settings
from ledger.errors import LedgerError

__all__ = ["ingest", "retrieve", "shards"]


def _dump(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2))


def _print_ingest(report: IngestReport) -> None:
    verb = "updated" if report.changed else "unchanged"
    click.echo(
        f"shard {report.shard} {verb}: {len(report.documents)} documents, "
        f"{report.n_chunks} chunks, {report.concepts} concept relations"
    )
    click.echo(f"  source_root {report.source_root}")
    click.echo(f"  versions    {report.canonicalization_version} / {report.chunking_version}")
    click.echo(f"  file        {report.path}")
    click.echo(f"  ingested    {len(report.ingested)} file(s) as {report.role}")
    if report.notes:
        click.echo(f"notes on {len(report.notes)} file(s):")
        for n in report.notes:
            click.echo(f"  {n.path}: {n.reason}")
    if report.skipped:
        click.echo(f"skipped {len(report.skipped)} file(s):")
        for s in report.skipped:
            click.echo(f"  {s.path}: {s.reason}")


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--shard", required=True, help="Shard name (letters, digits, '.', '_', '-').")
@click.option(
    "--role",
    default=DEFAULT_ROLE,
    show_default=True,
    help="source_role of these documents, e.g. primary, secondary, commentary.",
)
@click.option("--replace", is_flag=True, help="Drop documents of the shard that are not in PATHS.")
@click.option(
    "--no-ledger",
    is_flag=True,
    help="Do not record corpus.shard_ingested (answers from this shard cannot be audited).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the ingest report as JSON.")
def ingest(
    paths: tuple[Path, ...], shard: str, role: str, replace: bool, no_ledger: bool, as_json: bool
) -> None:
    """Ingest .txt, .md, .rst, .html, .pdf and .docx files (directories recursively).

    Files already in the shard are replaced by their new version; others are kept
    (unless --replace). Unsupported, binary or non-UTF-8 files, anything that is not a
    regular file (pipes, devices), files over 64 MiB, symlink loops, unreadable
    directories, PDFs that need a password or have no text layer (OCR is not offered)
    and malformed PDF or DOCX files are skipped and listed, one line each. Two ingests
    into one shard take turns. The shard's Merkle source root is recorded in the
    ledger as corpus.shard_ingested.

    Example: aborist ingest docs/ handbook.md --shard handbook --role primary
    """
    settings = load_settings()
    try:
        check_paths(paths)
        if no_ledger:
            report = ingest_documents(
                paths, shard, role, shards_dir=settings.shards_path(), replace=replace
            )
        else:
            from ledger.store import Ledger

            with Ledger.open(settings.ledger_url()) as ledger:
                report = ingest_documents(
                    paths,
                    shard,
                    role,
                    shards_dir=settings.shards_path(),
                    ledger=ledger,
                    replace=replace,
                )
    except (AboristError, LedgerError) as e:
        raise click.ClickException(str(e)) from e
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
        infos = list_shards(settings.shards_path())
    except AboristError as e:
        raise click.ClickException(str(e)) from e
    if as_json:
        _dump([i.to_dict() for i in infos])
        return
    if not infos:
        click.echo(f"no shards in {settings.shards_path()}; run `aborist ingest PATH --shard NAME`")
        return
    width = max(len(i.name) for i in infos)
    click.echo(f"{'shard':<{width}}  {'docs':>6}  {'chunks':>7}  versions           source_root")
    for i in infos:
        versions = f"{i.canonicalization_version}/{i.chunking_version}"
        click.echo(
            f"{i.name:<{width}}  {i.documents:>6}  {i.chunks:>7}  {versions:<17}  {i.source_root}"
        )


def _print_ranking(result: RetrievalResult, limit: int) -> None:
    click.echo(f"mode {result.mode}: {result.query or '(no searchable terms)'}")
    if result.mode == "OR":
        click.echo(f"  AND found {result.and_hits}: {result.and_query}")
    for s in result.synonyms:
        click.echo(f"  synonyms injected for {s.matched!r}: {', '.join(s.added)}")
    for r in result.rewrites:
        click.echo(f"  rewrote {r.unit!r} ({r.rule}): {', '.join(r.to) or 'dropped'}")
    if result.rivals:
        pairs = ", ".join(f"{a} (rival {b})" for a, b in result.rivals)
        click.echo(f"  rivalry exclusion on: {pairs}")
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
            f"{n:>3}  {c.decision:<21} {rerank:>6} {c.bm25:>7.3f}  {c.accept_path or '-':<8}  "
            f"{where} [{c.chunk_index}]"
        )
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

    Example: aborist retrieve "What is ownership?" --shard rust-book
    """
    settings = load_settings()
    try:
        result = retrieve_context(
            question, list(shards), shards_dir=settings.shards_path(), budget_bytes=budget
        )
    except AboristError as e:
        raise click.ClickException(str(e)) from e
    if as_json:
        _dump(result.to_dict(include_text=True))
    else:
        _print_ranking(result, limit)
