"""Failed and interrupted runs: any failure appends
``qa.run_failed`` naming the stage and re-raises; an interrupt appends nothing more and
leaves a valid chain with a run that reads as incomplete. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from sqlalchemy import text

from aborist.clients.base import Messages, StubClient
from aborist.clients.extractive import ExtractiveClient
from aborist.clients.openai import OpenAICompatibleClient
from aborist.errors import CorpusError, InputError, ModelError
from aborist.events import run_stream
from aborist.pipeline.ask import ask
from aborist.pipeline.query import query
from aborist.pipeline.recorded import load_run
from aborist.pipeline.run import Governance
from ledger.store import Ledger
from ledger.verify import verify_ledger
from tests.eldoria import Interrupting

Q = "How long is the Silverrun River?"
UP_TO_MODEL = [
    "qa.run_started",
    "qa.cache_checked",
    "qa.retrieval_completed",
    "qa.evidence_mapped",
    "qa.prompt_built",
]


def types_of(ledger: Ledger, run_id: str) -> list[str]:
    return [e.type for e in ledger.read_stream(run_stream(run_id))]


def run_ids(ledger: Ledger) -> list[str]:
    """Every run stream in the ledger, in order of first appearance."""
    seen: dict[str, None] = {}
    for e in ledger.iter_events():
        if e.stream.startswith("run:"):
            seen.setdefault(e.stream[4:], None)
    return list(seen)


def runs_row(ledger: Ledger, run_id: str) -> dict[str, Any]:
    with ledger.reader.connect() as conn:
        row = conn.execute(
            text("SELECT * FROM runs WHERE run_id = :r"), {"r": run_id}
        ).mappings().one()  # fmt: skip
    return dict(row)


def cache_rows(ledger: Ledger) -> int:
    with ledger.reader.connect() as conn:
        return int(conn.execute(text("SELECT COUNT(*) FROM providence_cache")).scalar_one())


def only_run(ledger: Ledger) -> str:
    [rid] = run_ids(ledger)
    return rid


def assert_failed_at(ledger: Ledger, stage: str, error_type: str) -> dict[str, Any]:
    """The single run failed at ``stage``: its last event, the runs row and load_run agree."""
    rid = only_run(ledger)
    events = ledger.read_stream(run_stream(rid))
    assert events[-1].type == "qa.run_failed"
    assert [e.stream_seq for e in events] == list(range(1, len(events) + 1))
    failed = events[-1].data
    assert (failed["stage"], failed["error_type"]) == (stage, error_type)
    assert failed["message"]
    assert "qa.run_completed" not in [e.type for e in events]
    assert load_run(ledger, rid).status == "failed"
    row = runs_row(ledger, rid)
    assert row["status"] == "failed" and row["failed_stage"] == stage
    assert row["error"] == f"{error_type}: {failed['message']}"
    assert row["finished_at"] == events[-1].recorded_at
    assert row["finished_seq"] == events[-1].seq
    assert cache_rows(ledger) == 0
    report = verify_ledger(ledger)
    assert report.ok, report.to_dict()
    return dict(failed)


def test_model_without_an_answer_fails_the_run_at_model(
    pipeline_ledger: Ledger, corpus: Any
) -> None:
    with pytest.raises(ModelError, match="no canned answer"):
        query(Q, ledger=pipeline_ledger, client=StubClient(), shards_dir=corpus.shards_dir)
    failed = assert_failed_at(pipeline_ledger, "model", "ModelError")
    assert "no canned answer" in failed["message"]
    assert types_of(pipeline_ledger, only_run(pipeline_ledger)) == [*UP_TO_MODEL, "qa.run_failed"]

    # A failure is not cached: the same question with a working model is a full miss.
    good = query(Q, ledger=pipeline_ledger, client=StubClient(default="x"),
                 shards_dir=corpus.shards_dir)  # fmt: skip
    assert not good.cache_hit
    assert types_of(pipeline_ledger, good.run_id)[-1] == "qa.run_completed"


def test_quote_mode_failure_is_recorded_at_model(pipeline_ledger: Ledger, corpus: Any) -> None:
    with pytest.raises(ModelError):
        query(Q, ledger=pipeline_ledger, client=StubClient(), shards_dir=corpus.shards_dir,
              governance=Governance(mode="quote"))  # fmt: skip
    assert_failed_at(pipeline_ledger, "model", "ModelError")
    assert types_of(pipeline_ledger, only_run(pipeline_ledger)) == [
        "qa.run_started", "qa.cache_checked", "qa.retrieval_completed",
        "qa.context_assembled", "qa.prompt_built", "qa.run_failed",
    ]  # fmt: skip


def test_missing_shard_fails_the_run_at_cache(pipeline_ledger: Ledger, corpus: Any) -> None:
    with pytest.raises(CorpusError, match="nosuch"):
        query(Q, ledger=pipeline_ledger, client=ExtractiveClient(),
              shards_dir=corpus.shards_dir, shards=["nosuch"])  # fmt: skip
    failed = assert_failed_at(pipeline_ledger, "cache", "CorpusError")
    assert "nosuch" in failed["message"]
    rid = only_run(pipeline_ledger)
    assert types_of(pipeline_ledger, rid) == ["qa.run_started", "qa.run_failed"]
    assert load_run(pipeline_ledger, rid).started.requested_shards == ["nosuch"]


def test_empty_question_is_refused_before_any_run(pipeline_ledger: Ledger, corpus: Any) -> None:
    for question in ("", "   \n"):
        with pytest.raises(InputError, match="empty"):
            query(question, ledger=pipeline_ledger, client=ExtractiveClient(),
                  shards_dir=corpus.shards_dir)  # fmt: skip
        with pytest.raises(InputError, match="empty"):
            ask(corpus.rivers, question, ledger=pipeline_ledger, client=ExtractiveClient())
    with pytest.raises(InputError, match="no such file"):
        ask(corpus.docs_dir / "absent.md", Q, ledger=pipeline_ledger, client=ExtractiveClient())
    with pytest.raises(InputError, match="is a directory: `aborist ask` reads one file"):
        ask(corpus.docs_dir, Q, ledger=pipeline_ledger, client=ExtractiveClient())
    with pytest.raises(InputError, match="not a regular file"):
        ask("/dev/null", Q, ledger=pipeline_ledger, client=ExtractiveClient())
    assert pipeline_ledger.head()[0] == 2  # the corpus's ingests only


def test_interrupted_run_reads_as_incomplete(pipeline_ledger: Ledger, corpus: Any) -> None:
    with pytest.raises(KeyboardInterrupt):
        query(Q, ledger=pipeline_ledger, client=Interrupting(), shards_dir=corpus.shards_dir)
    rid = only_run(pipeline_ledger)
    types = types_of(pipeline_ledger, rid)
    assert types == UP_TO_MODEL
    assert "qa.run_failed" not in types and "qa.run_completed" not in types
    assert load_run(pipeline_ledger, rid).status == "incomplete"
    row = runs_row(pipeline_ledger, rid)
    assert row["status"] == "started"
    assert row["finished_seq"] is None and row["finished_at"] is None
    assert row["failed_stage"] is None
    assert cache_rows(pipeline_ledger) == 0
    report = verify_ledger(pipeline_ledger)
    assert report.ok, report.to_dict()

    # The ledger is still usable: the next run answers, and is not served from the
    # interrupted one.
    after = query(Q, ledger=pipeline_ledger, client=ExtractiveClient(),
                  shards_dir=corpus.shards_dir)  # fmt: skip
    assert not after.cache_hit and after.audit_mode == "STRICT"
    assert verify_ledger(pipeline_ledger).ok


class _Always503(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gives up leaves a broken pipe behind; not a test failure."""


@pytest.fixture
def server_503() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 answering every request 503; yields (base URL,
    the paths it was asked for)."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            seen.append(self.path)
            body = json.dumps({"error": {"message": "model is loading"}}).encode()
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = _Always503(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_model_server_503_three_times_fails_the_run_at_model(
    pipeline_ledger: Ledger, corpus: Any, server_503: tuple[str, list[str]]
) -> None:
    base_url, seen = server_503
    sleeps: list[float] = []
    client = OpenAICompatibleClient(base_url, "test-model", max_attempts=3, sleep=sleeps.append)
    try:
        with pytest.raises(ModelError, match="503"):
            query(Q, ledger=pipeline_ledger, client=client, shards_dir=corpus.shards_dir)
    finally:
        client.close()
    assert seen == ["/v1/chat/completions"] * 3
    assert len(sleeps) == 2  # backoff between the three attempts, never slept for real
    failed = assert_failed_at(pipeline_ledger, "model", "ModelError")
    assert "503" in failed["message"] and "3 attempts" in failed["message"]
    assert types_of(pipeline_ledger, only_run(pipeline_ledger)) == [*UP_TO_MODEL, "qa.run_failed"]


def test_each_stage_is_committed_before_the_next_starts(
    pipeline_ledger: Ledger, corpus: Any
) -> None:
    """While the model is thinking, everything up to the prompt is already on the record
    (another connection can read it), and nothing after it."""
    seen: list[list[str]] = []

    def responder(messages: Messages) -> str:
        [rid] = run_ids(pipeline_ledger)
        seen.append(types_of(pipeline_ledger, rid))
        return "The Silverrun River is 412 kilometres long. [E1]"

    result = query(Q, ledger=pipeline_ledger, client=StubClient(responder),
                   shards_dir=corpus.shards_dir)  # fmt: skip
    assert seen == [UP_TO_MODEL]
    assert result.audit_mode == "STRICT"


def test_model_answer_with_nul_gives_the_same_outcome_on_both_backends(
    pipeline_ledger: Ledger, corpus: Any
) -> None:
    """A model server can send any character. PostgreSQL text columns cannot hold NUL, so
    the pipeline must decide what a NUL in an answer means (reject it as bad model output
    at stage "model", or strip it) rather than let the cache_written append fail and
    leave the run incomplete with an "unavailable" error on one backend only."""
    client = StubClient(default="The Silverrun River is 412 kilometres long.\x00 [E1]")
    try:
        query(Q, ledger=pipeline_ledger, client=client, shards_dir=corpus.shards_dir)
    except ModelError:
        assert_failed_at(pipeline_ledger, "model", "ModelError")
    else:
        rid = only_run(pipeline_ledger)
        assert load_run(pipeline_ledger, rid).status == "completed"
        assert runs_row(pipeline_ledger, rid)["status"] == "completed"
    assert verify_ledger(pipeline_ledger).ok


def test_question_with_nul_gives_the_same_outcome_on_both_backends(
    pipeline_ledger: Ledger, corpus: Any
) -> None:
    """The API takes any str; a NUL cannot come from argv, but can from a caller."""
    try:
        result = query("How long is the\x00 Silverrun River?", ledger=pipeline_ledger,
                       client=ExtractiveClient(), shards_dir=corpus.shards_dir)  # fmt: skip
    except InputError:
        assert pipeline_ledger.head()[0] == 2  # the corpus's ingests only
    else:
        assert load_run(pipeline_ledger, result.run_id).status == "completed"


KILLED_RUN = """
import sys, time
from pathlib import Path
from aborist.projections import open_ledger
from aborist.clients.base import ChatClient
from aborist.pipeline.query import query

class Hanging(ChatClient):
    kind = "hanging"
    def _complete(self, messages, *, temperature, max_tokens):
        Path(sys.argv[3]).write_text("thinking")
        time.sleep(60)
    def _profile(self):
        return {"model": "hanging"}

query("How long is the Silverrun River?", ledger=open_ledger(sys.argv[1]), client=Hanging(),
      shards_dir=Path(sys.argv[2]))
"""


@pytest.mark.slow
def test_killed_process_leaves_a_valid_chain_and_an_incomplete_run(
    pipeline_ledger: Ledger, corpus: Any, ledger_url: str, tmp_path: Any
) -> None:
    """SIGKILL while the model is thinking: no handler runs at all, yet the chain verifies,
    the run reads as incomplete, and the ledger takes the next run."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    marker = tmp_path / "thinking"
    root = Path(__file__).resolve().parents[2]
    with open(tmp_path / "stderr.txt", "w+b") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLED_RUN, ledger_url, str(corpus.shards_dir), str(marker)],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            stderr=err,
        )
        try:
            deadline = time.monotonic() + 30
            while not marker.exists():
                if proc.poll() is not None:
                    err.seek(0)
                    pytest.fail(f"the run died before reaching the model:\n{err.read().decode()}")
                assert time.monotonic() < deadline, "the run never reached the model"
                time.sleep(0.05)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
    rid = only_run(pipeline_ledger)
    assert types_of(pipeline_ledger, rid) == UP_TO_MODEL
    assert load_run(pipeline_ledger, rid).status == "incomplete"
    assert runs_row(pipeline_ledger, rid)["status"] == "started"
    report = verify_ledger(pipeline_ledger)
    assert report.ok, report.to_dict()
    after = query(Q, ledger=pipeline_ledger, client=ExtractiveClient(),
                  shards_dir=corpus.shards_dir)  # fmt: skip
    assert after.audit_mode == "STRICT" and not after.cache_hit
    assert verify_ledger(pipeline_ledger).ok
