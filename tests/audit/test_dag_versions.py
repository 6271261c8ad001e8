"""Both run-DAG versions on one ledger, SQLite and PostgreSQL (docs/pipeline.md, "DAG
versions"): runs recorded as the earlier code recorded them (version 1: quote without a
``render`` node) and as new runs are (version 2) replay clean side by side, with
``--deep``; their bundles verify, and so do bundles the earlier code exported; the
render payload is inside a version-2 quote root (and was outside a version-1 one); and a
version changed after the fact is named by the DAG check as well as by the chain."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aborist.audit import replay
from aborist.audit.bundle import _ENVELOPE_FIELDS, export_run, verify_bundle
from aborist.audit.checks.dags import check_run
from aborist.pipeline.dag import STAGE_EVENTS, recorded_version
from aborist.pipeline.run import label_stage_hash
from ledger.envelope import RecordedEvent
from ledger.tlog.proofs import checkpoint
from tests.audit.builders import Built, build_ledger
from tests.audit.dag_v1 import Mixed, build_mixed, dag_version_1, v1_bundles, v2_quote_run
from tests.audit.test_tamper_replay import rewrite
from tests.conftest import backend_url, migrate_url
from tests.ledger.tamper import tamper


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def mixed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Mixed]:
    tmp = tmp_path_factory.mktemp("mixed")
    with backend_url(request.param, tmp) as url:
        migrate_url(url)
        m = build_mixed(url, tmp)
        try:
            yield m
        finally:
            m.built.ledger.close()


def as_event(e: dict[str, Any]) -> RecordedEvent:
    """A bundle's event (its envelope fields) as the ledger's record."""
    return RecordedEvent(**{k: e[k] for k in _ENVELOPE_FIELDS})


def label_of(events: list[RecordedEvent]) -> RecordedEvent:
    return next(e for e in events if e.type == "qa.answer_labelled")


def stages(events: list[RecordedEvent]) -> list[str]:
    return [n["stage"] for n in label_of(events).data["run_dag"]["nodes"]]


QUOTE_V1 = ["question", "retrieval", "context", "prompt", "answer", "verify", "final_label"]
QUOTE_V2 = [*QUOTE_V1[:6], "render", "final_label"]


# -- both shapes, honest ------------------------------------------------------------------


def test_both_versions_replay_clean_and_deep(mixed: Mixed) -> None:
    report = replay(mixed.built.ledger, deep=True)
    assert report.ok, [d.to_dict() for d in report.divergences.values()]
    assert report.dags_checked == 6
    # v1: lattice 9, quote 7, mechanical (lattice) 10, re-prompt (quote) 8; v2: quote 8,
    # re-prompt (quote) 9
    assert report.stages_checked == 9 + 7 + 10 + 8 + 8 + 9
    assert report.runs == {"completed": 6, "cached": 2, "failed": 1}
    for rid in mixed.v1_runs() + mixed.v2_runs():
        check = check_run(rid, mixed.built.events(rid), None)
        assert check.dag is not None and not check.divergences
        assert check.dag.version == (1 if rid in mixed.v1_runs() else 2)


def test_version_1_runs_are_written_as_the_earlier_code_wrote_them(mixed: Mixed) -> None:
    b = mixed.built
    old = {k: label_of([as_event(e) for e in v["events"]])
           for k, v in v1_bundles().items()}  # fmt: skip
    for rid, was in ((b.quote, "quote"), (mixed.v1_reprompt, "quote_reprompt"),
                     (b.lattice, "claim_lattice")):  # fmt: skip
        label = label_of(b.events(rid)).data
        assert "dag_version" not in label and recorded_version(label) == 1
        assert set(label) == set(old[was].data)
        assert set(label["run_dag"]) == set(old[was].data["run_dag"]) == {"root", "mode", "nodes"}
        assert stages(b.events(rid)) == [n["stage"] for n in old[was].data["run_dag"]["nodes"]]
    assert stages(b.events(b.quote)) == QUOTE_V1
    assert stages(b.events(mixed.v1_reprompt)) == [*QUOTE_V1[:6], "repair", "final_label"]


def test_a_new_quote_run_commits_to_its_render_event(mixed: Mixed) -> None:
    for rid, before in ((mixed.v2_quote, "verify"), (mixed.v2_reprompt, "repair")):
        events = mixed.built.events(rid)
        label = label_of(events)
        assert label.data["dag_version"] == 2 and label.data["run_dag"]["version"] == 2
        nodes = {n["stage"]: n for n in label.data["run_dag"]["nodes"]}
        rendered = next(e for e in events if e.type == STAGE_EVENTS["render"])
        assert nodes["render"]["stage_hash"] == rendered.payload_hash
        assert nodes["render"]["parents"] == [nodes[before]["node_hash"]]
        assert nodes["final_label"]["parents"] == [nodes["render"]["node_hash"]]
        assert nodes["final_label"]["stage_hash"] == label_stage_hash(label.data)
    assert stages(mixed.built.events(mixed.v2_quote)) == QUOTE_V2


def test_a_hit_of_a_version_1_run_carries_its_root(mixed: Mixed) -> None:
    b = mixed.built
    done = b.event(mixed.v2_hit, "qa.run_completed").data
    assert done["run_dag_root"] == label_of(b.events(b.quote)).data["run_dag"]["root"]


def test_bundles_of_both_versions_verify(mixed: Mixed) -> None:
    for rid in [*mixed.v1_runs(), *mixed.v2_runs(), mixed.v2_hit]:
        report = verify_bundle(json.loads(json.dumps(export_run(mixed.built.ledger, rid))))
        assert report.ok, (rid, report.first)
        assert report.checks["dag"] == "held"  # deep: held, or skipped for the hit (no stage)
        assert report.checks["deep"] == ("skipped" if rid == mixed.v2_hit else "held")


def test_bundles_the_earlier_code_exported_still_verify() -> None:
    want = {"quote": QUOTE_V1, "quote_reprompt": [*QUOTE_V1[:6], "repair", "final_label"],
            "claim_lattice": 9}  # fmt: skip
    for name, bundle in v1_bundles().items():
        report = verify_bundle(bundle)
        assert report.ok, (name, report.first)
        assert report.checks["dag"] == "held"
        events = [as_event(e) for e in bundle["events"]]
        check = check_run(bundle["run_id"], events, None)
        assert check.dag is not None and check.dag.version == 1 and not check.divergences
        got = [n.stage for n in check.dag.nodes]
        assert got == want[name] if isinstance(want[name], list) else len(got) == want[name]


# -- tampering ----------------------------------------------------------------------------


@pytest.fixture
def two(ledger_url: str, tmp_path: Path) -> Iterator[tuple[Built, str]]:
    """A fresh ledger of each backend: the four runs of :class:`Built` in version 1, then
    one version-2 quote run."""
    with dag_version_1():
        b = build_ledger(ledger_url, tmp_path)
    try:
        yield b, v2_quote_run(b)
    finally:
        b.ledger.close()


def edit_payload(b: Built, ev: RecordedEvent, old: str, new: str) -> None:
    assert ev.payload.count(old) == 1, (old, ev.payload[:300])
    tamper(b.ledger, "UPDATE events SET payload = replace(payload, :a, :b) WHERE seq = :s",
           a=old, b=new, s=ev.seq)  # fmt: skip


def dag_details(b: Built, rid: str) -> list[tuple[str | None, str]]:
    return [(d.stage, d.detail) for d in check_run(rid, b.events(rid), None).divergences]


def test_an_edited_render_payload_breaks_the_version_2_root(two: tuple[Built, str]) -> None:
    b, v2 = two
    for rid in (v2, b.quote):
        ev = b.event(rid, "qa.answer_rendered")
        edit_payload(b, ev, '"render_version":"render/1"', '"render_version":"render/0"')
    report = replay(b.ledger)
    chain = report.first("chain")
    assert chain is not None and chain.detail == "payload_hash"
    dag = report.first("dag")
    assert dag is not None and (dag.run, dag.stage) == (v2, "render")
    found = dag_details(b, v2)
    assert ("render", "run_dag.nodes[6].stage_hash") in found
    assert ("final_label", "run_dag.root") in found
    assert ("complete", "run_dag_root") in found
    # version 1 never committed to the render event: its DAG still holds (the chain, and
    # --deep, are what name the edit there)
    assert dag_details(b, b.quote) == []


def test_a_careful_insiders_render_edit_moves_the_version_2_root(
    two: tuple[Built, str],
) -> None:
    b, v2 = two
    before = {rid: label_of(b.events(rid)).data["run_dag"]["root"] for rid in (v2, b.quote)}
    kept = checkpoint(b.ledger).to_dict()

    def edit(ev: RecordedEvent, data: dict[str, Any]) -> bool:
        if ev.type == "qa.answer_rendered" and ev.stream[4:] in before:
            data["render_version"] = "render/0"
            return True
        return False

    assert rewrite(b.ledger, edit) > 0
    after = {rid: label_of(b.events(rid)).data["run_dag"]["root"] for rid in before}
    assert after[v2] != before[v2]  # the root the user was given no longer matches
    assert after[b.quote] == before[b.quote]  # the gap version 2 closes
    assert replay(b.ledger, checkpoint=kept).first("checkpoint") is not None


def test_a_version_2_label_stripped_of_its_version_is_named(two: tuple[Built, str]) -> None:
    b, v2 = two
    edit_payload(b, b.event(v2, "qa.answer_labelled"), '"dag_version":2,', "")
    report = replay(b.ledger)
    assert report.first("chain") is not None
    dag = report.first("dag")
    assert dag is not None and dag.run == v2
    assert (
        dag.detail == "run_dag.nodes: the shape of DAG version 2, but the label records version 1"
    )
    found = dag_details(b, v2)
    assert ("final_label", "run_dag.version") in found and ("final_label", "run_dag.root") in found


def test_a_version_1_label_given_a_version_is_named(two: tuple[Built, str]) -> None:
    b, _ = two
    edit_payload(
        b, b.event(b.quote, "qa.answer_labelled"), ',"label":', ',"dag_version":2,"label":'
    )
    dag = replay(b.ledger).first("dag")
    assert dag is not None and dag.run == b.quote
    assert (
        dag.detail == "run_dag.nodes: the shape of DAG version 1, but the label records version 2"
    )
    assert ("final_label", "run_dag.version") in dag_details(b, b.quote)


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("1", "1"),
        ("3", "3"),
        ('"2"', '"2" (a string)'),
        ("null", "null"),
        ("true", "true (a boolean)"),
    ],
)
def test_a_version_no_pipeline_writes_is_named(
    two: tuple[Built, str], value: str, found: str
) -> None:
    b, v2 = two
    labelled = b.event(v2, "qa.answer_labelled")
    edit_payload(b, labelled, '"dag_version":2,', f'"dag_version":{value},')
    dag = replay(b.ledger).first("dag")
    assert dag is not None and dag.run == v2
    assert (dag.stage, dag.detail, dag.found) == ("final_label", "dag_version", found)


def test_a_run_dag_version_other_than_the_labels_is_named(two: tuple[Built, str]) -> None:
    b, v2 = two
    edit_payload(b, b.event(v2, "qa.answer_labelled"), ',"version":2}', "}")
    assert dag_details(b, v2) == [("final_label", "run_dag.version")]


def test_a_consistent_rewrite_to_version_1_needs_the_chain(two: tuple[Built, str]) -> None:
    """The careful insider strips the version and re-derives a version-1 DAG, the roots
    and the chain: a consistent version-1 run, which only a checkpoint kept outside the
    database tells from the run that was recorded."""
    b, v2 = two
    kept = checkpoint(b.ledger).to_dict()

    def edit(ev: RecordedEvent, data: dict[str, Any]) -> bool:
        if ev.type == "qa.answer_labelled" and ev.stream == f"run:{v2}":
            del data["dag_version"]
            return True
        return False

    assert rewrite(b.ledger, edit) > 0
    assert stages(b.events(v2)) == QUOTE_V1
    assert replay(b.ledger).first("dag") is None
    cp = replay(b.ledger, checkpoint=kept).first("checkpoint")
    assert cp is not None


def test_a_bundle_whose_version_was_changed_fails_the_dag_check(mixed: Mixed) -> None:
    cases = [(mixed.v2_quote, '"dag_version":2,', "", "version 2, but the label records version 1"),
             (mixed.built.quote, ',"label":', ',"dag_version":2,"label":',
              "version 1, but the label records version 2")]  # fmt: skip
    for rid, old, new, words in cases:
        bundle = export_run(mixed.built.ledger, rid)
        i = next(i for i, e in enumerate(bundle["events"]) if e["type"] == "qa.answer_labelled")
        bundle["events"][i]["payload"] = bundle["events"][i]["payload"].replace(old, new)
        report = verify_bundle(bundle)
        assert "events" in report.failures  # the payload hash no longer holds
        assert words in report.failures["dag"].detail
