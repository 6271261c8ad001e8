"""How `aborist query`, `ask` and `show` print a run for a reader: the answer, its
sources, each claim's verdict and the label's rung; and the progress and summary lines of
a batch. Every text that came from a document or a model goes through
:func:`cli.term.printable`."""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

import click

from aborist.corpus.readers import describe_locator
from aborist.events import (
    AnswerLabelled,
    AnswerRendered,
    AnswerRepaired,
    AnswerVerified,
    RunCompleted,
    RunFailed,
)
from aborist.pipeline.run import RunResult
from aborist.pipeline.tail import label_rung
from aborist.verify.ladder import AUDIT_MODES, LADDER
from cli.marks import claim_mark
from cli.term import printable

if TYPE_CHECKING:
    from aborist.pipeline.batch import BatchSummary

__all__ = [
    "BatchProgress",
    "claim_lines",
    "print_outcome",
    "print_result",
    "rung_line",
    "source_line",
    "summary_lines",
]


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
    click.echo(f"\n{rung_line(result.audit_mode, result.label)}")
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


def rung_line(audit_mode: str, label: str) -> str:
    """``HYBRID · rung 2/4 SUPPORTED: …``: the recorded audit mode and label, and the rung
    the label names (:func:`aborist.pipeline.tail.label_rung`), the same for a fresh
    answer, a cache hit and ``aborist show``."""
    rung = label_rung(label)
    if rung is None:  # no rung's name (a ledger written by other code): shown as recorded
        return printable(f"{audit_mode} · {label}")
    _, name, meaning = LADDER[rung - 1]
    return f"{audit_mode} · rung {rung}/4 {name}: {meaning}"


class BatchProgress:
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


def summary_lines(s: BatchSummary, skipped: int) -> list[str]:
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


def print_outcome(run: Any) -> None:
    """What a reader wants first: the answer, each claim's verdict, the label."""
    rendered = run.payload(AnswerRendered.TYPE)
    completed = run.payload(RunCompleted.TYPE)
    failed = run.payload(RunFailed.TYPE)
    if rendered is not None:
        answer = rendered["answer"]
        click.echo("answer:")
        click.echo(printable(answer, multiline=True) if answer.strip()
                   else "(no answer: the model returned no text)")  # fmt: skip
        verified = run.payload(AnswerVerified.TYPE)
        verdict = None if run.payload(AnswerRepaired.TYPE) else (verified or {}).get("verdict")
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
    done = completed or run.payload(AnswerLabelled.TYPE)
    if done is not None and done.get("audit_mode") in AUDIT_MODES:
        click.echo(rung_line(done["audit_mode"], done.get("label")))
    if failed:
        click.echo(printable(
            f"failed at {failed['stage']}: {failed['error_type']}: {failed['message']}"
        ))  # fmt: skip
