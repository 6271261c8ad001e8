"""Break the audit, then mend it (session 11), on SQLite and PostgreSQL, on a real ledger
built by running queries (:func:`tests.audit.conftest.build_audited`).

- A bundle's consistency proof whose size is a JSON string, a float or ``true``, or whose
  roots or hashes are upper-case hex, and an inclusion proof written in upper-case hex:
  ``int()`` and ``bytes.fromhex`` read them as the numbers and hashes they resemble, so
  ``verify-bundle`` said "everything held" of a bundle in a form export never writes.
"""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aborist.audit.bundle import export_run, verify_bundle
from aborist.audit.report import report_result
from aborist.events import run_stream
from cli.audit.audit_cmd import verify_bundle as verify_bundle_command
from cli.audit.ledger_cli import cli
from tests.audit.builders import Built, raw_append
from tests.audit.conftest import Audited

if verify_bundle_command.name not in cli.commands:
    cli.add_command(verify_bundle_command)


def _with_consistency(audited: Audited) -> dict[str, Any]:
    bundle = json.loads(json.dumps(export_run(audited.built.ledger, audited.built.quote,
                                              extra_sizes=[3])))  # fmt: skip
    assert verify_bundle(bundle).ok
    [proof] = [p for p in bundle["consistency_proofs"] if p["size1"] == 3]
    assert proof["proof"], "a proof with hashes to rewrite"
    return bundle


def _spaced(hex_: str) -> str:
    return " ".join(hex_[i : i + 2] for i in range(0, len(hex_), 2))  # fromhex reads it


def _proof_of_3(bundle: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in bundle["consistency_proofs"] if p["size1"] == 3)


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda p: p.update(size1="3"), id="size-as-string"),
        pytest.param(lambda p: p.update(size1=3.0), id="size-as-float"),
        pytest.param(lambda p: p.update(size2=str(p["size2"])), id="bundle-size-as-string"),
        pytest.param(lambda p: p.update(root1=p["root1"].upper()), id="root-upper-case"),
        pytest.param(lambda p: p.update(root2=_spaced(p["root2"])), id="root-with-spaces"),
        pytest.param(lambda p: p.update(proof=[h.upper() for h in p["proof"]]), id="hash-upper"),
    ],
)
def test_a_consistency_proof_in_another_form_is_a_failure(audited: Audited, edit: Any) -> None:
    bundle = _with_consistency(audited)
    edit(_proof_of_3(bundle))
    report = verify_bundle(bundle)
    assert not report.ok  # before: int() and bytes.fromhex read it, and everything held
    assert report.first is not None and report.first.kind == "checkpoint"
    assert report.checks["checkpoint"] == "diverged"


def test_a_consistency_proof_size_true_is_not_size_1(audited: Audited) -> None:
    lg = audited.built.ledger
    bundle = json.loads(json.dumps(export_run(lg, audited.built.quote, extra_sizes=[1])))
    assert verify_bundle(bundle).ok
    next(p for p in bundle["consistency_proofs"] if p["size1"] == 1)["size1"] = True
    report = verify_bundle(bundle)
    assert not report.ok and report.first is not None and report.first.kind == "checkpoint"


def test_an_inclusion_proof_in_upper_case_hex_is_a_failure(audited: Audited) -> None:
    bundle = json.loads(json.dumps(export_run(audited.built.ledger, audited.built.quote)))
    edited = copy.deepcopy(bundle)
    for p in edited["inclusion_proofs"]:
        p["proof"] = [h.upper() for h in p["proof"]]
    assert any(p["proof"] for p in edited["inclusion_proofs"])
    report = verify_bundle(edited)
    assert not report.ok and report.first is not None and report.first.kind == "inclusion"
    assert verify_bundle(bundle).ok  # the honest one still holds


def test_a_hit_bundle_does_not_say_everything_held(audited: Audited, tmp_path: Path) -> None:
    b = audited.built
    out = tmp_path / "hit.json"
    out.write_text(json.dumps(export_run(b.ledger, b.hit)))
    runner = CliRunner()
    res = runner.invoke(cli, ["verify-bundle", str(out)])
    assert res.exit_code == 0, res.output  # nothing failed: what was checked held
    last = res.output.strip().splitlines()[-1]
    assert "everything held" not in last  # before: "everything held (run cached)"
    assert last.startswith("verify-bundle: everything checked held (run cached), but")
    assert b.lattice in last and "this bundle does not hold" in last
    res = runner.invoke(cli, ["verify-bundle", str(out), "--json"])
    assert json.loads(res.output)["served_from"] == b.lattice
    # the run it was served from is exported and verified on its own: everything held
    out.write_text(json.dumps(export_run(b.ledger, b.lattice)))
    res = runner.invoke(cli, ["verify-bundle", str(out)])
    assert res.exit_code == 0 and "verify-bundle: everything held (run completed)" in res.output
    assert (
        json.loads(runner.invoke(cli, ["verify-bundle", str(out), "--json"]).output)["served_from"]
        is None
    )


def _forged_hit(built: Built, served: str) -> str:
    """A copy of the hit's three events on a new run's stream, by plain SQL with every hash
    correct (no trigger dropped), naming ``served`` as the run it served from."""
    run_id = uuid.uuid4().hex
    for ev in built.events(built.hit):
        data = dict(ev.data)
        if "run_id" in data:
            data["run_id"] = run_id
        for key in ("served_from_run_id", "hit_run_id"):
            if key in data:
                data[key] = served
        raw_append(built.ledger, run_stream(run_id), ev.type, data)
    return run_id


@pytest.mark.parametrize("served", ["failed", "absent"])
def test_a_hit_report_names_a_served_run_that_does_not_hold(built: Built, served: str) -> None:
    target = built.failed if served == "failed" else uuid.uuid4().hex
    run_id = _forged_hit(built, target)
    page = report_result(built.ledger, run_id)
    # before: the page said "The run was not labelled" (or that the served run is not in
    # the ledger) and nothing failed, so `report` exited 0
    assert page.problems and "the run it served from" in page.problems[0]
    honest = report_result(built.ledger, built.hit)
    assert honest.problems == [] and honest.unreadable == []
