"""Export bundles and offline verification (docs/replay.md, "Bundles"),
on SQLite and PostgreSQL: a bundle exported from a real ledger verifies with no database
(and with the database deleted); every tampering an insider could do to a bundle is named
by its check; a trusted checkpoint must be linked to the bundle's.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aborist.audit.bundle import BUNDLE_CHECKS, BUNDLE_FORMAT, export_run, verify_bundle
from aborist.errors import InputError
from cli.audit.audit_cmd import export as export_command
from cli.audit.audit_cmd import report as report_command
from cli.audit.audit_cmd import verify_bundle as verify_bundle_command
from cli.audit.ledger_cli import cli
from ledger.canonical import canonical_text, sha256_hex
from ledger.envelope import event_hash
from ledger.tlog.proofs import checkpoint
from tests.audit.conftest import Audited, build_audited

for _cmd in (export_command, verify_bundle_command, report_command):
    if _cmd.name not in cli.commands:
        cli.add_command(_cmd)


def runs_of(a: Audited) -> dict[str, str]:
    b = a.built
    return {
        "lattice": b.lattice,
        "quote": b.quote,
        "hit": b.hit,
        "failed": b.failed,
        "mechanical": a.mechanical,
        "reprompt": a.reprompt,
    }


def first_kind(bundle: dict[str, Any], **kw: Any) -> tuple[str, Any]:
    report = verify_bundle(bundle, **kw)
    assert not report.ok
    first = report.first
    assert first is not None
    return first.kind, first


def index_of(bundle: dict[str, Any], type_: str) -> int:
    return next(i for i, e in enumerate(bundle["events"]) if e["type"] == type_)


# -- honest bundles -------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["lattice", "quote", "hit", "failed", "mechanical", "reprompt"])
def test_export_then_verify_holds(audited: Audited, which: str) -> None:
    run_id = runs_of(audited)[which]
    bundle = export_run(audited.built.ledger, run_id)
    assert bundle["format"] == BUNDLE_FORMAT and bundle["run_id"] == run_id
    events = audited.built.events(run_id)
    assert [e["seq"] for e in bundle["events"]] == [e.seq for e in events]
    assert len(bundle["inclusion_proofs"]) == len(events)
    assert bundle["checkpoint"]["tree_size"] >= events[-1].seq
    report = verify_bundle(json.loads(json.dumps(bundle)))  # through JSON, as a file would
    assert report.ok, report.to_dict()["failures"]
    assert report.events == len(events)
    for check in ("format", "events", "inclusion", "blob", "dag"):
        assert report.checks[check] == "held", check
    if which in ("lattice", "mechanical"):
        assert report.deep.deep_runs == 1 and report.deep.deep_stages >= 4
    if report.deep.deep_stages == 0:  # a hit, a run failed before any stage: nothing to
        assert report.checks["deep"] == "skipped"  # re-execute, so no "held" for it
        assert which in ("hit", "failed")
    else:
        assert report.checks["deep"] == "held"
    if which == "hit":
        assert report.deep.deep_runs == 0


def test_checkpoint_is_the_latest_covering_or_a_new_one(audited: Audited) -> None:
    lg = audited.built.ledger
    cp = checkpoint(lg)  # the whole ledger: covers every run
    bundle = export_run(lg, audited.built.lattice)
    assert bundle["checkpoint"] == cp.to_dict()
    with pytest.raises(InputError, match="no run"):
        export_run(lg, "nope")


def test_trusted_checkpoints_of_every_size_link(audited: Audited) -> None:
    lg = audited.built.ledger
    head, _ = lg.head()
    early = checkpoint(lg).to_dict() if not lg.checkpoints() else lg.checkpoints()[0].to_dict()
    bundle = export_run(lg, audited.built.quote, extra_sizes=[3, head])
    cp_size = bundle["checkpoint"]["tree_size"]
    hashes = lg.event_hashes()
    from ledger.tlog.proofs import tree_root

    for size in (3, early["tree_size"], cp_size, head):
        trusted = {"tree_size": size, "root": tree_root(hashes[:size])}
        report = verify_bundle(bundle, checkpoint=trusted)
        assert report.ok, (size, report.to_dict()["failures"])
        assert report.checks["checkpoint"] == "held"


# -- tampering ------------------------------------------------------------------------------


def test_edited_payload(audited: Audited) -> None:
    bundle = export_run(audited.built.ledger, audited.built.lattice)
    i = index_of(bundle, "qa.answer_verified")
    bundle["events"][i]["payload"] = bundle["events"][i]["payload"].replace("STRICT", "HYBRID")
    kind, d = first_kind(bundle)
    assert kind == "events" and d.detail == "payload_hash"
    assert d.seq == bundle["events"][i]["seq"]


def test_edited_blob(audited: Audited) -> None:
    bundle = export_run(audited.built.ledger, audited.built.lattice)
    i = index_of(bundle, "qa.model_answered")
    blob = json.loads(bundle["events"][i]["payload"])["raw_answer_blob"]
    forged = base64.b64decode(bundle["blobs"][blob]).replace(b"412", b"999")
    bundle["blobs"][blob] = base64.b64encode(forged).decode("ascii")
    kind, d = first_kind(bundle)
    assert kind == "blob" and blob in d.detail and d.found == sha256_hex(forged)


def test_edited_proof_element(audited: Audited) -> None:
    bundle = export_run(audited.built.ledger, audited.built.quote)
    proof = bundle["inclusion_proofs"][2]["proof"]
    proof[0] = ("0" if proof[0][0] != "0" else "1") + proof[0][1:]
    kind, d = first_kind(bundle)
    assert kind == "inclusion" and d.seq == bundle["inclusion_proofs"][2]["seq"]


def test_removed_event(audited: Audited) -> None:
    bundle = export_run(audited.built.ledger, audited.built.lattice)
    i = index_of(bundle, "qa.claims_parsed")
    seq = bundle["events"].pop(i)["seq"]
    kind, d = first_kind(bundle)
    assert kind == "events" and "stream_seq" in d.detail
    assert d.seq == seq + 1  # the next event is where the run's positions break


def rehash(ev: dict[str, Any]) -> None:
    ev["payload_hash"] = sha256_hex(ev["payload"].encode("utf-8"))
    fields = {
        k: ev[k]
        for k in (
            "seq",
            "event_id",
            "stream",
            "stream_seq",
            "type",
            "type_version",
            "recorded_at",
            "payload_hash",
            "prev_hash",
        )
    }
    ev["hash"] = event_hash(**fields)


def forge_verdict(bundle: dict[str, Any]) -> int:
    """Edit the verdict and recompute the payload hash, the event hash and the links of
    the run's later events consistently."""
    i = index_of(bundle, "qa.answer_verified")
    events = bundle["events"]
    data = json.loads(events[i]["payload"])
    data["verdict"]["n_verbatim"] -= 1
    events[i]["payload"] = canonical_text(data)
    rehash(events[i])
    for prev, ev in zip(events[i:], events[i + 1 :], strict=False):
        if ev["seq"] == prev["seq"] + 1:
            ev["prev_hash"] = prev["hash"]
        rehash(ev)
    return int(events[i]["seq"])


def test_edited_verdict_with_hashes_recomputed(audited: Audited) -> None:
    bundle = export_run(audited.built.ledger, audited.built.lattice)
    seq = forge_verdict(bundle)
    report = verify_bundle(bundle)
    assert report.checks["events"] == "held"  # the forger recomputed the hashes
    first = report.first
    assert first is not None and first.kind == "inclusion" and first.seq == seq
    deep = report.failures["deep"]  # and the re-executed verifier disagrees too
    assert deep.seq == seq and deep.detail == "$.verdict.n_verbatim"


def test_checkpoint_from_elsewhere(audited: Audited) -> None:
    bundle = export_run(audited.built.ledger, audited.built.quote)
    size = bundle["checkpoint"]["tree_size"]
    other = {"tree_size": size, "root": sha256_hex(b"another ledger")}
    kind, d = first_kind(bundle, checkpoint=other)
    assert kind == "checkpoint" and d.seq == size and d.expected == other["root"]
    smaller = {"tree_size": 3, "root": sha256_hex(b"another ledger")}
    kind, d = first_kind(
        export_run(audited.built.ledger, audited.built.quote, extra_sizes=[3]), checkpoint=smaller
    )
    assert kind == "checkpoint" and d.seq == 3 and "does not extend" in d.detail
    kind, d = first_kind(bundle, checkpoint={"tree_size": 2, "root": other["root"]})
    assert kind == "checkpoint" and "no" in d.found  # no proof carried from that size


def test_forged_bundle_root_is_caught_only_by_a_trusted_checkpoint(audited: Audited) -> None:
    """A forger who rebuilds the bundle's tree (event hashes, proofs, root) around an edited
    verdict passes the hash and inclusion checks; the re-executed verifier (and the DAG,
    not recomputed here) disagree, and a trusted checkpoint names the rewrite."""
    from ledger.tlog import merkle

    lg = audited.built.ledger
    bundle = export_run(lg, audited.built.lattice)
    trusted = dict(bundle["checkpoint"])
    seq = forge_verdict(bundle)
    hashes = lg.event_hashes(bundle["checkpoint"]["tree_size"])
    for ev in bundle["events"]:
        hashes[ev["seq"] - 1] = bytes.fromhex(ev["hash"])
    bundle["checkpoint"]["root"] = merkle.merkle_root(hashes).hex()
    size = len(hashes)
    for p in bundle["inclusion_proofs"]:
        p["proof"] = [h.hex() for h in merkle.inclusion_proof(hashes, p["seq"] - 1, size)]
    bundle["consistency_proofs"] = []
    alone = verify_bundle(bundle)
    assert [k for k, v in alone.checks.items() if v == "diverged"] == ["dag", "deep"]
    assert alone.failures["deep"].seq == seq
    kind, d = first_kind(bundle, checkpoint=trusted)
    assert kind == "checkpoint" and d.expected == trusted["root"]


@pytest.mark.parametrize(
    "edit",
    [
        lambda b: b.update(format="other"),
        lambda b: b.pop("events"),
        lambda b: b["blobs"].update(x="not base64!"),
        lambda b: b.update(checkpoint={}),
        lambda b: b["events"][0].update(payload={"a": 1}),
        lambda b: b["events"][1].update(seq="2"),
    ],
)
def test_malformed_bundle_is_a_format_failure(audited: Audited, edit: Any) -> None:
    bundle = export_run(audited.built.ledger, audited.built.quote)
    edit(bundle)
    kind, _ = first_kind(bundle)
    assert kind == "format"
    assert verify_bundle(bundle).checks["dag"] == "skipped"


# -- the CLI, with no database --------------------------------------------------------------


def test_cli_export_and_verify_without_a_database(
    audited: Audited, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    out = tmp_path / "bundle.json"
    res = runner.invoke(
        cli, ["export", "--run", audited.built.lattice, "-o", str(out), "--db", audited.built.url]
    )
    assert res.exit_code == 0, res.output
    assert "exported run" in res.output and out.exists()
    cp_file = tmp_path / "cp.json"
    cp_file.write_text(json.dumps(json.loads(out.read_text())["checkpoint"]))

    def no_database(*a: object, **k: object) -> None:
        raise AssertionError("verify-bundle must not open a database")

    monkeypatch.setattr("ledger.store.Ledger.open", no_database)
    monkeypatch.setattr("sqlalchemy.create_engine", no_database)
    monkeypatch.setenv("ABORIST_DB_URL", "sqlite:////nonexistent/ledger.db")
    res = runner.invoke(cli, ["verify-bundle", str(out), "--checkpoint", str(cp_file)])
    assert res.exit_code == 0, res.output
    assert "everything held" in res.output
    assert all(f"ok   {c}" in res.output for c in BUNDLE_CHECKS)

    data = json.loads(out.read_text())
    i = index_of(data, "qa.answer_rendered")
    data["events"][i]["payload"] = data["events"][i]["payload"].replace("[E1]", "[E9]", 1)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    res = runner.invoke(cli, ["verify-bundle", str(bad), "--json"])
    assert res.exit_code == 1
    report = json.loads(res.output)
    assert report["ok"] is False and report["failures"][0]["kind"] == "events"
    res = runner.invoke(cli, ["verify-bundle", str(bad)])
    assert res.exit_code == 1 and "FAILED at events" in res.output


def test_cli_errors(tmp_path: Path, audited: Audited) -> None:
    runner = CliRunner()
    res = runner.invoke(
        cli, ["export", "--run", "nope", "-o", str(tmp_path / "b.json"), "--db", audited.built.url]
    )
    assert res.exit_code == 1 and "no run" in res.output and "Traceback" not in res.output
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2")
    res = runner.invoke(cli, ["verify-bundle", str(junk)])
    assert res.exit_code == 1 and "not a bundle JSON file" in res.output
    res = runner.invoke(cli, ["verify-bundle"])
    assert res.exit_code == 2
    res = runner.invoke(cli, ["verify-bundle", str(junk), "--bogus"])
    assert res.exit_code == 2
    for name in ("export", "verify-bundle", "report"):
        res = runner.invoke(cli, [name, "--help"])
        assert res.exit_code == 0 and "Example:" in res.output


def test_verify_after_the_sqlite_database_is_deleted(tmp_path: Path) -> None:
    a = build_audited(f"sqlite:///{tmp_path / 'ledger.db'}", tmp_path)
    bundle = export_run(a.built.ledger, a.mechanical)
    a.built.ledger.close()
    for f in tmp_path.glob("ledger.db*"):
        f.unlink()
    assert not (tmp_path / "ledger.db").exists()
    report = verify_bundle(json.loads(json.dumps(bundle)))
    assert report.ok, report.to_dict()["failures"]
    assert report.deep.deep_stages >= 5  # parse, verify, repair, render, label


def test_cli_since_checkpoint_links_an_unrecorded_checkpoint(
    audited: Audited, tmp_path: Path
) -> None:
    from ledger.tlog.proofs import tree_root

    hashes = audited.built.ledger.event_hashes()
    kept = tmp_path / "kept.json"  # a checkpoint of size 5 that was never recorded
    kept.write_text(json.dumps({"tree_size": 5, "root": tree_root(hashes[:5])}))
    runner = CliRunner()
    plain, linked = tmp_path / "plain.json", tmp_path / "linked.json"
    for out, extra in ((plain, []), (linked, ["--since-checkpoint", str(kept)])):
        res = runner.invoke(
            cli,
            [
                "export",
                "--run",
                audited.built.quote,
                "-o",
                str(out),
                "--db",
                audited.built.url,
                *extra,
            ],
        )
        assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["verify-bundle", str(plain), "--checkpoint", str(kept)])
    assert res.exit_code == 1 and "--since-checkpoint" in res.output
    res = runner.invoke(cli, ["verify-bundle", str(linked), "--checkpoint", str(kept)])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda b: b.update(inclusion_proofs={}), "BundleFormatError: inclusion_proofs is a list"),
        (lambda b: b.update(consistency_proofs=3), "BundleFormatError: consistency_proofs is a"),
        (lambda b: b["events"][0].update(type=7), "BundleFormatError: event"),
    ],
)
def test_malformed_bundle_names_what_is_wrong(audited: Audited, edit: Any, words: str) -> None:
    bundle = export_run(audited.built.ledger, audited.built.quote)
    edit(bundle)
    kind, d = first_kind(bundle)
    assert kind == "format" and d.detail == "shape"
    assert d.found.startswith(words), d.found
