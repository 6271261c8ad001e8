"""``aborist runs --format csv|jsonl``: past runs as rows a spreadsheet or a script reads.

CSV cells are neutralised against formula injection (OWASP's rule): a cell that begins
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written with a single
quote in front, so a spreadsheet shows it as text instead of evaluating it. Questions
and answers are user and model text, and a question such as ``=HYPERLINK("http://…")``
must not become a live formula on the auditor's machine. JSON Lines is exact."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import click

__all__ = ["FORMULA_STARTS", "csv_cell", "write_export"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

_FIELDS = ("run_id", "started_at", "status", "audit_mode", "label", "question",
           "answer", "sources")  # fmt: skip


def csv_cell(value: object) -> str:
    """``value`` as a CSV cell a spreadsheet will not evaluate (``None`` → empty)."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _sources(citations: list[dict[str, Any]] | None) -> str:
    """A run's sources on one line: ``E1 title (uri, locator); E2 …``."""
    out = []
    for c in citations or []:
        where = ", ".join(str(x) for x in (c.get("source_uri"), c.get("locator")) if x)
        out.append(f"{c.get('pointer_id')} {c.get('title') or c.get('source_uri')} ({where})")
    return "; ".join(out)


def _row(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "run_id": r["run_id"], "started_at": r["started_at"], "status": r["status"],
        "audit_mode": r["audit_mode"], "label": r["label"], "question": r["question"],
        "answer": r["answer"], "sources": r["citations"] or [],
    }  # fmt: skip


def write_export(items: list[dict[str, Any]], fmt: str) -> None:
    """Print ``items`` (runs as :func:`aborist.projections.select_runs` gives them)."""
    if fmt == "jsonl":
        for r in items:
            click.echo(json.dumps(_row(r), ensure_ascii=False, sort_keys=True))
        return
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(_FIELDS)
    for r in items:
        row = _row(r)
        row["sources"] = _sources(r["citations"])
        writer.writerow([csv_cell(row[k]) for k in _FIELDS])
    click.echo(buf.getvalue(), nl=False)
