"""`aborist verify`: check an answer produced anywhere against evidence files.

A thin click layer over :func:`aborist.verify.verify.verify_answer`. Single mode reads one
answer file and one or more evidence files (each file is one evidence object, ``E1``, ``E2``
… in the order given); batch mode reads JSON Lines and writes one JSON line per input line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from aborist.errors import AboristError, InputError, json_kind
from aborist.verify.evidence import EvidenceObject, build_evidence
from aborist.verify.inspect import InspectReport, inspect_answer
from aborist.verify.ladder import LADDER
from aborist.verify.verify import MODES, Verdict, verify_answer
from cli.common import PathArg
from cli.marks import claim_mark
from cli.term import printable
from ledger.jsonsafe import JSONRefusedError, parse_json

__all__ = ["MAX_EVIDENCE_ITEMS", "MAX_TEXT_CHARS", "verify", "verify_batch_line"]

#: The longest answer, and the longest evidence text, verified: what ``aborist serve``'s
#: ``POST /api/v1/verify`` accepts and the pipeline verifies of a model's answer
#: (tests/test_cli_verify.py holds the three equal). The verifier's time grows faster than
#: the text (a megabyte of short sentences as one evidence took 40 s); a file past this is
#: refused at once instead of holding the terminal for minutes or hours.
MAX_TEXT_CHARS = 200_000
#: At most this many evidence objects per answer (as ``POST /api/v1/verify``).
MAX_EVIDENCE_ITEMS = 200


_SPLIT = " (split it into several, or ingest it and use `aborist query`)"


def _too_long(what: str, n: str, hint: str = "") -> InputError:
    return InputError(
        f"{what} is {n} characters long; at most {MAX_TEXT_CHARS:,} are verified{hint}"
    )


def _read_text(path: Path, what: str, limit: int | None = MAX_TEXT_CHARS) -> str:
    """The file's text (UTF-8), at most ``limit`` characters, read no further than that."""
    try:
        with path.open(encoding="utf-8") as f:
            text = f.read() if limit is None else f.read(limit + 1)
    except FileNotFoundError as e:
        raise InputError(f"{what} file not found: {path}") from e
    except UnicodeDecodeError as e:
        raise InputError(f"cannot read {what} file {path}: not UTF-8 text ({e})") from e
    except OSError as e:
        raise InputError(f"cannot read {what} file {path}: {e.strerror or e}") from e
    if limit is not None and len(text) > limit:
        hint = _SPLIT if what == "evidence" else ""
        raise _too_long(f"the {what} file {path}", f"more than {limit:,}", hint)
    return text


def _check_sizes(answer: str, items: list[Any]) -> None:
    """The bounds of ``POST /api/v1/verify`` on one batch record."""
    if len(answer) > MAX_TEXT_CHARS:
        raise _too_long("'answer'", f"{len(answer):,}")
    if len(items) > MAX_EVIDENCE_ITEMS:
        raise InputError(f"'evidence' has {len(items)} items; at most {MAX_EVIDENCE_ITEMS}")
    for n, item in enumerate(items, start=1):
        text = item.get("text") if isinstance(item, dict) else item
        if isinstance(text, str) and len(text) > MAX_TEXT_CHARS:
            raise _too_long(f"evidence {n}", f"{len(text):,}", _SPLIT)


def _batch_output(record_id: Any, verdict: Verdict) -> dict[str, Any]:
    full = verdict.to_dict()
    return {
        "id": record_id,
        "audit_mode": full["audit_mode"],
        "label": full["label"],
        "rung": full["rung"],
        "units": full["units"],
        "violations": full["violations"],
        "verifier_version": full["verifier_version"],
        "verifier_policy_hash": full["verifier_policy_hash"],
    }


def verify_batch_line(line: str, default_mode: str) -> dict[str, Any]:
    """Verify one JSON Lines record; raises :class:`InputError` when it is malformed."""
    try:
        record = parse_json(line, what="the record")
    except JSONRefusedError as e:
        raise InputError(e.reason) from e
    if not isinstance(record, dict):
        raise InputError("expected a JSON object")
    if "id" not in record:
        raise InputError("missing 'id'")
    if "answer" not in record:
        raise InputError("missing 'answer'")
    answer = record["answer"]
    if not isinstance(answer, str):
        raise InputError(f"'answer' must be a string; found {json_kind(answer)}")
    items = record.get("evidence")
    if not isinstance(items, list) or not items:
        raise InputError("'evidence' must be a non-empty list of texts or objects")
    question = record.get("question")
    if question is not None and not isinstance(question, str):
        raise InputError(f"'question' must be a string; found {json_kind(question)}")
    mode = record.get("mode", default_mode)
    if mode not in MODES:
        raise InputError(f"'mode' must be one of {', '.join(MODES)}; found {mode!r}")
    _check_sizes(answer, items)
    try:
        line.encode("utf-8")
        json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError("contains a lone surrogate escape (not valid Unicode text)") from e
    except ValueError as e:  # 1e999 parses as inf, which no JSON output line can hold
        raise InputError("holds a number too large for JSON (it overflows to infinity)") from e
    evidence = build_evidence(items)
    verdict = verify_answer(answer, evidence, question=question, mode=mode)
    return _batch_output(record["id"], verdict)


def _read_lines(path: Path) -> tuple[list[str], set[int]]:
    """The batch file's lines (JSON Lines: split at ``\n`` only, each decoded on its own),
    and the numbers of the lines that are not UTF-8."""
    from aborist.pipeline.batch import read_jsonl

    lines, undecodable = read_jsonl(path, "batch")  # a missing file: one line, from there
    return lines, set(undecodable)


def _run_batch(path: Path, mode: str) -> None:
    lines, undecodable = _read_lines(path)
    bad = 0
    for line_no, line in enumerate(lines, start=1):
        if line_no in undecodable:
            bad += 1
            click.echo(f"line {line_no}: not UTF-8 text", err=True)
            continue
        if not line.strip():
            continue
        try:
            out = verify_batch_line(line, mode)
        except AboristError as e:
            bad += 1
            click.echo(printable(f"line {line_no}: {e}"), err=True)
            continue
        click.echo(json.dumps(out, ensure_ascii=False, sort_keys=True))
    if bad:
        raise click.ClickException(f"{bad} malformed line(s) in {path}; the others were verified")


def _print_human(verdict: Verdict, evidence: list[EvidenceObject]) -> None:
    meaning = LADDER[verdict.rung - 1][2]
    click.echo(
        f"{verdict.label}  (rung {verdict.rung}/4, audit_mode {verdict.audit_mode}, "
        f"{verdict.mode} mode)"
    )
    click.echo(f"  checked: {meaning}")
    click.echo(
        f"verified {verdict.n_verified}/{verdict.n_units} units, {verdict.n_verbatim} verbatim"
    )
    names = {ev.evidence_id: ev.pointer_id for ev in evidence}
    for unit in verdict.units:
        mark = claim_mark(unit.verified, unit.grade)
        cited = ",".join(names.get(e, e) for e in unit.evidence_ids)
        where = f" [{cited}]" if cited else ""
        click.echo(
            printable(
                f"  {mark} {unit.index + 1}. {unit.strategy}/{unit.grade}{where}: {unit.text}"
            )
        )
        for reason in unit.reasons:
            click.echo(printable(f"       - {reason}"))
    blocking = [v for v in verdict.violations if v.severity == "blocking"]
    if blocking:
        click.echo("violations:")
        for v in blocking:
            where = "-" if v.unit is None else str(v.unit + 1)
            click.echo(printable(f"  {v.code} (unit {where}): {v.detail}"))


def _print_inspect(report: InspectReport) -> None:
    click.echo("inspect:")
    for d in report.diagnoses:
        how = "mechanical" if d.mechanical else "manual"
        click.echo(printable(f"  unit {d.unit + 1}: {d.kind} -> {d.repair} ({how}): {d.span}"))
    click.echo(printable(f"  deflection: {report.deflection.status}"))


@click.command("verify")
@click.option("--answer", "answer_path", type=PathArg(path_type=Path), help="Answer text file.")
@click.option(
    "--evidence",
    "evidence_paths",
    type=PathArg(path_type=Path),
    multiple=True,
    help="Evidence file; repeat for E1, E2, … in order.",
)
@click.option("--question", default=None, help="The question (switches the anchor warrants on).")
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="quote",
    show_default=True,
    help="quote: prose answer; claim-lattice: one claim per line with [E#] tags.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the full verdict as JSON.")
@click.option(
    "--inspect",
    "with_inspect",
    is_flag=True,
    help="Add the inspect sidecar: a diagnosis and repair action per non-verbatim span.",
)
@click.option(
    "--batch",
    "batch_path",
    type=PathArg(path_type=Path),
    default=None,
    help='JSON Lines: {"id","question"?,"answer","evidence":[...],"mode"?} per line.',
)
def verify(
    answer_path: Path | None,
    evidence_paths: tuple[Path, ...],
    question: str | None,
    mode: str,
    as_json: bool,
    with_inspect: bool,
    batch_path: Path | None,
) -> None:
    """Verify an answer against evidence with the deterministic lexical verifier.

    Labels the answer VERIFIED / SUPPORTED / PARTIAL / UNSUPPORTED (rung 1-4; audit_mode
    STRICT, HYBRID or UNGROUNDED). What each rung checked, lexically: 1, every claim occurs
    word for word inside one sentence of the evidence, with its polarity (a short answer's
    sentence also shares a term with the question); 2, every claim's words, polarity and
    numbers were found together in one sentence (or each clause in one), in order; 3, some claim's
    were not; 4, no claim's were (a claim whose words are there with the other polarity is
    rung 4 too). The rules are in docs/verifier.md. An answer or evidence text longer than
    200,000 characters, or more than 200 evidence objects, is refused (as `aborist serve`
    refuses them).

    Example: aborist verify --answer answer.txt --evidence policy.txt --question "Who?"

    Example: aborist verify --batch answers.jsonl > verdicts.jsonl
    """
    try:
        if batch_path is not None:
            if answer_path is not None or evidence_paths:
                raise InputError("--batch cannot be combined with --answer or --evidence")
            _run_batch(batch_path, mode)
            return
        if answer_path is None or not evidence_paths:
            raise InputError(
                "give --answer FILE and at least one --evidence FILE (or --batch FILE)"
            )
        if len(evidence_paths) > MAX_EVIDENCE_ITEMS:
            raise InputError(f"at most {MAX_EVIDENCE_ITEMS} --evidence files; found "
                             f"{len(evidence_paths)}")  # fmt: skip
        answer = _read_text(answer_path, "answer")
        items = [
            {"text": _read_text(p, "evidence"), "source_uri": str(p), "title": p.name}
            for p in evidence_paths
        ]
        evidence = build_evidence(items)
        verdict = verify_answer(answer, evidence, question=question, mode=mode)
    except AboristError as e:
        raise click.ClickException(str(e)) from e
    report = inspect_answer(answer, evidence, verdict, question=question) if with_inspect else None
    if as_json:
        out = verdict.to_dict()
        if report is not None:
            out["inspect"] = report.to_dict()
        click.echo(json.dumps(out, ensure_ascii=False, sort_keys=True, indent=2))
        return
    _print_human(verdict, evidence)
    if report is not None:
        _print_inspect(report)
