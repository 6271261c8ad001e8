"""The run list behind ``GET /api/v1/runs`` and the ``/runs`` page: the ``runs`` read model
(:func:`aborist.projections.select_runs`, the one query over it), filtered, newest
first, paged by a cursor.

The cursor is the ``started_seq`` of the last run returned: the next page is the runs that
started before it, so a page is stable while new runs are being appended.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aborist.errors import InputError
from aborist.projections import RunFilter as RowsFilter
from aborist.projections import select_runs
from aborist.verify.ladder import AUDIT_MODES
from ledger.store import Ledger

__all__ = ["RUN_COLUMNS", "RunFilter", "list_runs"]

RUN_COLUMNS = (
    "run_id", "kind", "status", "mode", "cache_hit", "served_from_run_id", "audit_mode",
    "label", "started_at", "finished_at", "question", "failed_stage", "error", "run_dag_root",
    "started_seq",
)  # fmt: skip
_SINCE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?Z?)?")
MAX_LIMIT = 500
#: The values each filter can match (any case for the first two); anything else is a 400,
#: not an empty page that reads as "no such runs".
_CHOICES = {
    "label": ("VERIFIED", "SUPPORTED", "PARTIAL", "UNSUPPORTED"),
    "audit_mode": AUDIT_MODES,
    "status": ("started", "completed", "cached", "failed"),
}


@dataclass(frozen=True)
class RunFilter:
    label: str | None = None
    audit_mode: str | None = None
    status: str | None = None
    since: str | None = None  # an RFC 3339 UTC date or time: runs started at or after it
    text: str | None = None  # a substring of the question, case-insensitive
    limit: int = 50
    cursor: str | None = None


def _valid_since(value: str) -> bool:
    """An RFC 3339 UTC date or time that names a real day and time."""
    if not _SINCE.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.replace(" ", "T").replace("Z", "+00:00"))
    except ValueError:
        return False  # "2026-13-45" has the shape but names no day
    return True


def list_runs(ledger: Ledger, f: RunFilter) -> tuple[list[dict[str, Any]], str | None]:
    """One page of runs and the cursor of the next page (None on the last)."""
    if not 1 <= f.limit <= MAX_LIMIT:
        raise InputError(f"limit must be between 1 and {MAX_LIMIT}; found {f.limit}")
    for name, value in (("label", f.label), ("audit_mode", f.audit_mode), ("status", f.status)):
        known = _CHOICES[name]
        if value and (value if name == "status" else value.upper()) not in known:
            raise InputError(f"{name} must be one of {', '.join(known)}; found {value!r}")
    if f.since and not _valid_since(f.since):
        raise InputError(
            f"since must be an RFC 3339 UTC date or time such as 2026-12-01 or "
            f"2026-12-01T08:00:00Z; found {f.since!r}"
        )
    before: int | None = None
    if f.cursor:
        if not f.cursor.isdigit() or len(f.cursor) > 18:
            raise InputError(
                f"cursor must be the next_cursor of a previous page; found {f.cursor!r}"
            )
        before = int(f.cursor)
    wanted = RowsFilter(
        limit=f.limit + 1, label=f.label, audit_mode=f.audit_mode, status=f.status,
        since=f.since, grep=f.text, before_seq=before,
    )  # fmt: skip
    rows = select_runs(ledger, wanted, columns=RUN_COLUMNS, detail=False)
    items = rows[: f.limit]
    cursor = str(items[-1]["started_seq"]) if len(rows) > f.limit else None
    return items, cursor
