"""Batch answering: a questionnaire of many questions, answered by N worker processes into
one ledger (docs/batch.md).

Each question is one ordinary run (:func:`aborist.pipeline.run.execute_run`) with a run id
chosen here, up front, so the output line of a question that fails names the run that
failed. Workers are separate processes (``spawn``), each with its own ledger connection,
model client and shard readers, opened once; the ledger's own ordering lock (SQLite's
write lock, PostgreSQL's advisory lock) keeps one gapless chain however many append.

Workers talk to the parent over one pipe each, one question at a time: no queue lock is
shared between processes, so a worker killed at any moment cannot wedge the others. A
dead worker's question is reported as not finished, the survivors answer the rest, and
the batch ends non-zero. A question that fails (the model server down, a missing shard,
the database gone for a moment) is reported and the batch goes on; after
:data:`LEDGER_FAILURE_LIMIT` questions in a row that the ledger refused, the batch stops,
since a read-only or full database will refuse every one that follows.

Results are handed to ``on_result`` in input order (later answers wait in a buffer for
earlier ones), so an answers file lines up with its questions file.
"""

from __future__ import annotations

import io
import multiprocessing as mp
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, BinaryIO

from aborist.clients.base import ChatClient
from aborist.errors import AboristError, InputError, has_question, json_kind
from aborist.events import RunFailed, run_stream
from aborist.pipeline.query import ShardSource
from aborist.pipeline.run import Governance, execute_run
from ledger.errors import LedgerError
from ledger.jsonsafe import JSONRefusedError, parse_json
from ledger.store import Ledger

__all__ = [
    "LEDGER_FAILURE_LIMIT",
    "MAX_LINE_BYTES",
    "BatchItem",
    "BatchSummary",
    "ClientSpec",
    "LineProblem",
    "jsonl_lines",
    "parse_questions",
    "read_jsonl",
    "read_questions",
    "run_batch",
]

#: Questions in a row the ledger refused before the batch stops attempting the rest.
LEDGER_FAILURE_LIMIT = 10
_POLL_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One input question, with the run id it will be answered under."""

    id: str
    question: str
    line_no: int
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(frozen=True, slots=True)
class LineProblem:
    line_no: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line_no}: {self.message}; skipped"


def _not_json(reason: str) -> str:
    """``not JSON (why)`` from a :func:`parse_json` refusal of "the line"."""
    if reason.startswith("the line is not valid JSON"):
        return "not JSON" + reason.removeprefix("the line is not valid JSON")
    return "not JSON: " + reason.removeprefix("the line ")


def parse_questions(lines: Iterable[str]) -> tuple[list[BatchItem], list[LineProblem]]:
    """Items from JSON lines ``{"id": "...", "question": "..."}``; blank lines are ignored,
    and a malformed line (bad JSON, no question or one that is not a string, an id that
    is not a string, a repeated id, a lone surrogate escape) becomes a :class:`LineProblem`
    instead of an item. An absent id is the line number."""
    items: list[BatchItem] = []
    problems: list[LineProblem] = []
    seen: dict[str, int] = {}
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:  # bounded: a line nested 100,000 deep is a problem, not a RecursionError
            obj = parse_json(line, what="the line")
        except JSONRefusedError as e:
            problems.append(LineProblem(line_no, _not_json(e.reason)))
            continue
        if not isinstance(obj, dict):
            problems.append(LineProblem(line_no, "expected a JSON object with a question"))
            continue
        question = obj.get("question")
        if "question" in obj and not isinstance(question, str):
            problems.append(LineProblem(line_no, "the question must be a string; found "
                                                 f"{json_kind(question)}"))  # fmt: skip
            continue
        if not has_question(question):
            problems.append(LineProblem(line_no, "missing or empty question"))
            continue
        if "\x00" in question:
            problems.append(LineProblem(line_no, "the question contains a NUL character"))
            continue
        qid = obj.get("id", str(line_no))
        if not isinstance(qid, str) or not qid:
            problems.append(LineProblem(line_no, f"id must be a non-empty string, not {qid!r}"))
            continue
        if qid in seen:
            problems.append(LineProblem(line_no, f"duplicate id {qid!r} (first on line "
                                                 f"{seen[qid]})"))  # fmt: skip
            continue
        try:  # a JSON \ud800 escape decodes to a lone surrogate: no text can hold it
            qid.encode("utf-8")
            question.encode("utf-8")
        except UnicodeEncodeError:
            problems.append(
                LineProblem(line_no, "contains a lone surrogate escape (not valid Unicode text)")
            )
            continue
        seen[qid] = line_no
        items.append(BatchItem(qid, question, line_no))
    return items, problems


def read_questions(path: Path) -> tuple[list[BatchItem], list[LineProblem]]:
    """The questions of a JSON Lines file (:func:`read_jsonl`). A line that is not UTF-8
    is a :class:`LineProblem`, as any other malformed line is; the others are read."""
    lines, undecodable = read_jsonl(path, "questions")
    items, problems = parse_questions(lines)
    bad = [LineProblem(n, "not UTF-8 text") for n in undecodable]
    return items, sorted([*problems, *bad], key=lambda p: p.line_no)


#: The longest line a batch file may hold: past it (``/dev/zero`` has no line end at all)
#: the file is refused before more of it is held in memory.
MAX_LINE_BYTES = 64 * 1024 * 1024


def read_jsonl(path: Path, what: str) -> tuple[list[str], list[int]]:
    """A JSON Lines file read line by line (:func:`jsonl_lines`); a line longer than
    :data:`MAX_LINE_BYTES` refuses the file (:class:`InputError`), as a file that cannot
    be read does, and so does a carriage return that does not end a line: JSON Lines ends
    lines with ``\n`` (or ``\r\n``), and a file whose lines end with a bare ``\r`` (old Mac)
    was read as one line. Not split at ``\r``: outside a string a ``\r`` is JSON
    whitespace, so splitting there could cut a valid record in two."""
    try:
        with path.open("rb") as f:
            return jsonl_lines(_bounded_lines(f, f"the {what} file {path}"))
    except OSError as e:
        raise InputError(f"cannot read {what} file {path}: {e.strerror or e}") from e


def _bounded_lines(f: BinaryIO, where: str) -> Iterator[bytes]:
    n = 0
    while raw := f.readline(MAX_LINE_BYTES + 1):
        n += 1
        if b"\r" in raw.removesuffix(b"\n").removesuffix(b"\r"):
            raise InputError(
                f"line {n} of {where} holds a carriage return (\\r) that does not end the "
                "line: JSON Lines ends lines with \\n or \\r\\n, and a file whose lines end "
                "with \\r alone is not read (convert it: tr '\\r' '\\n'); nothing was run"
            )
        if len(raw.removesuffix(b"\n")) > MAX_LINE_BYTES:
            raise InputError(
                f"line {n} of {where} is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB "
                "(no line end); nothing was run"
            )
        yield raw


def jsonl_lines(data: bytes | Iterable[bytes]) -> tuple[list[str], list[int]]:
    """The lines of JSON Lines (bytes, or byte lines as a binary file gives them) as text,
    and the (1-based) numbers of those that are not UTF-8, which stand as empty lines so
    the numbers of the others are kept. Only ``\n`` ends a line (a ``\r`` before it is
    dropped; a U+2028 inside a JSON string is text, not a line break); a byte-order mark
    opening the first line, as some editors write, is dropped."""
    lines = io.BytesIO(data) if isinstance(data, bytes) else data
    out: list[str] = []
    bad: list[int] = []
    for n, raw in enumerate(lines, start=1):
        line = raw.removesuffix(b"\n").removesuffix(b"\r")
        try:
            out.append((line.removeprefix(b"\xef\xbb\xbf") if n == 1 else line).decode("utf-8"))
        except UnicodeDecodeError:
            out.append("")
            bad.append(n)
    return out, bad


@dataclass(frozen=True, slots=True)
class ClientSpec:
    """How each worker builds its model client (a client itself cannot cross processes).

    ``kind`` None: openai when an endpoint is configured, else extractive (as ``aborist
    query``). ``timeout`` (seconds) and ``max_attempts`` override the HTTP client's defaults.
    """

    kind: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout: float | None = None
    max_attempts: int | None = None

    def build(self) -> ChatClient:
        from aborist.clients.select import select_client
        from aborist.settings import load_settings

        settings = load_settings()
        tuned = self.timeout is not None or self.max_attempts is not None
        resolved = self.kind or ("openai" if (self.base_url or settings.llm_base_url) else None)
        if resolved == "openai" and tuned:
            from aborist.clients.openai import OpenAICompatibleClient

            return OpenAICompatibleClient.from_settings(
                settings, base_url=self.base_url, model=self.model, api_key=self.api_key,
                timeout=self.timeout, max_attempts=self.max_attempts,
            )  # fmt: skip
        return select_client(
            self.kind, settings, base_url=self.base_url, model=self.model, api_key=self.api_key
        )


@dataclass(frozen=True, slots=True)
class _Config:
    db_url: str
    shards_dir: Path
    shards: tuple[str, ...]
    governance: Governance
    client: ClientSpec
    use_cache: bool
    allow_unrecorded_shards: bool = False


class _Answerer:
    """What one worker holds for the whole batch: its ledger, client and shard readers."""

    def __init__(self, config: _Config, ledger: Ledger | None = None) -> None:
        from aborist.projections import open_ledger

        self.config = config
        self.client = config.client.build()
        try:
            self.ledger = ledger if ledger is not None else open_ledger(config.db_url)
        except BaseException:
            self.client.close()
            raise
        self._own_ledger = ledger is None
        self.source = ShardSource(list(config.shards) or None, config.shards_dir)

    def answer(self, item: BatchItem) -> dict[str, Any]:
        """The output line for ``item``: the run's JSON plus ``id``, or the failure."""
        try:
            result = execute_run(
                item.question, self.source, ledger=self.ledger, client=self.client,
                governance=self.config.governance, use_cache=self.config.use_cache,
                allow_unrecorded_shards=self.config.allow_unrecorded_shards,
                run_id=item.run_id,
            )  # fmt: skip
        except Exception as e:  # reported per question; execute_run recorded what it could
            recorded, stage = self._recorded(item.run_id)
            return {
                "id": item.id, "question": item.question,
                "run_id": item.run_id if recorded else None,  # no event: no run to show
                "error": f"{type(e).__name__}: {e}", "error_type": type(e).__name__,
                "ledger_error": isinstance(e, LedgerError),
                "failed_stage": stage,
            }  # fmt: skip
        return {"id": item.id, **result.to_json()}

    def _recorded(self, run_id: str) -> tuple[bool, str | None]:
        """Whether the run has any event (a question refused before it started has none),
        and the stage its ``qa.run_failed`` names. A ledger that cannot be read: the run
        is named (it may exist), with no stage."""
        try:
            events = self.ledger.read_stream(run_stream(run_id))
        except LedgerError:
            return True, None
        if events and events[-1].type == RunFailed.TYPE:
            return True, str(events[-1].data["stage"])
        return bool(events), None

    def close(self) -> None:
        self.source.close()
        self.client.close()
        if self._own_ledger:
            self.ledger.close()


def _worker_main(conn: Connection, config: _Config) -> None:
    """A worker process: ("ready" | "fatal", message), then one ("done", index, line) per
    (index, item) received, until it receives None."""
    try:
        answerer = _Answerer(config)
    except (AboristError, LedgerError) as e:
        conn.send(("fatal", None, str(e)))
        return
    try:
        conn.send(("ready", None, None))
        while True:
            task = conn.recv()
            if task is None:
                return
            index, item = task
            conn.send(("done", index, answerer.answer(item)))
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return  # the parent has gone: nothing left to report to
    finally:
        answerer.close()


@dataclass
class BatchSummary:
    """What a batch did: counts per outcome and per (audit_mode, label)."""

    total: int = 0
    answered: int = 0
    cached: int = 0
    failed: int = 0
    not_attempted: int = 0
    by_label: Counter[tuple[str, str]] = field(default_factory=Counter)
    seconds: float = 0.0
    workers: int = 1
    stopped: str | None = None

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.not_attempted == 0

    @property
    def done(self) -> int:
        return self.answered + self.failed

    def count(self, line: dict[str, Any]) -> None:
        if "error" in line:
            self.failed += 1
            return
        self.answered += 1
        self.cached += bool(line["cache_hit"])
        self.by_label[(line["audit_mode"], line["label"])] += 1


ResultSink = Callable[[dict[str, Any]], None]


def run_batch(
    items: Sequence[BatchItem],
    *,
    db_url: str,
    shards_dir: Path,
    shards: Sequence[str] | None = None,
    governance: Governance | None = None,
    client: ClientSpec | None = None,
    use_cache: bool = True,
    workers: int = 1,
    on_result: ResultSink | None = None,
    on_progress: Callable[[BatchSummary], None] | None = None,
    ledger_failure_limit: int = LEDGER_FAILURE_LIMIT,
    allow_unrecorded_shards: bool = False,
) -> BatchSummary:
    """Answer ``items`` with ``workers`` processes (1: in this process) into the ledger at
    ``db_url``; each output line goes to ``on_result`` in input order. Raises only for
    what stops the batch before any question (unmigrated ledger, bad model settings)."""
    if workers < 1:
        raise InputError(f"workers must be at least 1, not {workers}")
    config = _Config(db_url, shards_dir, tuple(shards or ()), governance or Governance(),
                     client or ClientSpec(), use_cache, allow_unrecorded_shards)  # fmt: skip
    run = _BatchRun(items, workers, on_result, on_progress, ledger_failure_limit)
    if workers == 1:
        run.in_process(config)
    else:
        from aborist.projections import open_ledger

        open_ledger(db_url).close()  # an unmigrated or unreachable ledger stops us here
        config.client.build().close()  # and so do bad model settings
        run.in_workers(config)
    return run.finish()


class _BatchRun:
    def __init__(
        self,
        items: Sequence[BatchItem],
        workers: int,
        on_result: ResultSink | None,
        on_progress: Callable[[BatchSummary], None] | None,
        failure_limit: int,
    ) -> None:
        self.items = list(items)
        self.summary = BatchSummary(total=len(self.items), workers=workers)
        self.on_result = on_result
        self.on_progress = on_progress
        self.failure_limit = failure_limit
        self.pending: dict[int, dict[str, Any]] = {}
        self.next_out = 0
        self.next_task = 0
        self.ledger_failures = 0
        self.started = time.monotonic()

    def finish(self) -> BatchSummary:
        self.summary.seconds = time.monotonic() - self.started
        return self.summary

    def _stopping(self) -> bool:
        return self.summary.stopped is not None

    def _take(self) -> tuple[int, BatchItem] | None:
        if self._stopping() or self.next_task >= len(self.items):
            return None
        index = self.next_task
        self.next_task += 1
        return index, self.items[index]

    def deliver(self, index: int, line: dict[str, Any]) -> None:
        """Count ``line`` and release every line now in input order."""
        if "error" in line and line.pop("ledger_error", False):
            self.ledger_failures += 1
            if self.ledger_failures >= self.failure_limit and not self._stopping():
                self.summary.stopped = (
                    f"stopped: {self.ledger_failures} questions in a row could not be "
                    f"recorded in the ledger (last: {line['error']})"
                )
        elif "error" not in line:
            self.ledger_failures = 0
        line.pop("ledger_error", None)
        self.summary.count(line)
        self.pending[index] = line
        while self.next_out in self.pending:
            out = self.pending.pop(self.next_out)
            self.next_out += 1
            if self.on_result is not None:
                self.on_result(out)
        if self.on_progress is not None:
            self.on_progress(self.summary)

    def in_process(self, config: _Config) -> None:
        answerer = _Answerer(config)
        try:
            while (task := self._take()) is not None:
                self.deliver(task[0], answerer.answer(task[1]))
        finally:
            answerer.close()
        self._abandon_rest("the batch stopped before this question")

    def in_workers(self, config: _Config) -> None:
        ctx = mp.get_context("spawn")
        procs: dict[Connection, Any] = {}
        assigned: dict[Connection, tuple[int, BatchItem]] = {}
        for _ in range(min(self.summary.workers, max(1, len(self.items)))):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker_main, args=(child, config), daemon=True)
            proc.start()
            child.close()
            procs[parent] = proc
        fatal: str | None = None
        try:
            while procs:
                for conn in wait(list(procs), timeout=_POLL_SECONDS):
                    assert isinstance(conn, Connection)
                    try:
                        kind, index, payload = conn.recv()
                    except (EOFError, OSError):
                        self._worker_died(procs.pop(conn), assigned.pop(conn, None))
                        continue
                    if kind == "fatal":
                        fatal = str(payload)
                        procs.pop(conn).join()
                        continue
                    if kind == "done":
                        assigned.pop(conn, None)
                        self.deliver(index, payload)
                    task = self._take()
                    if task is None:
                        with suppress(OSError):
                            conn.send(None)
                        procs.pop(conn).join(timeout=30)
                    else:
                        assigned[conn] = task
                        try:
                            conn.send(task)
                        except OSError:  # it died since it last spoke: handled as above
                            self._worker_died(procs.pop(conn), assigned.pop(conn))
                if self.on_progress is not None:
                    self.on_progress(self.summary)
        finally:
            for proc in procs.values():  # only when interrupted: do not leave orphans
                proc.kill()
                proc.join()
        why = "no worker was left to answer it"
        if fatal is not None:
            why = f"a worker could not start: {fatal}"
        self._abandon_rest(why)

    def _worker_died(self, proc: Any, task: tuple[int, BatchItem] | None) -> None:
        proc.join(timeout=10)
        if task is None:
            return
        index, item = task
        self.deliver(index, {
            "id": item.id, "question": item.question, "run_id": item.run_id,
            "error": f"WorkerDied: worker process {proc.pid} died (exit code {proc.exitcode}) "
                     "while answering; its run reads as incomplete",
            "error_type": "WorkerDied", "failed_stage": None,
        })  # fmt: skip

    def _abandon_rest(self, why: str) -> None:
        """Questions never handed to a worker: reported, so every input line has an output."""
        reason = self.summary.stopped or why
        while self.next_task < len(self.items):
            index, item = self.next_task, self.items[self.next_task]
            self.next_task += 1
            self.summary.not_attempted += 1
            self.summary.failed -= 1  # count() below counts it as failed; keep them apart
            self.deliver(index, {
                "id": item.id, "question": item.question, "run_id": None,
                "error": f"NotAttempted: {reason}", "error_type": "NotAttempted",
                "failed_stage": None,
            })  # fmt: skip
