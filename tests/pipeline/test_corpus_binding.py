"""A corpus bound to the ledger: a shard edited after ingest (text and chunk_hash changed
consistently), built with --no-ledger, or unknown to this ledger is refused at query time
with one line; --allow-unrecorded-shards lets it through and replay flags the run; a run
forged from an edited shard fails ``replay --deep`` without the shard file. On SQLite and
PostgreSQL."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import aborist.pipeline.query as query_module
import aborist.pipeline.run as run_module
from aborist.audit import replay
from aborist.clients.extractive import ExtractiveClient
from aborist.corpus.ingest import ingest
from aborist.corpus.shard import merkle_root_hex, read_shard_info
from aborist.errors import CorpusError
from aborist.pipeline.ask import ask
from aborist.pipeline.corpus_binding import UnrecordedShardError
from aborist.pipeline.query import query
from aborist.projections import open_ledger
from cli.audit.ledger_cli import cli as ledger_cli
from cli.main import cli
from ledger.store import Ledger

Q = "How long is the Silverrun River?"
TRUE, FALSE = "412 kilometres", "9000 kilometres"


def ask_q(ledger: Ledger, shards_dir: Path, question: str = Q, **kw: Any) -> Any:
    return query(question, ledger=ledger, client=ExtractiveClient(), shards_dir=shards_dir,
                 use_cache=kw.pop("use_cache", False), **kw)  # fmt: skip


def edit_consistently(shards_dir: Path, *, restate_root: bool) -> str:
    """The attack: the chunk stating the river's length says 9000 kilometres, and its
    ``chunk_hash`` is the sha256 of the new text, so the chunk is self-consistent. With
    ``restate_root`` the ``meta`` source root is recomputed too, so the file is wholly
    self-consistent. Returns the edited chunk's hash."""
    conn = sqlite3.connect(shards_dir / "geo.shard.sqlite")
    try:
        [(rowid, old)] = conn.execute(
            "SELECT rowid, text FROM chunks WHERE text LIKE ?", (f"%{TRUE}%",)
        ).fetchall()
        new = old.replace(TRUE, FALSE)
        edited = hashlib.sha256(new.encode("utf-8")).hexdigest()
        conn.execute("UPDATE chunks SET text = ?, chunk_hash = ? WHERE rowid = ?",
                     (new, edited, rowid))  # fmt: skip
        if restate_root:
            hashes = [r[0] for r in conn.execute("SELECT chunk_hash FROM chunks ORDER BY rowid")]
            conn.execute("UPDATE meta SET value = ? WHERE key = 'source_root'",
                         (merkle_root_hex(hashes),))  # fmt: skip
        conn.commit()
    finally:
        conn.close()
    return edited


def last_event(ledger: Ledger) -> Any:
    [last] = ledger.read(gt=ledger.head()[0] - 1)
    return last


def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shards_dir: Path) -> None:
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ABORIST_SHARD_DIR", str(shards_dir))
    for name in ("ABORIST_DB_URL", "ABORIST_LLM_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def one_line_failure(result: Any, *needles: str) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    for needle in needles:
        assert needle in lines[0]
    return str(lines[0])


# -- at query time ------------------------------------------------------------------------


@pytest.mark.parametrize("restate_root", [False, True])
def test_a_shard_edited_after_ingest_is_refused(
    pipeline_ledger: Ledger, corpus: Any, restate_root: bool
) -> None:
    assert TRUE in ask_q(pipeline_ledger, corpus.shards_dir).answer
    edit_consistently(corpus.shards_dir, restate_root=restate_root)
    # the stated root no longer covers the chunks; or, restated, no ingest recorded it
    why = "was not recorded by an ingest" if restate_root else "its chunk hashes have root"
    with pytest.raises(CorpusError, match=why):
        ask_q(pipeline_ledger, corpus.shards_dir)
    failed = last_event(pipeline_ledger)
    assert failed.type == "qa.run_failed" and failed.data["stage"] == "cache"
    run = pipeline_ledger.read_stream(failed.stream)
    assert [e.type for e in run] == ["qa.run_started", "qa.run_failed"]  # no answer
    # The flag admits a shard the ledger does not know, never one that contradicts itself.
    if restate_root:
        allowed = ask_q(pipeline_ledger, corpus.shards_dir, allow_unrecorded_shards=True)
        assert FALSE in allowed.answer
        checked = pipeline_ledger.read_stream(f"run:{allowed.run_id}")[1]
        assert checked.data["unrecorded_shards"] == ["geo"]
    else:
        with pytest.raises(CorpusError, match=why):
            ask_q(pipeline_ledger, corpus.shards_dir, allow_unrecorded_shards=True)


@pytest.mark.parametrize("restate_root", [False, True])
def test_cli_query_of_an_edited_shard_fails_with_one_line(
    pipeline_ledger: Ledger, ledger_url: str, corpus: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, restate_root: bool,
) -> None:  # fmt: skip
    env(monkeypatch, tmp_path, corpus.shards_dir)
    edit_consistently(corpus.shards_dir, restate_root=restate_root)
    result = CliRunner().invoke(cli, ["query", "--no-cache", "--db", ledger_url, Q])
    one_line_failure(result, "shard 'geo'", "re-ingest it")
    assert FALSE not in result.output


def test_a_no_ledger_shard_is_refused_unless_allowed_and_replay_flags_it(
    pipeline_ledger: Ledger, ledger_url: str, corpus: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    lake = tmp_path / "lake.md"
    lake.write_text("# The Glass Lake\n\nThe Glass Lake is shallow and cold.\n", encoding="utf-8")
    ingest([lake], "lake", shards_dir=corpus.shards_dir)  # as `aborist ingest --no-ledger`
    question = "Is the Glass Lake shallow?"
    with pytest.raises(UnrecordedShardError, match="--allow-unrecorded-shards"):
        ask_q(pipeline_ledger, corpus.shards_dir, question, shards=["lake"])
    env(monkeypatch, tmp_path, corpus.shards_dir)
    args = ["query", "--shard", "lake", "--db", ledger_url, question]
    one_line_failure(CliRunner().invoke(cli, args), "shard 'lake'", "--allow-unrecorded-shards")

    result = CliRunner().invoke(cli, [*args[:-1], "--allow-unrecorded-shards", question])
    assert result.exit_code == 0, result.output
    assert "shallow" in result.stdout
    [checked] = pipeline_ledger.read(types=["qa.cache_checked"])
    assert checked.data["unrecorded_shards"] == ["lake"]
    # a cache hit of it says so again
    hit = ask_q(pipeline_ledger, corpus.shards_dir, question, shards=["lake"], use_cache=True,
                allow_unrecorded_shards=True)  # fmt: skip
    assert hit.cache_hit

    for deep in (False, True):
        report = replay(pipeline_ledger, deep=deep)
        assert report.ok, report.to_dict()  # allowed, recorded as allowed: not tampering
        assert report.corpus_not_recorded_count == 2
        flagged = report.corpus_not_recorded[0]
        assert (flagged.run, flagged.shard, flagged.seq) == (
            checked.stream[4:],
            "lake",
            checked.seq,
        )
    out = CliRunner().invoke(ledger_cli, ["replay", "--deep", "--db", ledger_url])
    assert out.exit_code == 0, out.output
    assert "FLAG 2 run(s): corpus not recorded" in out.output
    assert f"run {checked.stream[4:]}: corpus not recorded (shard lake" in out.output
    # its bundle carries the flag, and verify-bundle names it rather than "everything held"
    from aborist.audit.bundle import export_run, verify_bundle

    bundle = export_run(pipeline_ledger, checked.stream[4:])
    assert verify_bundle(bundle).unrecorded_shards == ["lake"]
    path = tmp_path / "lake-bundle.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    got = CliRunner().invoke(ledger_cli, ["verify-bundle", str(path)])
    assert got.exit_code == 0, got.output
    last = got.output.strip().splitlines()[-1]
    assert not last.startswith("verify-bundle: everything held"), last
    assert "read shard(s) no recorded ingest vouches for (lake)" in last, last


def test_shards_this_ledger_never_recorded_are_refused(ledger_url: str, corpus: Any) -> None:
    """The corpus's shards, perfectly intact, in a ledger that did not ingest them (as if
    copied from another machine): refused."""
    with open_ledger(ledger_url) as lg:
        with pytest.raises(UnrecordedShardError, match="shard 'bees'"):
            ask_q(lg, corpus.shards_dir)
        corpus.record(lg)
        assert TRUE in ask_q(lg, corpus.shards_dir).answer


def test_the_shard_file_is_hashed_once_per_file_identity(
    pipeline_ledger: Ledger, corpus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    real = query_module.chunk_root

    def counting(path: Path) -> str:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(query_module, "chunk_root", counting)
    for _ in range(3):  # a miss and two hits
        ask_q(pipeline_ledger, corpus.shards_dir, use_cache=True)
    assert len(calls) == 2  # geo and bees, once each
    geo = corpus.shards_dir / "geo.shard.sqlite"
    st = geo.stat()
    os.utime(geo, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # an edit in place
    ask_q(pipeline_ledger, corpus.shards_dir, use_cache=True)
    assert [p.name for p in calls[2:]] == ["geo.shard.sqlite"]


def test_ask_records_its_document_once_and_replay_proves_its_chunks(
    pipeline_ledger: Ledger, corpus: Any, tmp_path: Path
) -> None:
    client = ExtractiveClient()
    lake = tmp_path / "lake.md"
    lake.write_text("# The Glass Lake\n\nThe Glass Lake is shallow and cold.\n", encoding="utf-8")
    for _ in range(2):
        answered = ask(lake, "Is the Glass Lake shallow?", ledger=pipeline_ledger,
                       client=client, use_cache=False)  # fmt: skip
        assert "shallow" in answered.answer
    [recorded] = pipeline_ledger.read_stream("shard:document")  # once: then it is known
    assert recorded.type == "corpus.shard_ingested" and recorded.data["chunk_hashes_blob"]
    # rivers.md alone is the geo shard's corpus, whose root the ledger already holds
    assert TRUE in ask(corpus.rivers, Q, ledger=pipeline_ledger, client=client).answer
    assert len(pipeline_ledger.read(types=["corpus.shard_ingested"])) == 3
    report = replay(pipeline_ledger, deep=True)
    assert report.ok, report.to_dict()
    assert report.corpus_runs == 3 and report.corpus_chunks >= 3
    assert report.corpus_not_recorded_count == 0 and report.not_reexecuted_count == 0


# -- a run forged from an edited shard ------------------------------------------------------


def forge_run(monkeypatch: pytest.MonkeyPatch, ledger: Ledger, shards_dir: Path) -> Any:
    """A run recorded through the library with the query-time corpus checks switched off:
    what a forger's (or an older) pipeline writes."""
    with monkeypatch.context() as m:
        m.setattr(query_module, "chunk_root", lambda path: read_shard_info(path).source_root)
        m.setattr(run_module, "check_recorded", lambda *a, **k: [])
        query_module._INFO_CACHE.clear()
        forged = ask_q(ledger, shards_dir)
        query_module._INFO_CACHE.clear()
    assert forged.audit_mode == "STRICT" and FALSE in forged.answer
    return forged


def test_a_run_forged_from_an_edited_shard_fails_replay_deep(
    pipeline_ledger: Ledger, ledger_url: str, corpus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorded root kept: the run names a root an ingest recorded, and every hash
    in the run is consistent, so only the inclusion proof can tell."""
    recorded_root = read_shard_info(corpus.shards_dir / "geo.shard.sqlite").source_root
    edited = edit_consistently(corpus.shards_dir, restate_root=False)
    forged = forge_run(monkeypatch, pipeline_ledger, corpus.shards_dir)
    events = pipeline_ledger.read_stream(f"run:{forged.run_id}")
    evidence = next(e for e in events if e.type == "qa.evidence_mapped")
    assert [e["evidence_hash"] for e in evidence.data["evidence"]] == [edited]

    assert replay(pipeline_ledger).ok  # nothing but the proof can see it
    report = replay(pipeline_ledger, deep=True)
    assert not report.ok
    d = report.divergences["corpus"]
    assert (d.kind, d.seq, d.run, d.stage) == ("corpus", evidence.seq, forged.run_id,
                                               "evidence_map")  # fmt: skip
    assert (d.expected, d.found) == (f"a leaf of source root {recorded_root}", edited)
    assert "no inclusion proof" in d.detail
    (corpus.shards_dir / "geo.shard.sqlite").unlink()  # the proof needs no shard file
    out = CliRunner().invoke(ledger_cli, ["replay", "--deep", "--db", ledger_url])
    assert out.exit_code == 1, out.output
    assert "FAIL corpus" in out.output and edited in out.output


def test_a_run_forged_from_a_restated_shard_fails_replay(
    pipeline_ledger: Ledger, ledger_url: str, corpus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The root restated: the run names a root no ingest recorded and does not say it
    was allowed to."""
    edit_consistently(corpus.shards_dir, restate_root=True)
    forged = forge_run(monkeypatch, pipeline_ledger, corpus.shards_dir)
    checked = pipeline_ledger.read_stream(f"run:{forged.run_id}")[1]
    for deep in (False, True):
        report = replay(pipeline_ledger, deep=deep)
        assert not report.ok
        d = report.divergences["corpus"]
        assert (d.seq, d.run, d.stage, d.found) == (checked.seq, forged.run_id, "cache", "none")
        assert checked.data["shards"]["geo"] in d.expected
        assert "does not list it under unrecorded_shards" in d.detail
    out = CliRunner().invoke(ledger_cli, ["replay", "--db", ledger_url])
    assert out.exit_code == 1 and "FAIL corpus" in out.output


def test_a_shard_that_appears_after_the_corpus_was_chosen_is_not_read(
    corpus: Any, tmp_path: Path
) -> None:
    """All shards of the directory are read when none is named: one that arrives between
    choosing the corpus (its roots go into qa.cache_checked) and retrieving is refused."""
    source = query_module.ShardSource(None, corpus.shards_dir)
    try:
        assert set(source.roots()) == {"geo", "bees"}
        lake = tmp_path / "lake.md"
        lake.write_text("# The Glass Lake\n\nThe Glass Lake is shallow and cold.\n",
                        encoding="utf-8")  # fmt: skip
        ingest([lake], "lake", shards_dir=corpus.shards_dir)
        with pytest.raises(CorpusError, match="'lake' appeared after this run chose"):
            source.retrieve("Is the Glass Lake shallow?", 60_000)
    finally:
        source.close()
