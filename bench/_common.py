"""Helpers shared by the benchmark scripts in ``bench/``: medians of repeated runs, Markdown
tables, throwaway SQLite files and PostgreSQL schemas that are always cleaned up.

Benchmarks run on a shared, noisy machine, so every figure is the median of several runs,
and each database a run writes to is fresh (a copy of one migrated template for SQLite, a
new schema for PostgreSQL, dropped afterwards) so that no run inherits another's table size.
"""

from __future__ import annotations

import cProfile
import hashlib
import os
import platform
import pstats
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import SQLAlchemyError

from aborist.migrations import upgrade
from ledger.engine import ledger_engine

__all__ = [
    "DEFAULT_PG_URL",
    "Batch",
    "Comparison",
    "InPgSchema",
    "PgUnavailable",
    "SqliteFiles",
    "Stepper",
    "count",
    "environment_line",
    "event_payload",
    "markdown_table",
    "median",
    "migrate",
    "pg_connect_kwargs",
    "pg_schema",
    "pg_server_version",
    "profile_by_component",
    "time_interleaved",
    "time_rotated",
    "workload",
]

DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
EVENTS_PER_RUN_STREAM = 10  # one-per-transaction workloads: a pipeline run appends ~10 events
EVENT_TYPES = (
    "qa.run_started", "qa.cache_checked", "qa.retrieval_completed", "qa.context_assembled",
    "qa.prompt_built", "qa.model_answered", "qa.answer_verified", "qa.answer_labelled",
)  # fmt: skip

Batch = tuple[str, list[tuple[str, dict[str, Any]]]]
"""One append: (stream, [(event type, payload)])."""
_NUMBER = re.compile(r"[0-9][0-9,]*(\.[0-9]+)?x?|-|n/a")


class PgUnavailable(Exception):
    """The PostgreSQL server named on the command line cannot be used."""


def export_pyref(out: Path) -> list[tuple[str, str]]:
    """Python's language reference (``pydoc_data.topics``, shipped with CPython) written to
    ``out`` as one ``.rst`` file per topic, as ``scripts/export_pyref.py`` writes it; returns
    the (topic, text) pairs in file order, for the benchmarks to ask questions of."""
    from pydoc_data.topics import topics

    out.mkdir(parents=True, exist_ok=True)
    pairs = [(name, body.strip()) for name, body in sorted(topics.items())]
    for name, body in pairs:
        (out / f"{name}.rst").write_text(body + "\n", encoding="utf-8")
    return pairs


def median(samples: Sequence[float]) -> float:
    if not samples:
        raise ValueError("median of no samples")
    return float(statistics.median(samples))


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table; columns whose cells are all numbers align right."""
    columns = range(len(headers))
    widths = [max(len(headers[i]), *(len(r[i]) for r in rows)) for i in columns]
    right = [all(_NUMBER.fullmatch(r[i]) for r in rows) for i in columns]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cells[i].rjust(widths[i]) if right[i] else cells[i].ljust(widths[i]) for i in columns
        ]
        return "| " + " | ".join(padded) + " |"

    rule = (
        "|"
        + "|".join(
            "-" * (widths[i] + 1) + ":" if right[i] else "-" * (widths[i] + 2) for i in columns
        )
        + "|"
    )
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def migrate(url: str | URL, *, sqlite_synchronous: str = "NORMAL") -> None:
    """Bring a database to the ledger's head revision with the project's own migrations."""
    engine = ledger_engine(url, sqlite_synchronous=sqlite_synchronous)
    try:
        upgrade(engine)
    finally:
        engine.dispose()


class SqliteFiles:
    """Fresh migrated SQLite ledgers in one temporary directory, removed on exit.

    Migrating once and copying the file is what keeps setup cheap: every run starts from a
    byte-identical empty ledger with the real tables, indexes and triggers.
    """

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="aborist-ledger-bench-"))
        self._template = self.root / "template.db"
        migrate(f"sqlite:///{self._template}")
        self._count = 0

    def fresh(self, label: str) -> Path:
        self._count += 1
        path = self.root / f"{self._count:04d}-{label}.db"
        shutil.copyfile(self._template, path)
        return path

    def empty(self, label: str) -> Path:
        """A path for a database the caller creates itself (no ledger schema)."""
        self._count += 1
        return self.root / f"{self._count:04d}-{label}.db"

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> SqliteFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _admin_engine(url: str) -> Any:
    return create_engine(make_url(url), isolation_level="AUTOCOMMIT")


def pg_server_version(url: str) -> str:
    """The server's version string, or raise :class:`PgUnavailable` with the reason."""
    engine = _admin_engine(url)
    try:
        with engine.connect() as conn:
            return str(conn.execute(text("SHOW server_version")).scalar())
    except SQLAlchemyError as e:
        raise PgUnavailable(f"PostgreSQL at {_describe(url)} is unreachable: {_first(e)}") from e
    finally:
        engine.dispose()


@contextmanager
def pg_schema(url: str, *, migrated: bool = True) -> Iterator[tuple[str, str]]:
    """A new schema (dropped afterwards); yields (ledger URL bound to it, schema name)."""
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    engine = _admin_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    except SQLAlchemyError as e:
        engine.dispose()
        raise PgUnavailable(f"PostgreSQL at {_describe(url)}: {_first(e)}") from e
    try:
        schema_url = (
            make_url(url)
            .update_query_dict({"options": f"-csearch_path={schema}"})
            .render_as_string(hide_password=False)
        )
        if migrated:
            migrate(schema_url)
        yield schema_url, schema
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()


def pg_connect_kwargs(url: str, schema: str | None = None) -> dict[str, Any]:
    """Keyword arguments for ``psycopg.connect`` equivalent to a SQLAlchemy URL."""
    u = make_url(url)
    kwargs: dict[str, Any] = {"dbname": u.database, "user": u.username}
    if u.host:
        kwargs["host"] = u.host
    if u.port:
        kwargs["port"] = u.port
    if u.password:
        kwargs["password"] = u.password
    if schema is not None:
        kwargs["options"] = f"-csearch_path={schema}"
    return kwargs


def environment_line() -> str:
    """One line describing where the figures were measured."""
    load = ""
    if hasattr(os, "getloadavg"):
        load = " load avg " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"{os.cpu_count()} CPUs,{load}, {platform.system()} {platform.release()}, "
        f"argv: {' '.join(sys.argv[1:]) or '(defaults)'}"
    )


def _describe(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def _first(e: BaseException) -> str:
    msg = str(getattr(e, "orig", None) or e).strip()
    return msg.splitlines()[0] if msg else type(e).__name__


# -- ledger workloads ------------------------------------------------------------------------------


def event_payload(i: int) -> dict[str, Any]:
    """A realistic ~400-byte event payload (retrieval-stage shaped), distinct per event."""
    return {
        "run_id": str(uuid.UUID(int=i * 7919 + 1)),
        "question_hash": hashlib.sha256(f"q{i}".encode()).hexdigest(),
        "shard": "rust-book",
        "mode": "and" if i % 3 else "or",
        "chunks": [
            {"chunk_id": f"ch11-01#{i % 97}.{k}", "score": round(12.5 - k * 1.75 + i % 7 / 8, 3)}
            for k in range(3)
        ],
        "context_bytes": 40_000 + i % 20_000,
        "elapsed_ms": round(3.25 + (i % 50) / 16, 4),
        "title_filter": {"accepted": 3, "rejected": i % 5, "path": "title_token_overlap"},
    }


def workload(n_events: int, per_tx: int) -> list[Batch]:
    """``n_events`` events in transactions of ``per_tx``; one stream per pipeline run."""
    batches: list[Batch] = []
    for t in range(max(1, n_events // per_tx)):
        stream = f"run:{t // EVENTS_PER_RUN_STREAM if per_tx == 1 else t:06d}"
        first = t * per_tx
        events = [
            (EVENT_TYPES[(first + j) % len(EVENT_TYPES)], event_payload(first + j))
            for j in range(per_tx)
        ]
        batches.append((stream, events))
    return batches


def count(batches: Sequence[Batch]) -> int:
    return sum(len(evs) for _, evs in batches)


# -- paired comparisons ----------------------------------------------------------------------


@dataclass
class Comparison:
    """One row of a results table: our timings against one baseline's, same workload.

    ``ratio`` is median ours time / median baseline time, so lower is better and the
    target is an upper bound (``None``: shown for scale, no target).
    """

    case: str
    baseline: str
    items: int
    target: float | None
    ours: list[float] = field(default_factory=list)
    base: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return median(self.ours) / median(self.base)

    HEADERS = ("case", "ours ev/s", "baseline", "baseline ev/s", "ratio (time)", "target", "met?")

    def row(self) -> list[str]:
        ratio = self.ratio
        met = "n/a" if self.target is None else ("yes" if ratio <= self.target else "NO")
        return [
            self.case,
            f"{self.items / median(self.ours):,.0f}",
            self.baseline,
            f"{self.items / median(self.base):,.0f}",
            f"{ratio:.2f}x",
            "-" if self.target is None else f"<= {self.target:g}x",
            met,
        ]


def time_rotated(timers: Sequence[tuple[list[float], Callable[[], float]]], run: int) -> None:
    """Call each timer once and append its seconds to its list, starting with a different
    timer on every run so that neither side always runs first (warm caches, load drift)."""
    k = run % len(timers)
    for samples, timer in [*timers[k:], *timers[:k]]:
        samples.append(timer())


class Stepper(Protocol):
    """One contender of an interleaved comparison: set up by its factory (not timed), then
    asked to do unit of work ``i`` (timed), then closed (not timed)."""

    def step(self, i: int) -> None: ...

    def close(self) -> None: ...


def time_interleaved(
    contenders: Sequence[tuple[list[float], Callable[[], Stepper]]], steps: int, run: int
) -> None:
    """Run unit ``i`` of every contender back to back, for each ``i``, rotating who goes
    first, and append each contender's summed step time to its list.

    Interleaving unit by unit (not run by run) is what makes a ratio meaningful on a shared
    machine: a disk stall or another process's burst lands on every contender alike.

    A contender's ``close`` may check what it wrote (a baseline's chain); when a step
    failed, those checks would only report the half-written result and hide the failure,
    so then every contender is closed with its errors suppressed and the step's own
    exception propagates.
    """
    opened: list[tuple[list[float], Stepper]] = []
    try:
        for samples, factory in contenders:
            opened.append((samples, factory()))
        totals = [0.0] * len(opened)
        order = list(range(len(opened)))
        for i in range(steps):
            k = (i + run) % len(order)
            for j in order[k:] + order[:k]:
                start = time.perf_counter()
                opened[j][1].step(i)
                totals[j] += time.perf_counter() - start
    except BaseException:
        for _, stepper in reversed(opened):
            with suppress(BaseException):
                stepper.close()
        raise
    for _, stepper in reversed(opened):
        stepper.close()
    for (samples, _), total in zip(opened, totals, strict=True):
        samples.append(total)


class InPgSchema:
    """A :class:`Stepper` living in a fresh PostgreSQL schema, dropped when it closes.

    ``make(schema_url, schema)`` builds the inner stepper; ``before_drop(schema_url)``, if
    given, runs after it closes and before the schema goes (e.g. to check what it wrote).
    """

    def __init__(
        self,
        url: str,
        make: Callable[[str, str], Stepper],
        before_drop: Callable[[str], None] | None = None,
    ) -> None:
        self.stack, self.before_drop = ExitStack(), before_drop
        self.url, schema = self.stack.enter_context(pg_schema(url))
        try:
            self.inner = make(self.url, schema)
        except BaseException:
            self.stack.close()
            raise

    def step(self, i: int) -> None:
        self.inner.step(i)

    def close(self) -> None:
        with self.stack:
            self.inner.close()
            if self.before_drop is not None:
                self.before_drop(self.url)


# -- profiles --------------------------------------------------------------------------------


def profile_by_component(
    profiler: cProfile.Profile,
    items: int,
    components: Sequence[tuple[str, Sequence[str]]],
    *,
    top: int = 15,
) -> str:
    """Self time per item, grouped by component (first matching ``filename:function``
    substring), then the ``top`` functions by self time, as two Markdown tables."""
    entries: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = pstats.Stats(
        profiler
    ).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in entries.values())
    grouped: dict[str, float] = {}
    for (filename, _line, func), (_cc, _nc, self_time, _cum, _callers) in entries.items():
        where = f"{filename}:{func}"
        name = next(
            (label for label, keys in components if any(k in where for k in keys)),
            "other (builtins, contextlib, dataclasses, ...)",
        )
        grouped[name] = grouped.get(name, 0.0) + self_time
    per_item = 1e6 / items
    rows = [
        [name, f"{t * per_item:.1f}", f"{100 * t / total:.0f}%"]
        for name, t in sorted(grouped.items(), key=lambda kv: -kv[1])
    ]
    ranked = sorted(entries.items(), key=lambda kv: -kv[1][2])[:top]
    funcs = [
        [
            f"{Path(f).name}:{line}({fn})" if line else fn,
            f"{v[1]:,}",
            f"{v[2] * per_item:.1f}",
            f"{v[3] * per_item:.1f}",
        ]
        for (f, line, fn), v in ranked
    ]
    return "\n\n".join(
        [
            markdown_table(["component (self time)", "µs/event", "share"], rows),
            markdown_table(["function", "calls", "self µs/event", "cum µs/event"], funcs),
        ]
    )
