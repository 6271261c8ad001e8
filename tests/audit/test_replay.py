"""`aborist-ledger replay` on an honest ledger: a real ledger built by
running queries (both modes, a cache hit, a failed run) replays clean on SQLite and
PostgreSQL, with and without --deep, --run, --since and --checkpoint; version skew is
reported apart from divergence; and the CLI's exit codes and JSON.

The ledgers come from :mod:`tests.audit.builders`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aborist.audit import ReplayReport, parse_checkpoint, replay
from aborist.audit.deep import first_difference
from aborist.clients.extractive import ExtractiveClient
from aborist.errors import InputError
from aborist.pipeline.query import query
from cli.audit.ledger_cli import cli
from cli.audit.replay_cmd import replay as replay_command
from ledger.errors import UnavailableError
from ledger.store import Ledger
from ledger.tlog.proofs import checkpoint, tree_root
from tests.audit.builders import Q_FOUNDER, Built, add_repair_runs, build_ledger
from tests.conftest import backend_url, migrate_url
from tests.ledger.tamper import tamper

if "replay" not in cli.commands:
    cli.add_command(replay_command)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def clean(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Built]:
    """One ledger per backend shared by the tests that only read it (built once: fast)."""
    tmp = tmp_path_factory.mktemp("clean")
    with backend_url(request.param, tmp) as url:
        migrate_url(url)
        b = build_ledger(url, tmp)
        try:
            yield b
        finally:
            b.ledger.close()


def outside_checkpoint(lg: Ledger) -> dict[str, object]:
    """A checkpoint of the ledger as it is, kept outside it (nothing recorded)."""
    hashes = lg.event_hashes()
    return {"tree_size": len(hashes), "root": tree_root(hashes)}


def assert_clean(report: ReplayReport) -> None:
    assert report.ok, [d.to_dict() for d in report.divergences.values()]
    assert report.divergences == {}


# -- the service ----------------------------------------------------------------------


def test_honest_ledger_replays_clean(clean: Built) -> None:
    report = replay(clean.ledger)
    assert_clean(report)
    head, _ = clean.ledger.head()
    assert report.events_checked == head == report.head_seq
    assert report.runs == {"completed": 2, "cached": 1, "failed": 1}
    assert report.dags_checked == 2
    assert report.stages_checked == 9 + 8  # claim-lattice + quote (DAG version 2: render)
    assert report.projection_rows == {"providence_cache": 2, "run_dag_nodes": 17, "runs": 4}
    assert report.blobs_checked > 0
    assert report.checks == {"chain": "held", "envelope": "held", "checkpoint": "skipped",
                             "tile": "skipped", "history": "held", "cache": "held",
                             "blob": "held", "dag": "held", "corpus": "held", "deep": "skipped",
                             "projection": "held"}  # fmt: skip
    # every run that chose a corpus (the failed one too) read only recorded shards
    assert report.corpus_runs == 4 and report.corpus_chunks == 0
    assert report.corpus_not_recorded_count == 0


def test_deep_re_executes_every_answered_run(clean: Built) -> None:
    report = replay(clean.ledger, deep=True)
    assert_clean(report)
    assert report.deep_runs == 2
    # lattice: parse, verify, render, label; quote: verify, render, label
    assert report.deep_stages == 4 + 3
    assert report.checks["deep"] == "held"
    assert report.skew_count == 0 and report.not_reexecuted_count == 0
    # every evidence chunk proven a leaf of its recorded root: the two answered runs' and
    # the failed one's (it failed at the model, after its evidence)
    items = [len(e.data["evidence"]) for e in clean.ledger.read(
        types=["qa.evidence_mapped", "qa.context_assembled"])]  # fmt: skip
    assert len(items) == 3 and report.corpus_chunks == sum(items) > 0
    assert report.checks["corpus"] == "held"


def test_one_run(clean: Built) -> None:
    report = replay(clean.ledger, run_id=clean.quote, deep=True)
    assert_clean(report)
    assert report.runs == {"completed": 1}
    assert report.stages_checked == 8 and report.deep_runs == 1
    assert report.projection_rows["runs"] == 1
    with pytest.raises(InputError, match="no run"):
        replay(clean.ledger, run_id="nope")


def test_since_checks_the_suffix_and_the_runs_in_it(clean: Built) -> None:
    start = clean.event(clean.hit, "qa.run_started").seq
    report = replay(clean.ledger, since=start - 1, deep=True)
    assert_clean(report)
    head, _ = clean.ledger.head()
    assert report.events_checked == head - start + 1
    assert report.runs == {"cached": 1, "failed": 1}
    with pytest.raises(InputError, match="past the last event"):
        replay(clean.ledger, since=head + 1)


def test_checkpoint_kept_outside_holds_after_more_appends(built: Built) -> None:
    cp = checkpoint(built.ledger).to_dict()
    query(Q_FOUNDER, ledger=built.ledger, client=ExtractiveClient(), shards_dir=built.shards)
    report = replay(built.ledger, checkpoint=cp)
    assert_clean(report)
    assert report.checkpoints_confirmed == 2  # the one recorded in the database, and the file
    assert report.checkpoint_file == "confirmed" and report.checkpoints_rejected == 0
    assert report.checks["checkpoint"] == "held"


def test_checkpoint_larger_than_the_ledger_diverges(clean: Built) -> None:
    cp = outside_checkpoint(clean.ledger)
    size = int(str(cp["tree_size"])) + 5
    report = replay(clean.ledger, checkpoint=dict(cp, tree_size=size))
    d = report.first("checkpoint")
    assert d is not None and d.seq == size
    assert "truncated" in d.detail


@pytest.mark.parametrize("size", [0, -1])
def test_a_recorded_checkpoint_smaller_than_one_leaf_diverges(built: Built, size: int) -> None:
    """A forged checkpoint row of size ≤ 0 is a divergence named as such, not an error
    from the proof code and never a match of ``hashes[:size]``."""
    checkpoint(built.ledger)
    tamper(
        built.ledger,
        "INSERT INTO checkpoints (tree_size, root, created_at) VALUES (:s, :r, 'x')",
        s=size, r="0" * 64,
    )  # fmt: skip
    report = replay(built.ledger)
    d = report.first("checkpoint")
    assert d is not None and d.seq == size
    assert "fewer than one leaf" in d.detail
    assert report.checks["checkpoint"] != "held"


def test_version_skew_is_not_divergence(clean: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("aborist.audit.deep.VERIFIER_VERSION", "aborist-verifier/99.0.0")
    report = replay(clean.ledger, deep=True)
    assert_clean(report)
    assert report.skew_count == 2
    skew = {s.run: s for s in report.version_skew}
    assert skew[clean.lattice].field == "verifier_version"
    assert skew[clean.lattice].seq == clean.event(clean.lattice, "qa.answer_verified").seq
    assert skew[clean.lattice].running == "aborist-verifier/99.0.0"
    assert {n.run for n in report.not_reexecuted} == {clean.lattice, clean.quote}


def test_repaired_runs_replay_clean_and_deep(built: Built) -> None:
    mechanical, reprompt = add_repair_runs(built)
    report = replay(built.ledger, deep=True)
    assert_clean(report)
    assert report.dags_checked == 4
    assert report.stages_checked == 9 + 8 + 10 + 9  # a repair node in each repaired run
    assert report.deep_runs == 4
    # mechanical: parse, verify, repair, render, label; re-prompt: verify, the attempt's
    # verdict, the repair's verdict, render, label
    assert report.deep_stages == 7 + 5 + 5
    assert [(n.run, n.stage) for n in report.not_reexecuted] == [(reprompt, "repair")]
    assert "came from the model" in report.not_reexecuted[0].reason
    assert mechanical not in {n.run for n in report.not_reexecuted}


def test_deep_repair_is_the_tails_mechanical_repair(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repair stage is re-run by ``tail.mechanical_repair`` itself: a tail that no
    longer accepts the recorded repair makes replay diverge at the repair stage."""
    from aborist.pipeline import tail

    mechanical, _ = add_repair_runs(built)
    assert_clean(replay(built.ledger, run_id=mechanical, deep=True))
    real = tail.mechanical_repair

    def refusing(inputs: tail.TailInputs, verdict: Any) -> tuple[Any, None]:
        outcome, _ = real(inputs, verdict)
        return outcome, None

    monkeypatch.setattr(tail, "mechanical_repair", refusing)
    report = replay(built.ledger, run_id=mechanical, deep=True)
    found = [(d.kind, d.stage, d.expected) for d in report.divergences.values()]
    assert ("deep", "repair", "no mechanical repair accepted") in found, found
    assert report.not_reexecuted == []


@pytest.mark.parametrize(
    "bad",
    [None, [], {"tree_size": 0, "root": "0" * 64}, {"tree_size": True, "root": "0" * 64},
     {"tree_size": 3, "root": "xyz"}, {"tree_size": 3}],
)  # fmt: skip
def test_parse_checkpoint_rejects(bad: object) -> None:
    with pytest.raises(InputError):
        parse_checkpoint(bad)


def test_first_difference_names_the_path() -> None:
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == ("$.a[1].b", 2, 3)
    assert first_difference({"a": 1}, {"a": True}) == ("$.a", 1, True)
    path, _, found = first_difference([1], [1, 2]) or ("", None, None)
    assert path == "$[1]" and found == 2


# -- the command ----------------------------------------------------------------------


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["replay", *args])
    return result.exit_code, result.stdout, result.stderr


def test_cli_exit_0_and_summary(clean: Built) -> None:
    code, out, _ = run_cli("--db", clean.url, "--deep")
    assert code == 0, out
    assert "ok   chain" in out and "ok   deep" in out and "everything held" in out


def test_cli_json_is_one_object(clean: Built, tmp_path: Path) -> None:
    cp_file = tmp_path / "cp.json"
    cp_file.write_text(json.dumps(outside_checkpoint(clean.ledger)), encoding="utf-8")
    code, out, _ = run_cli("--db", clean.url, "--json", "--run", clean.lattice,
                           "--checkpoint", str(cp_file))  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["ok"] is True and data["divergences"] == []
    assert data["scope"]["run"] == clean.lattice
    assert data["summary"]["dags_checked"] == 1
    assert set(data["checks"]) == {"chain", "envelope", "checkpoint", "tile", "history", "blob",
                                   "cache", "corpus", "dag", "deep", "projection"}  # fmt: skip


def test_cli_jobs_give_the_same_report(clean: Built) -> None:
    outs = []
    for jobs in ("1", "2"):
        code, out, _ = run_cli("--db", clean.url, "--deep", "--json", "--jobs", jobs)
        assert code == 0, out
        outs.append(json.loads(out))
    assert outs[0] == outs[1] and outs[0]["ok"] is True


def test_cli_usage_errors_exit_2(clean: Built, tmp_path: Path) -> None:
    assert run_cli("--db", clean.url, "--jobs", "3")[0] == 2
    assert run_cli("--db", clean.url, "--since", "-1")[0] == 2
    assert run_cli("--db", clean.url, "--checkpoint", str(tmp_path / "absent.json"))[0] == 2
    bad = tmp_path / "bad.json"
    bad.write_text("not json", encoding="utf-8")
    assert run_cli("--db", clean.url, "--checkpoint", str(bad))[0] == 2


def test_cli_domain_errors_are_one_line(clean: Built, tmp_path: Path) -> None:
    code, _, err = run_cli("--db", clean.url, "--run", "nope")
    assert code == 1 and err.startswith("Error: no run") and err.count("\n") == 1
    code, _, err = run_cli("--db", f"sqlite:///{tmp_path / 'absent.db'}")
    assert code == 1 and "migrate" in err and "Traceback" not in err


def test_cli_help_has_example() -> None:
    result = CliRunner().invoke(cli, ["replay", "--help"])
    assert result.exit_code == 0 and "Example:" in result.stdout


def test_run_cut_off_after_verify_is_incomplete_not_divergent(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose ledger connection was lost after qa.answer_verified has no render or
    label to compare: --deep says so, and does not call it tampering."""
    real_append = Ledger.append

    def failing_append(self: Ledger, stream: str, events: Any, **kw: Any) -> Any:
        if events[-1].type == "qa.answer_rendered":
            raise UnavailableError("simulated: connection lost")
        return real_append(self, stream, events, **kw)

    monkeypatch.setattr(Ledger, "append", failing_append)
    with pytest.raises(UnavailableError):
        query(Q_FOUNDER, ledger=built.ledger, client=ExtractiveClient(), shards_dir=built.shards,
              use_cache=False)  # fmt: skip
    monkeypatch.setattr(Ledger, "append", real_append)
    report = replay(built.ledger, deep=True)
    assert report.ok, [d.to_dict() for d in report.divergences.values()]
    skipped = {(n.stage, n.reason) for n in report.not_reexecuted}
    assert ("render", "the run ended before this stage") in skipped


def test_deep_counts_each_blob_once(built: Built) -> None:
    """Runs share blobs (the same evidence chunk, prompt and reply): --deep checks each
    run's blobs but counts an address once, so a second run of the same question adds
    nothing to the count, and it never exceeds the blob table `aborist-ledger verify`
    counts."""
    from ledger.verify import verify_ledger
    from tests.audit.builders import Q_LENGTH

    before = replay(built.ledger, deep=True, parallel=False).blobs_checked
    again = query(Q_LENGTH, ledger=built.ledger, client=ExtractiveClient(),
                  shards_dir=built.shards, use_cache=False)  # fmt: skip
    assert not again.cache_hit  # a second run referencing the first one's blobs
    stored = verify_ledger(built.ledger).blobs_checked
    assert replay(built.ledger).blobs_checked == stored
    for parallel in (False, True):
        report = replay(built.ledger, deep=True, parallel=parallel)
        assert report.ok and report.deep_runs == 3
        assert report.blobs_checked == before <= stored
