"""Faults under a batch: a worker killed with SIGKILL, the database going away
(PostgreSQL, simulated by terminating the batch's connections), the model server failing
for some questions, and a read-only or full SQLite database. Each leaves a ledger that
verifies, and nothing the ledger acknowledged is lost. On PostgreSQL, then SQLite.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from aborist.audit.replay import replay
from aborist.events import run_stream
from aborist.pipeline.batch import BatchItem, ClientSpec, run_batch
from aborist.pipeline.recorded import load_run
from aborist.projections import open_ledger
from cli.main import cli
from ledger.verify import verify_ledger
from tests.conftest import migrate_url
from tests.load.conftest import LoadSize, TownCorpus

pytestmark = [pytest.mark.load, pytest.mark.slow]

REPLY = "I cannot answer this question from the evidence provided."


@pytest.fixture
def url(ledger_url: str, town_corpus: TownCorpus) -> str:
    """A migrated ledger of each backend (tests/conftest.py) that recorded the corpus."""
    return town_corpus.record(ledger_url)


class FakeModel:
    """A loopback OpenAI-shape server. A question containing ``zz503`` gets 503, ``zzhang``
    a reply slower than the client's timeout, ``zzdrop`` a dropped connection, ``zzflaky``
    one 503 then an answer, ``zzvictim`` a reply that waits until :attr:`release` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.victim_port: int | None = None
        self.victim_seen = threading.Event()
        self.flaky_seen = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                if "zz503" in body or ("zzflaky" in body and outer._first_flaky()):
                    return self._send(503, {"error": {"message": "overloaded"}})
                if "zzdrop" in body:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                if "zzhang" in body:
                    time.sleep(2.0)
                if "zzvictim" in body and not outer.release.is_set():
                    outer.victim_port = self.client_address[1]
                    outer.victim_seen.set()
                    outer.release.wait(30)
                return self._send(200, {
                    "model": "fake", "choices": [
                        {"message": {"role": "assistant", "content": REPLY},
                         "finish_reason": "stop"}],
                })  # fmt: skip

            def _send(self, status: int, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.01}, daemon=True)  # fmt: skip
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._lock = threading.Lock()

    def _first_flaky(self) -> bool:
        with self._lock:
            self.flaky_seen += 1
            return self.flaky_seen == 1

    def spec(self, **kw: Any) -> ClientSpec:
        return ClientSpec("openai", self.base_url, "fake", None, **kw)

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    server = FakeModel()
    try:
        yield server
    finally:
        server.close()


def _pid_with_local_port(port: int) -> int:
    """The child process of this one whose TCP socket has local port ``port`` (Linux)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            cols = row.split()
            if int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(cols[9])
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) != os.getpid():
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(pid)
        except OSError:
            continue
    raise AssertionError(f"no child process holds local port {port}")


def _assert_whole(url: str) -> None:
    with open_ledger(url) as lg:
        report = verify_ledger(lg)
        assert report.ok, report.to_dict()
        events = list(lg.iter_events())
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert len({e.event_id for e in events}) == len(events)


def assert_replays(lg: Any) -> None:
    """``replay`` holds for the whole ledger (chain, every run's DAG, projections rebuilt),
    and ``replay --deep`` for every completed run. Deep re-execution is not asked of
    incomplete runs: replay currently reports a run cut off between ``qa.answer_verified``
    and ``qa.answer_labelled`` as a divergence ("expected a qa.answer_rendered event, found
    none"), which a fault that stops a run there (a lost connection, a full disk) can
    produce — a replay limitation, not a ledger fault."""
    report = replay(lg)
    assert report.ok, report
    completed = [r for r in _run_ids(lg) if load_run(lg, r).status in ("completed", "cached")]
    for run_id in completed:
        deep = replay(lg, run_id=run_id, deep=True)
        assert deep.ok, deep


def _run_ids(lg: Any) -> list[str]:
    return list(
        dict.fromkeys(e.stream[4:] for e in lg.iter_events() if e.stream.startswith("run:"))
    )


def test_a_worker_killed_mid_run_leaves_its_run_incomplete_and_a_rerun_completes_it(
    url: str, town_corpus: TownCorpus, fake_model: FakeModel
) -> None:
    items = town_corpus.items(8, marker={2: " zzvictim"})
    out: list[dict[str, Any]] = []
    box: dict[str, Any] = {}

    def go() -> None:
        box["summary"] = run_batch(
            items, db_url=url, shards_dir=town_corpus.shards_dir, client=fake_model.spec(),
            workers=2, on_result=out.append,
        )  # fmt: skip

    batch = threading.Thread(target=go)
    batch.start()
    assert fake_model.victim_seen.wait(60), "the victim question never reached the model"
    assert fake_model.victim_port is not None
    os.kill(_pid_with_local_port(fake_model.victim_port), signal.SIGKILL)
    batch.join(120)
    assert not batch.is_alive(), "the batch hung after a worker died"

    summary = box["summary"]
    assert (summary.failed, summary.answered, summary.ok) == (1, 7, False)
    victim = out[2]
    assert victim["error_type"] == "WorkerDied" and victim["run_id"] == items[2].run_id
    _assert_whole(url)
    with open_ledger(url) as lg:
        assert load_run(lg, items[2].run_id).status == "incomplete"
        assert lg.read_stream(run_stream(items[2].run_id))[-1].type == "qa.prompt_built"
        for item in items[:2] + items[3:]:
            assert load_run(lg, item.run_id).status == "completed"
        assert_replays(lg)

    fake_model.release.set()
    again: list[dict[str, Any]] = []
    rerun = [BatchItem(i.id, i.question, i.line_no) for i in items]
    summary = run_batch(rerun, db_url=url, shards_dir=town_corpus.shards_dir,
                        client=fake_model.spec(), on_result=again.append)  # fmt: skip
    assert summary.ok and summary.cached == 7
    assert not again[2]["cache_hit"] and again[2]["run_id"] == rerun[2].run_id
    _assert_whole(url)


def test_model_server_failures_are_recorded_and_the_rest_succeed(
    url: str, town_corpus: TownCorpus, fake_model: FakeModel, load_size: LoadSize
) -> None:
    """In-process in the short version (what fails is per question, not per process);
    with the workers of the long version under --run-load."""
    marker = {1: " zz503", 3: " zzhang", 5: " zzdrop", 6: " zzflaky"}
    items = town_corpus.items(8, marker=marker)
    out: list[dict[str, Any]] = []
    summary = run_batch(items, db_url=url, shards_dir=town_corpus.shards_dir,
                        workers=load_size.workers if load_size.questions > 100 else 1,
                        client=fake_model.spec(timeout=0.5, max_attempts=2),
                        on_result=out.append)  # fmt: skip
    assert (summary.failed, summary.answered) == (3, 5)
    failed = {line["id"]: line for line in out if "error" in line}
    assert set(failed) == {"q2", "q4", "q6"}
    assert "503" in failed["q2"]["error"]
    assert "timed out" in failed["q4"]["error"]
    assert "connection" in failed["q6"]["error"]
    with open_ledger(url) as lg:
        for line in failed.values():
            assert line["failed_stage"] == "model" and line["error_type"] == "ModelError"
            last = lg.read_stream(run_stream(line["run_id"]))[-1]
            assert last.type == "qa.run_failed" and last.data["stage"] == "model"
            assert last.data["message"] in line["error"]
        flaky = [e for e in lg.read_stream(run_stream(items[6].run_id))
                 if e.type == "qa.model_answered"]  # fmt: skip
        assert flaky[0].data["attempts"] == 2
        for item in items:
            if item.id not in failed:
                assert load_run(lg, item.run_id).status == "completed"
    _assert_whole(url)


def test_postgres_going_away_mid_batch_loses_no_committed_event(
    pg_schema_url: str, town_corpus: TownCorpus
) -> None:
    """A connection-kill simulation of a server restart: every connection of the batch's
    workers is terminated mid-batch. In-flight work fails cleanly and is reported; later
    appends reconnect; every event committed before the kill is still there, in place."""
    migrate_url(pg_schema_url)
    town_corpus.record(pg_schema_url)
    app = f"aborist-batch-test-{uuid.uuid4().hex[:8]}"
    url = make_url(pg_schema_url).update_query_dict({"application_name": app})
    batch_url = url.render_as_string(hide_password=False)
    items = town_corpus.items(24)
    progress: list[tuple[int, int]] = []
    out: list[dict[str, Any]] = []
    box: dict[str, Any] = {}

    def go() -> None:
        box["summary"] = run_batch(
            items, db_url=batch_url, shards_dir=town_corpus.shards_dir, workers=2,
            on_result=out.append, on_progress=lambda s: progress.append((s.done, s.answered)),
        )  # fmt: skip

    batch = threading.Thread(target=go)
    batch.start()
    deadline = time.monotonic() + 120
    admin = create_engine(pg_schema_url, isolation_level="AUTOCOMMIT")
    mine = (
        "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
        "AND query NOT ILIKE '%pg_stat_activity%' AND application_name = :app"
    )

    def connected() -> int:
        with admin.connect() as conn:
            return int(conn.execute(text(f"SELECT count(*) {mine}"), {"app": app}).scalar_one())

    # Both workers must be connected and under way (on a loaded machine one worker can
    # answer several questions before the other has started).
    while not progress or progress[-1][0] < 6 or connected() < 2:
        assert time.monotonic() < deadline and batch.is_alive(), "batch never got going"
        time.sleep(0.02)
    with open_ledger(pg_schema_url) as lg:
        before = [(e.seq, e.hash) for e in lg.iter_events()]
    try:
        with admin.connect() as conn:
            killed = conn.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND query NOT ILIKE '%pg_stat_activity%' AND application_name = :app"
            ), {"app": app}).all()  # fmt: skip
    finally:
        admin.dispose()
    answered_at_kill = progress[-1][1]
    batch.join(180)
    assert not batch.is_alive(), "the batch hung after its connections were killed"
    assert len(killed) >= 2  # each worker's writer connection at least

    summary = box["summary"]
    assert [line["id"] for line in out] == [i.id for i in items]
    failed = [line for line in out if "error" in line]
    assert failed and all(line["error_type"] == "UnavailableError" for line in failed)
    assert summary.answered > answered_at_kill  # later questions were answered
    assert summary.done == len(items)

    _assert_whole(pg_schema_url)
    with open_ledger(pg_schema_url) as lg:
        after = [(e.seq, e.hash) for e in lg.iter_events()]
        assert after[: len(before)] == before  # nothing committed was lost or rewritten
        for line in out:
            status = load_run(lg, line["run_id"]).status if lg.read_stream(
                run_stream(line["run_id"])) else "absent"  # fmt: skip
            if "error" in line:
                assert status in ("incomplete", "absent", "completed"), status
            else:
                assert status == "completed"
        assert_replays(lg)

    rerun = [BatchItem(i.id, i.question, i.line_no) for i in items]
    summary = run_batch(rerun, db_url=pg_schema_url, shards_dir=town_corpus.shards_dir)
    assert summary.ok and summary.answered == len(items)
    _assert_whole(pg_schema_url)


# -- SQLite: read-only and full ----------------------------------------------------------


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs (needs root to mount; skipped otherwise), unmounted afterwards."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2M", "tmpfs", str(mnt)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _batch_cli(tmp_path: Path, corpus: TownCorpus, db: Path, n: int) -> Any:
    src = tmp_path / "q.jsonl"
    src.write_text("".join(json.dumps({"id": i.id, "question": i.question}) + "\n"
                           for i in corpus.items(n)), encoding="utf-8")  # fmt: skip
    env = {"ABORIST_SHARD_DIR": str(corpus.shards_dir), "ABORIST_HOME": str(tmp_path / "h")}
    return CliRunner(env=env).invoke(
        cli, ["query", "--batch", str(src), "--workers", "2", "--db", f"sqlite:///{db}"]
    )


def test_read_only_sqlite_ledger_fails_clearly_and_stays_whole(
    small_fs: Path, tmp_path: Path, town_corpus: TownCorpus
) -> None:
    db = small_fs / "ledger.db"
    migrate_url(f"sqlite:///{db}")
    town_corpus.record(f"sqlite:///{db}")
    first = _batch_cli(tmp_path, town_corpus, db, 2)
    assert first.exit_code == 0, first.output
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    try:
        result = _batch_cli(tmp_path, town_corpus, db, 4)
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_fs)], check=True)
    assert result.exit_code == 1 and "Traceback" not in result.output
    # Opening needs the WAL's shared-memory file, which a read-only directory cannot hold:
    # SQLite says so at open; with the file already there, each append is refused instead.
    refusals = ("unable to open database file", "attempt to write a readonly database")
    assert any(r in result.stderr for r in refusals), result.stderr
    _assert_whole(f"sqlite:///{db}")


def test_full_disk_fails_clearly_and_the_ledger_stays_whole(
    small_fs: Path, tmp_path: Path, town_corpus: TownCorpus
) -> None:
    db = small_fs / "ledger.db"
    migrate_url(f"sqlite:///{db}")
    town_corpus.record(f"sqlite:///{db}")
    free = shutil.disk_usage(small_fs).free
    (small_fs / "filler").write_bytes(b"\0" * max(0, free - 96 * 1024))
    result = _batch_cli(tmp_path, town_corpus, db, 30)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "database or disk is full" in result.stderr, result.stderr
    (small_fs / "filler").unlink()
    _assert_whole(f"sqlite:///{db}")
    with open_ledger(f"sqlite:///{db}") as lg:
        assert_replays(lg)
