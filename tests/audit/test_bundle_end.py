"""How a bundled run ends (docs/ledger-format.md, "Export bundles"; docs/replay.md): on
SQLite and PostgreSQL, ``verify-bundle`` reports the run's status from its events, and a
bundle whose events stop inside a transaction the pipeline commits whole (the closing
batch of a labelled run, a cache hit, a run's start) fails as truncated. A run that stops
after a stage committed on its own is reported incomplete, never as "everything held"
without a word: no bundle can show that its stream has no later events.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aborist.audit.bundle import export_run, verify_bundle
from aborist.pipeline.query import query
from cli.audit.ledger_cli import cli
from tests.audit.conftest import Audited, build_audited
from tests.audit.test_bundle import runs_of
from tests.conftest import backend_url
from tests.eldoria import Interrupting


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def ended(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Audited, str]]:
    """The audited ledger of both backends, plus a run interrupted at the model stage."""
    tmp = tmp_path_factory.mktemp("ended")
    with backend_url(request.param, tmp) as url:
        a = build_audited(url, tmp)
        b = a.built
        with pytest.raises(KeyboardInterrupt):
            query("Who founded the town of Brackwater?", ledger=b.ledger, client=Interrupting(),
                  shards_dir=b.shards, use_cache=False)  # fmt: skip
        started = b.ledger.read(types=["qa.run_started"])[-1]
        try:
            yield a, started.stream[4:]
        finally:
            b.ledger.close()


def cut(bundle: dict[str, Any], n: int) -> dict[str, Any]:
    """``bundle`` without its last ``n`` events and their inclusion proofs (every check
    but the run's end still holds: the proofs that remain are the events' own)."""
    out = copy.deepcopy(bundle)
    del out["events"][-n:]
    del out["inclusion_proofs"][-n:]
    return out


@pytest.mark.parametrize(
    ("which", "status"),
    [("lattice", "completed"), ("quote", "completed"), ("hit", "cached"), ("failed", "failed"),
     ("mechanical", "completed"), ("reprompt", "completed")],
)  # fmt: skip
def test_status_of_an_honest_bundle(ended: tuple[Audited, str], which: str, status: str) -> None:
    a, _ = ended
    run_id = runs_of(a)[which]
    report = verify_bundle(export_run(a.built.ledger, run_id))
    assert report.ok, report.to_dict()["failures"]
    assert report.status == status
    data = report.to_dict()
    last = a.built.events(run_id)[-1]
    assert data["status"] == status and data["end"]["truncated"] is None
    assert data["end"]["last_event"] == {"seq": last.seq, "type": last.type}


@pytest.mark.parametrize("which", ["lattice", "quote", "mechanical", "reprompt"])
@pytest.mark.parametrize("n", [1, 2])
def test_labelled_run_without_its_terminal_event_is_truncated(
    ended: tuple[Audited, str], which: str, n: int
) -> None:
    """The reported repro: events[-1] (qa.run_completed) and its proof removed; and the
    whole tail of the closing batch but the label (qa.cache_written too)."""
    a, _ = ended
    bundle = export_run(a.built.ledger, runs_of(a)[which])
    assert bundle["events"][-1]["type"] == "qa.run_completed"
    assert bundle["events"][-3]["type"] == "qa.answer_labelled"
    short = cut(bundle, n)
    report = verify_bundle(short)
    assert not report.ok
    first = report.first
    assert first is not None and first.kind == "events"
    assert first.detail.startswith("truncated: qa.answer_labelled is committed together")
    assert first.seq == short["events"][-1]["seq"]
    assert report.status == "incomplete"
    assert report.to_dict()["end"]["truncated"] is not None
    # every other check still holds: the run's end is the only thing that tells
    assert {k for k, v in report.checks.items() if v == "diverged"} == {"events"}


def test_cache_hit_without_its_completion_is_truncated(ended: tuple[Audited, str]) -> None:
    a, _ = ended
    report = verify_bundle(cut(export_run(a.built.ledger, a.built.hit), 1))
    first = report.first
    assert first is not None and first.kind == "events"
    assert "cache hit" in first.detail and first.stage == "qa.cache_checked"


def test_run_cut_to_its_start_is_truncated(ended: tuple[Audited, str]) -> None:
    a, _ = ended
    bundle = export_run(a.built.ledger, a.built.quote)
    report = verify_bundle(cut(bundle, len(bundle["events"]) - 1))
    first = report.first
    assert first is not None and first.kind == "events"
    assert first.stage == "qa.run_started" and first.detail.startswith("truncated")


def test_interrupted_run_is_reported_incomplete(ended: tuple[Audited, str], tmp_path: Path) -> None:
    a, interrupted = ended
    bundle = export_run(a.built.ledger, interrupted)
    report = verify_bundle(bundle)
    assert report.ok and report.status == "incomplete"
    assert report.end is not None and report.end.last_type == "qa.prompt_built"
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle))
    res = CliRunner().invoke(cli, ["verify-bundle", str(path)])
    assert res.exit_code == 0
    assert "run status: incomplete: the events end at qa.prompt_built" in res.output
    assert "everything held, but the run is incomplete" in res.output
    res = CliRunner().invoke(cli, ["verify-bundle", str(path), "--json"])
    assert json.loads(res.output)["status"] == "incomplete"


def test_dropped_failure_is_what_a_bundle_cannot_prove(ended: tuple[Audited, str]) -> None:
    """qa.run_failed commits on its own: without it the run reads as incomplete (not as
    failed, not as held without a word), which is all the events can say."""
    a, _ = ended
    report = verify_bundle(cut(export_run(a.built.ledger, a.built.failed), 1))
    assert report.ok and report.status == "incomplete"


def test_cli_text_and_json_name_the_status_and_the_truncation(
    ended: tuple[Audited, str], tmp_path: Path
) -> None:
    a, _ = ended
    bundle = export_run(a.built.ledger, a.built.lattice)
    whole, short = tmp_path / "whole.json", tmp_path / "short.json"
    whole.write_text(json.dumps(bundle))
    short.write_text(json.dumps(cut(bundle, 1)))
    runner = CliRunner()
    res = runner.invoke(cli, ["verify-bundle", str(whole)])
    assert res.exit_code == 0, res.output
    assert "run status: completed (qa.run_completed at seq" in res.output
    assert "verify-bundle: everything held (run completed)" in res.output
    res = runner.invoke(cli, ["verify-bundle", str(short)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "run status: truncated: the events end at qa.cache_written" in res.output
    assert "FAIL events" in res.output and "FAILED at events" in res.output
    res = runner.invoke(cli, ["verify-bundle", str(short), "--json"])
    data = json.loads(res.stdout)
    assert res.exit_code == 1 and data["ok"] is False and data["status"] == "incomplete"
    assert data["failures"][0]["detail"].startswith("truncated")
