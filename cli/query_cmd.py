"""`aborist query`, `ask`, `runs`, `show`, `inspect`: answering on the ledger."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from aborist.clients.base import ChatClient
from aborist.clients.select import MODEL_KINDS, select_client, settings_timeout
from aborist.errors import InputError
from aborist.events import (
    MODES,
    AnswerLabelled,
)
from aborist.pipeline.question import check_question
from aborist.pipeline.run import Governance
from aborist.settings import Settings, load_settings
from aborist.verify.ladder import AUDIT_MODES, LADDER
from cli.common import PathArg, Seconds, clean_errors, embedded_ledger, pipeline_ledger
from cli.query_view import (
    BatchProgress,
    print_outcome,
    print_result,
    summary_lines,
)
from cli.runs_export import write_export
from cli.term import printable

__all__ = ["COMMANDS", "ask", "inspect", "query", "runs", "show"]

F = TypeVar("F", bound=Callable[..., Any])


def answer_options(f: F) -> F:
    options = [
        click.option("--db", "db_url", metavar="URL", help="Ledger database URL."),
        click.option(
            "--mode",
            type=click.Choice(sorted(MODES)),
            default="claim-lattice",
            show_default=True,
            help="claim-lattice: one claim per line with [E#] pointers; quote: prose with "
            '"verbatim quotes".',
        ),
        click.option(
            "--model",
            "model_kind",
            type=click.Choice(MODEL_KINDS),
            default=None,
            help="Answerer (default: openai when ABORIST_LLM_BASE_URL is set, else extractive).",
        ),
        click.option("--base-url", help="Model endpoint, e.g. http://127.0.0.1:8000/v1."),
        click.option("--llm-model", help="Model name the server serves (ABORIST_LLM_MODEL)."),
        click.option(
            "--api-key",
            help="API key (ABORIST_LLM_API_KEY, else OPENAI_API_KEY or ANTHROPIC_API_KEY).",
        ),
        click.option(
            "--llm-timeout",
            type=Seconds(min=0, min_open=True, max=86_400),
            metavar="SECONDS",
            help="Wait at most this long for each model answer, per attempt: connecting, "
            "sending and the whole response, however slowly it arrives (ABORIST_LLM_TIMEOUT; "
            "default 120; at most 3 attempts).",
        ),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the answer cache."),
        click.option("--repair", is_flag=True, help="Repair unverified quotes mechanically."),
        click.option(
            "--reprompts",
            type=click.IntRange(min=0, max=5),
            default=0,
            show_default=True,
            help="With --repair: re-ask the model at most N times to fix what mechanics cannot.",
        ),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _client(settings: Settings, opts: dict[str, Any]) -> ChatClient:
    with clean_errors():
        return select_client(
            opts["model_kind"], settings, base_url=opts["base_url"],
            model=opts["llm_model"], api_key=opts["api_key"], timeout=opts["llm_timeout"],
        )  # fmt: skip


def _governance(opts: dict[str, Any]) -> Governance:
    if opts["reprompts"] and not opts["repair"]:
        raise click.UsageError("--reprompts needs --repair")
    return Governance(
        mode=opts["mode"],
        repair_enabled=bool(opts["repair"]),
        repair_max_reprompts=opts["reprompts"] if opts["repair"] else 0,
    )


def _run_batch_command(
    path: Path,
    *,
    settings: Settings,
    shards: tuple[str, ...],
    workers: int,
    output: Path | None,
    governance: Governance,
    opts: dict[str, Any],
    allow_unrecorded: bool = False,
) -> None:
    """`aborist query --batch`: read, answer with run_batch, write lines, summarize."""
    from aborist.pipeline.batch import ClientSpec, read_questions, run_batch

    with clean_errors():
        items, problems = read_questions(path)
    for problem in problems:
        click.echo(printable(f"{path}: {problem}"), err=True)
    with clean_errors():  # the variable is checked here, once, not in every worker
        timeout = opts["llm_timeout"] or settings_timeout(settings)
    spec = ClientSpec(
        opts["model_kind"], opts["base_url"], opts["llm_model"], opts["api_key"], timeout=timeout
    )
    progress = BatchProgress(sys.stderr.isatty())
    if output is not None and output.exists() and output.resolve() == path.resolve():
        raise click.ClickException(
            f"the output file {output} is the questions file: answers would overwrite the "
            "questions; choose another -o"
        )
    try:
        sink = output.open("w", encoding="utf-8") if output is not None else sys.stdout
    except OSError as e:
        raise click.ClickException(f"cannot write {output}: {e.strerror or e}") from e

    def emit(line: dict[str, Any]) -> None:
        if "error" in line and line["error_type"] != "NotAttempted":  # those: in the summary
            run = f" (run {line['run_id']})" if line["run_id"] else ""
            click.echo(printable(f"{line['id']}: failed: {line['error']}{run}"), err=True)
        sink.write(json.dumps(line, ensure_ascii=False) + "\n")
        sink.flush()

    try:
        with clean_errors():
            summary = run_batch(
                items, db_url=settings.ledger_url(), shards_dir=settings.shards_path(),
                shards=list(shards) or None, governance=governance, client=spec,
                use_cache=not opts["no_cache"], workers=workers, on_result=emit,
                on_progress=progress, allow_unrecorded_shards=allow_unrecorded,
            )  # fmt: skip
    finally:
        if output is not None:
            sink.close()
    progress(summary, final=True)
    for line in summary_lines(summary, len(problems)):
        click.echo(line, err=True)
    if not summary.ok:
        raise SystemExit(1)


@click.command()
@click.argument("question", required=False)
@click.option("--shard", "shards", multiple=True, help="Shard to search (repeatable; default all).")
@click.option(
    "--batch",
    "batch_path",
    type=PathArg(path_type=Path, dir_okay=False),
    help='Answer every line {"id", "question"} of this JSON Lines file instead of QUESTION.',
)
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=64),
    default=1,
    show_default=True,
    help="With --batch: worker processes answering at once (each with its own connection).",
)
@click.option(
    "-o",
    "--output",
    type=PathArg(path_type=Path, dir_okay=False),
    help="With --batch: write the answers (JSON Lines, input order) here instead of stdout.",
)
@click.option(
    "--allow-unrecorded-shards",
    is_flag=True,
    help="Answer from shards whose source root this ledger never recorded (built with "
    "--no-ledger, copied, or edited): the run records it and replay flags it as "
    "'corpus not recorded'.",
)
@answer_options
def query(
    question: str | None,
    shards: tuple[str, ...],
    batch_path: Path | None,
    workers: int,
    output: Path | None,
    allow_unrecorded_shards: bool,
    **opts: Any,
) -> None:
    """Answer QUESTION from the ingested shards, verify it, and record every step.

    With --batch, answer a whole questionnaire: one JSON object per output line (what --json
    prints, plus "id"), a summary on stderr, exit 1 if any question failed (docs/batch.md).

    Example: aborist query "What does the nonlocal statement do?" --shard python-reference

    Example: aborist query --batch questions.jsonl --workers 4 -o answers.jsonl
    """
    from aborist.pipeline.query import query as run_query

    if (question is None) == (batch_path is None):
        raise click.UsageError("give either QUESTION or --batch FILE (exactly one)")
    settings = load_settings(db_url=opts["db_url"])
    if batch_path is not None:
        embedded_ledger(settings)
        _run_batch_command(
            batch_path, settings=settings, shards=shards or settings.shards,
            workers=workers, output=output, governance=_governance(opts), opts=opts,
            allow_unrecorded=allow_unrecorded_shards,
        )  # fmt: skip
        return
    if workers != 1 or output is not None:
        raise click.UsageError("--workers and --output need --batch")
    assert question is not None
    client = _client(settings, opts)
    with client, pipeline_ledger(opts["db_url"], create=True) as lg, clean_errors():
        result = run_query(
            question, ledger=lg, client=client, shards_dir=settings.shards_path(),
            shards=list(shards or settings.shards) or None, governance=_governance(opts),
            use_cache=not opts["no_cache"], allow_unrecorded_shards=allow_unrecorded_shards,
        )  # fmt: skip
    print_result(result, opts["as_json"])


def _check_path_text(path: Path) -> None:
    """A run records the document's absolute path as text: a name that is not UTF-8
    (Python carries its bytes as lone surrogates) has no such form, and the ledger refused
    the run's first event with "payload holds a lone surrogate"."""
    where = str(path.absolute())
    try:
        where.encode("utf-8")
    except UnicodeEncodeError as e:
        byte = ord(where[e.start]) - 0xDC00
        raise InputError(
            f"the path {where!r} is not valid UTF-8 text (byte 0x{byte:02X}): a run records "
            "the document's path; rename it, or `aborist ingest` it and `aborist query`"
        ) from None


@click.command()
@click.argument("path", type=PathArg(path_type=Path))
@click.argument("question")
@answer_options
def ask(path: Path, question: str, **opts: Any) -> None:
    """Answer QUESTION from the one document at PATH, and record every step.

    Example: aborist ask policy.md "Who approves exceptions?"
    """
    from aborist.pipeline.ask import ask as run_ask

    with clean_errors():  # refused before the document's ingest is recorded
        question = check_question(question)
        _check_path_text(path)
    settings = load_settings(db_url=opts["db_url"])
    client = _client(settings, opts)
    with client, pipeline_ledger(opts["db_url"], create=True) as lg, clean_errors():
        result = run_ask(
            path, question, ledger=lg, client=client, governance=_governance(opts),
            use_cache=not opts["no_cache"],
        )  # fmt: skip
    print_result(result, opts["as_json"])


#: The largest integer SQLite and PostgreSQL bind (a larger --limit was an OverflowError).
_SQL_INT_MAX = 2**63 - 1


@click.command()
@click.option("--db", "db_url", metavar="URL", help="Ledger database URL.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--label", type=click.Choice([name for _, name, _ in LADDER], case_sensitive=False),
              help="Only runs with this label.")  # fmt: skip
@click.option("--audit-mode", type=click.Choice(AUDIT_MODES, case_sensitive=False),
              help="Only runs with this audit mode.")  # fmt: skip
@click.option("--status", type=click.Choice(["completed", "failed", "incomplete"]),
              help="Only completed, failed or incomplete (interrupted) runs.")  # fmt: skip
@click.option("--since", metavar="WHEN",
              help="Only runs started at or after this ISO date or time (UTC unless it "
                   "says otherwise), e.g. 2026-03-01.")  # fmt: skip
@click.option("--grep", metavar="TEXT", help="Only runs whose question contains TEXT (any case).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "jsonl"]),
    help="Export question, answer, label and sources as CSV or JSON Lines.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def runs(
    db_url: str | None,
    limit: int,
    label: str | None,
    audit_mode: str | None,
    status: str | None,
    since: str | None,
    grep: str | None,
    fmt: str | None,
    as_json: bool,
) -> None:
    """List the most recent runs, newest first; filter them, or export them.

    --json prints every run with its answer and sources; --format csv or jsonl exports
    question, answer, label and sources (with locators when the documents have them).
    A CSV cell that begins with =, +, -, @, a tab or a carriage return gets a ' in
    front, so a spreadsheet shows it as text rather than running it as a formula.

    Example: aborist runs --label VERIFIED --since 2026-03-01 --format csv > answers.csv
    """
    from aborist.projections import RunFilter, select_runs

    if fmt and as_json:
        raise click.UsageError("give --json or --format, not both")
    wanted = RunFilter(  # a limit past SQL's 64-bit integers means "all": as many as exist
        limit=min(limit, _SQL_INT_MAX - 1), label=label, audit_mode=audit_mode,
        status="started" if status == "incomplete" else status, since=since, grep=grep,
    )  # fmt: skip
    with pipeline_ledger(db_url) as lg, clean_errors():
        items = select_runs(lg, wanted)
    if as_json:
        click.echo(json.dumps({"runs": items}, indent=2, ensure_ascii=False))
        return
    if fmt:
        write_export(items, fmt)
        return
    for r in items:
        shown = r["status"] if r["status"] != "started" else "incomplete"
        verdict = (
            r["audit_mode"]
            or (r["failed_stage"] and f"failed at {r['failed_stage']}")
            or (r["stopped_after"] and f"after {r['stopped_after']}")
            or ""
        )
        hit = " (cached)" if r["cache_hit"] else ""
        q = printable(r["question"])
        q = q if len(q) <= 60 else q[:59] + "…"
        click.echo(f"{r['run_id']}  {r['started_at']}  {shown:<10} {verdict:<12}{hit}  {q}")
    if not items:
        click.echo("no runs match" if _filtered(wanted) else "no runs yet", err=True)


def _filtered(f: Any) -> bool:
    return any((f.label, f.audit_mode, f.status, f.since, f.grep))


@click.command()
@click.argument("run_id")
@click.option("--db", "db_url", metavar="URL", help="Ledger database URL.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def show(run_id: str, db_url: str | None, as_json: bool) -> None:
    """Show a run: its answer, each claim's verdict and the label first, then every stage
    with its event and hashes, and the run DAG.

    Example: aborist show 3f2a9c1e
    """
    from aborist.pipeline.recorded import load_run

    settings = load_settings(db_url=db_url)
    with pipeline_ledger(settings.db_url) as lg, clean_errors():
        run = load_run(lg, run_id)
    label = run.payload(AnswerLabelled.TYPE)
    if as_json:
        from aborist.pipeline.show import run_json

        click.echo(json.dumps(run_json(run), indent=2, ensure_ascii=False))
        return
    click.echo(f"run {run.run_id}: {run.status}, {run.mode} mode")
    click.echo(printable(f"question: {run.question}"))
    print_outcome(run)
    click.echo("\nevents:")
    for e in run.events:
        click.echo(f"  {e.seq:>8}  {e.type:<24} payload {e.payload_hash[:16]}  event {e.hash[:16]}")
    if label:
        click.echo(
            f"run DAG ({len(label['run_dag']['nodes'])} stages), root {label['run_dag']['root']}"
        )
        for n in label["run_dag"]["nodes"]:
            click.echo(
                f"  {n['stage']:<22} stage {n['stage_hash'][:16]}  node {n['node_hash'][:16]}"
            )


@click.command()
@click.argument("run_id")
@click.option("--db", "db_url", metavar="URL", help="Ledger database URL.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def inspect(run_id: str, db_url: str | None, as_json: bool) -> None:
    """Diagnose each unverified span of a run's answer (read-only; changes nothing).

    Example: aborist inspect 3f2a9c1e --json
    """
    from aborist.pipeline.recorded import load_run
    from aborist.verify.inspect import inspect_answer
    from aborist.verify.verify import verify_answer

    settings = load_settings(db_url=db_url)
    with pipeline_ledger(settings.db_url) as lg, clean_errors():
        run = load_run(lg, run_id)
        raw = run.raw_answer(lg)
        if raw is None:
            raise click.ClickException(
                f"run {run.run_id} has no model answer to inspect ({run.status})"
            )
        evidence = run.evidence(lg)
        verdict = verify_answer(raw, evidence, question=run.question, mode=run.mode)
        report = inspect_answer(raw, evidence, verdict, question=run.question)
    data = report.to_dict()
    if as_json:
        click.echo(json.dumps({"run_id": run.run_id, **data}, indent=2, ensure_ascii=False))
        return
    click.echo(f"run {run.run_id}: {data['audit_mode']}")
    if not data["diagnoses"]:
        click.echo("every unit is verified verbatim: nothing to diagnose")
    for d in data["diagnoses"]:
        fix = "mechanical" if d["mechanical"] else "needs a re-prompt"
        click.echo(f"  line {d['line_no']}: {d['kind']} → {d['repair']} ({fix})")
        click.echo(printable(f"      {d['span'][:160]}"))
    deflection = data["deflection"]
    click.echo(f"deflection: {deflection['status']}")


COMMANDS = [query, ask, runs, show, inspect]
