"""The run list behind ``GET /api/v1/runs`` and the ``/runs`` page: the ``runs`` read model
(:mod:`aborist.projections`), filtered, newest first, paged by a cursor.

The cursor is the ``started_seq`` of the last run returned: the next page is the runs that
started before it, so a page is stable while new runs are being appended.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aborist.errors import InputError
from ledger.store import Ledger

__all__ = ["RUN_COLUMNS", "RunFilter", "list_runs"]

RUN_COLUMNS = (
    "run_id", "kind", "status", "mode", "cache_hit", "served_from_run_id", "audit_mode",
    "label", "started_at", "finished_at", "question", "failed_stage", "error", "run_dag_root",
    "started_seq",
)  # fmt: skip
_SINCE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?Z?)?")
MAX_LIMIT = 500


@dataclass(frozen=True)
class RunFilter:
    label: str | None = None
    audit_mode: str | None = None
    status: str | None = None
    since: str | None = None  # an RFC 3339 UTC date or time: runs started at or after it
    text: str | None = None  # a substring of the question, case-insensitive
    limit: int = 50
    cursor: str | None = None


def _like(text: str) -> str:
    return "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def list_runs(ledger: Ledger, f: RunFilter) -> tuple[list[dict[str, Any]], str | None]:
    """One page of runs and the cursor of the next page (None on the last)."""
    if not 1 <= f.limit <= MAX_LIMIT:
        raise InputError(f"limit must be between 1 and {MAX_LIMIT}; found {f.limit}")
    where: list[str] = []
    params: dict[str, Any] = {"n": f.limit + 1}
    for column in ("label", "audit_mode", "status"):
        value = getattr(f, column)
        if value:
            where.append(f"{column} = :{column}")
            params[column] = value
    if f.since:
        if not _SINCE.fullmatch(f.since):
            raise InputError(
                f"since must be an RFC 3339 UTC date or time such as 2026-12-01 or "
                f"2026-12-01T08:00:00Z; found {f.since!r}"
            )
        where.append("started_at >= :since")
        params["since"] = f.since.replace(" ", "T")
    if f.text:
        where.append("LOWER(question) LIKE :text ESCAPE '\\'")
        params["text"] = _like(f.text)
    if f.cursor:
        if not f.cursor.isdigit() or len(f.cursor) > 18:
            raise InputError(
                f"cursor must be the next_cursor of a previous page; found {f.cursor!r}"
            )
        where.append("started_seq < :cursor")
        params["cursor"] = int(f.cursor)
    sql = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY started_seq DESC LIMIT :n"
    rows = ledger.fetch(sql, params)
    items = [dict(zip(RUN_COLUMNS, r, strict=True)) for r in rows[: f.limit]]
    for item in items:  # SQLite hands a boolean column back as 0/1; PostgreSQL as a bool
        item["cache_hit"] = bool(item["cache_hit"])
    cursor = str(items[-1]["started_seq"]) if len(rows) > f.limit else None
    return items, cursor
