"""`aborist query`, `ask`, `runs`, `show`, `inspect`: answering on the ledger."""

from __future__ import annotations

import json
import sys
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from aborist.clients.base import ChatClient
from aborist.clients.select import MODEL_KINDS, llm_timeout, select_client
from aborist.corpus.readers import describe_locator
from aborist.pipeline.run import Governance, RunResult
from aborist.settings import Settings, load_settings
from aborist.verify.ladder import AUDIT_MODES, LADDER, ladder_rung
from cli.common import clean_errors, embedded_ledger, pipeline_ledger
from cli.marks import claim_mark
from cli.runs_export import write_export
from cli.term import printable

if TYPE_CHECKING:
    from aborist.pipeline.batch import BatchSummary

F = TypeVar("F", bound=Callable[..., Any])


def answer_options(f: F) -> F:
    options = [
        click.option("--db", "db_url", metavar="URL", help="Ledger database URL."),
        click.option(
            "--mode",
            type=click.Choice(["claim-lattice", "quote"]),
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
            type=click.FloatRange(min=0, min_open=True, max=86_400),
            metavar="SECONDS",
            help="Wait at most this long for each model answer, per attempt "
            "(ABORIST_LLM_TIMEOUT; default 120).",
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


def claim_lines(verdict: dict[str, Any]) -> list[str]:
    """One line per claim, marked as `aborist verify` marks them (✓ verified verbatim,
    ~ supported but not verbatim, ✗ unsupported), with the pointers it cites and why."""
    names: dict[str, str] = {}  # evidence id -> its first pointer (equal texts share an id)
    for e in verdict.get("evidence", []):
        names.setdefault(e["evidence_id"], e["pointer_id"])
    lines = []
    for u in verdict["units"]:
        pointers = u.get("pointer_ids") or [names.get(e, e) for e in u["evidence_ids"]]
        cited = list(dict.fromkeys(pointers))
        shown = ",".join(cited[:3]) + (f",+{len(cited) - 3}" if len(cited) > 3 else "")
        where = f" [{shown}]" if cited else ""
        why = "; ".join(u["reasons"])
        lines.append(printable(f"  {claim_mark(u['verified'], u['grade'])}{where}: {u['text']}"))
        if why:
            lines.append(printable(f"      - {why}"))
    for v in verdict["violations"]:
        if v["severity"] == "blocking" and v["unit"] is None:
            lines.append(printable(f"  ✗ {v['code']}: {v['detail']}"))
    return lines


def print_result(result: RunResult, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
        return
    if result.answer.strip():
        click.echo(printable(result.answer, multiline=True))
    else:
        click.echo("(no answer: the model returned no text)")
    if result.citations:
        click.echo("\nSources:")
        locators = {e["pointer_id"]: e.get("locator") for e in result.evidence}
        for c in result.citations:
            where = c["title"] or c["source_uri"]
            cited = source_line(where, c["source_uri"], locators.get(c["pointer_id"]))
            click.echo(printable(f"  [{c['pointer_id']}] {cited}  ({c['source_uri']})"))
            excerpt = " ".join(c["excerpt"].split())
            if len(excerpt) > 300:
                excerpt = excerpt[:297] + "…"
            click.echo(printable(f"       “{excerpt}”"))
    _print_closest(result)
    if result.verdict is not None and (result.verdict["units"] or result.verdict["violations"]):
        click.echo("\nClaims:")
        for line in claim_lines(result.verdict):
            click.echo(line)
    elif result.cache_hit:
        click.echo(f"\nClaims: checked when run {result.served_from_run_id} answered "
                   f"(aborist show {result.served_from_run_id})")  # fmt: skip
    rung = ladder_rung(result.audit_mode, _violations(result))
    _, name, meaning = LADDER[rung - 1]
    click.echo(f"\n{result.audit_mode} · rung {rung}/4 {name}: {meaning}")
    if result.pre_repair_audit_mode:
        click.echo(f"repaired: {result.pre_repair_audit_mode} → {result.audit_mode}")
    served = f" (cache hit: answer of run {result.served_from_run_id})" if result.cache_hit else ""
    click.echo(f"run {result.run_id}{served}")


def source_line(title: str, source_uri: str, locator: dict[str, Any] | None) -> str:
    """``Tracing — tracemonkey.pdf p. 6``: the title, the file's name and where in it."""
    name = urllib.parse.unquote(source_uri.rstrip("/").rsplit("/", 1)[-1])
    where = describe_locator(locator)
    return " ".join(part for part in (f"{title} — {name}" if name else title, where) if part)


def _print_closest(result: RunResult) -> None:
    """A refusal that names its closest passages (the extractive answerer's): show them."""
    from aborist.clients.extractive import closest_passages
    from aborist.verify.evidence import spotlight

    by_pointer = {e["pointer_id"]: e for e in result.evidence}
    shown = [by_pointer[p] for p in closest_passages(result.answer) if p in by_pointer]
    if not shown:
        return
    click.echo("\nClosest passages found (they do not answer the question):")
    for e in shown:
        where = source_line(e["title"] or e["source_uri"], e["source_uri"], e.get("locator"))
        click.echo(printable(f"  [{e['pointer_id']}] {where}  ({e['source_uri']})"))
        excerpt = " ".join(spotlight(e["text"], result.question, 300).split())
        click.echo(printable(f"       “{excerpt}”"))


def _violations(result: RunResult) -> list[Any]:
    if result.verdict is not None:
        return list(result.verdict["violations"])
    # A cache hit: the label was computed when the answer was; keep its rung.
    return [{"severity": "blocking"}] if result.label == "PARTIAL" else []


class _Progress:
    """One self-overwriting progress line on stderr, at most five times a second."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.last = 0.0
        self.started = time.monotonic()

    def __call__(self, s: BatchSummary, *, final: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not final and now - self.last < 0.2):
            return
        self.last = now
        elapsed = max(now - self.started, 1e-9)
        rate = s.done / elapsed
        left = s.total - s.done
        eta = f"{int(left / rate) // 60}:{int(left / rate) % 60:02d}" if rate > 0 else "?"
        line = (
            f"{s.done}/{s.total}  answered {s.answered} · cached {s.cached} · failed {s.failed}"
            f"  {rate:.1f} q/s  ETA {eta}"
        )
        click.echo("\r" + line.ljust(78), err=True, nl=final)


def _summary_lines(s: BatchSummary, skipped: int) -> list[str]:
    lines = [
        f"batch: {s.total} questions, {s.answered} answered ({s.cached} from the cache), "
        f"{s.failed} failed, {s.not_attempted} not attempted, {skipped} input lines skipped; "
        f"{s.done / max(s.seconds, 1e-9):.1f} questions/s over {s.seconds:.1f} s with "
        f"{s.workers} worker{'s' if s.workers != 1 else ''}"
    ]
    for (mode, label), n in sorted(s.by_label.items()):
        lines.append(f"  {mode:<10} {label:<14} {n}")
    if s.stopped:
        lines.append(s.stopped)
    return lines


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
        timeout = opts["llm_timeout"] or llm_timeout(settings.llm_timeout)
    spec = ClientSpec(
        opts["model_kind"], opts["base_url"], opts["llm_model"], opts["api_key"], timeout=timeout
    )
    progress = _Progress(sys.stderr.isatty())
    if output is not None and output.exists() and output.resolve() == path.resolve():
        raise click.ClickException(
            f"the output file {output} is the questions file: answers would overwrite the "
            "questions; choose another -o"
        )
    try:
        sink = output.open("w", encoding="utf-8") if output is not None else sys.stdout
    except OSError as e:
        raise click.ClickException(f"cannot write {output}: {e}") from e

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
    for line in _summary_lines(summary, len(problems)):
        click.echo(line, err=True)
    if not summary.ok:
        raise SystemExit(1)


@click.command()
@click.argument("question", required=False)
@click.option("--shard", "shards", multiple=True, help="Shard to search (repeatable; default all).")
@click.option(
    "--batch",
    "batch_path",
    type=click.Path(path_type=Path, dir_okay=False),
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
    type=click.Path(path_type=Path, dir_okay=False),
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


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.argument("question")
@answer_options
def ask(path: Path, question: str, **opts: Any) -> None:
    """Answer QUESTION from the one document at PATH, and record every step.

    Example: aborist ask policy.md "Who approves exceptions?"
    """
    from aborist.pipeline.ask import ask as run_ask

    settings = load_settings(db_url=opts["db_url"])
    client = _client(settings, opts)
    with client, pipeline_ledger(opts["db_url"], create=True) as lg, clean_errors():
        result = run_ask(
            path, question, ledger=lg, client=client, governance=_governance(opts),
            use_cache=not opts["no_cache"],
        )  # fmt: skip
    print_result(result, opts["as_json"])


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
    wanted = RunFilter(
        limit=limit, label=label, audit_mode=audit_mode,
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
    label = run.payload("qa.answer_labelled")
    if as_json:
        from aborist.pipeline.show import run_json

        click.echo(json.dumps(run_json(run), indent=2, ensure_ascii=False))
        return
    click.echo(f"run {run.run_id}: {run.status}, {run.mode} mode")
    click.echo(printable(f"question: {run.question}"))
    _print_outcome(run)
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


def _print_outcome(run: Any) -> None:
    """What a reader wants first: the answer, each claim's verdict, the label."""
    rendered = run.payload("qa.answer_rendered")
    completed = run.payload("qa.run_completed")
    failed = run.payload("qa.run_failed")
    if rendered is not None:
        answer = rendered["answer"]
        click.echo("answer:")
        click.echo(printable(answer, multiline=True) if answer.strip()
                   else "(no answer: the model returned no text)")  # fmt: skip
        verified = run.payload("qa.answer_verified")
        verdict = None if run.payload("qa.answer_repaired") else (verified or {}).get("verdict")
        if verdict is not None and verdict.get("units"):
            click.echo("claims:")
            for line in claim_lines(verdict):
                click.echo(line)
        elif rendered["units"]:
            click.echo("claims:")
            for u in rendered["units"]:
                click.echo(printable(f"  {claim_mark(u['verified'], u['grade'])}: {u['text']}"))
    elif completed is not None and completed.get("served_from_run_id"):
        served = completed["served_from_run_id"]
        click.echo(f"answer: served from the cache, run {served} (aborist show {served})")
    done = completed or run.payload("qa.answer_labelled")
    if done is not None and done.get("audit_mode") in AUDIT_MODES:
        violations = (
            (run.payload("qa.answer_verified") or {}).get("verdict", {}).get("violations", [])
        )
        blocked = [{"severity": "blocking"}] if done.get("label") == "PARTIAL" else violations
        rung = ladder_rung(done["audit_mode"], blocked)
        _, name, meaning = LADDER[rung - 1]
        click.echo(f"{done['audit_mode']} · rung {rung}/4 {name}: {meaning}")
    if failed:
        click.echo(printable(
            f"failed at {failed['stage']}: {failed['error_type']}: {failed['message']}"
        ))  # fmt: skip


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
