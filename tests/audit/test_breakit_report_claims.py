"""Break the report's claims, then mend them. Both backends.

- A recorded checkpoint whose ``created_at`` is no timestamp the ledger writes (``verify``
  and ``replay`` reject it) covered the run on the page: "recorded not-a-time; … inclusion
  verified for every event". A checkpoint the audit rejects for its form is no cover here.
- "inclusion verified for every event" read as anchored: it is the tree a checkpoint
  recorded in the ledger's own database names, and the page now says so.
- A run's recorded DAG forged consistently (node and root hashes recomputed, every later
  event hash too, projections rebuilt) with an edge to a node of another run, or to no
  node at all: the check says the DAG does not match, but the drawing silently left the
  edge out. The page names such an edge; ``replay`` names the node's parents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aborist.audit import replay
from aborist.audit.report import render_report
from aborist.pipeline.dag import node_hash
from cli.audit.ledger_cli import cli
from ledger.canonical import canonical_text
from ledger.tlog.proofs import checkpoint, tree_root
from tests.audit.builders import Built
from tests.html_dom import Dom
from tests.ledger.tamper import tamper
from tests.ledger.test_verify_chain_roots import _rechain


def test_a_checkpoint_the_audit_rejects_covers_nothing_on_the_page(built: Built) -> None:
    lg = built.ledger
    checkpoint(lg)
    honest = Dom(render_report(lg, built.quote)).by_id("checkpoint").all_text()
    assert "inclusion verified for every event" in honest  # the control
    assert "recorded in the ledger's own database" in honest, honest
    tamper(lg, "UPDATE checkpoints SET created_at = 'not-a-time'")
    dom = Dom(render_report(lg, built.quote))
    state = dom.by_id("checkpoint").all_text()
    assert "inclusion verified" not in state and "not-a-time" not in state, state
    assert "in the form the ledger writes" in state, state
    assert "not in the form the ledger writes" in dom.by_id("checkpoint-malformed").all_text()
    # a smaller, well-formed checkpoint that still covers the run is the one used
    size = built.events(built.quote)[-1].seq
    root = tree_root(lg.event_hashes(size))
    tamper(lg, "INSERT INTO checkpoints (tree_size, root, created_at) VALUES (:n, :r, :t)",
           n=size, r=root, t="2026-11-29T19:35:33.123456Z")  # fmt: skip
    state = Dom(render_report(lg, built.quote)).by_id("checkpoint").all_text()
    assert f"tree size {size}" in state and "inclusion verified for every event" in state


def _forge_dag(built: Built, extra_parent: str) -> Any:
    """The quote run's recorded DAG with one more parent on its prompt node, every node
    hash, the root (in the label, the cache write and the completion) and every later
    event hash recomputed, and the projections rebuilt: a consistent forgery."""
    lg = built.ledger
    label = built.event(built.quote, "qa.answer_labelled")
    data = label.data
    dag = data["run_dag"]
    renamed: dict[str, str] = {}
    for n in dag["nodes"]:
        parents = [renamed.get(p, p) for p in n["parents"]]
        if n["stage"] == "prompt":
            parents.append(extra_parent)
        h = node_hash(n["stage"], n["stage_hash"], tuple(parents))
        renamed[n["node_hash"]] = h
        n["parents"], n["node_hash"] = parents, h
    old_root, dag["root"] = dag["root"], dag["nodes"][-1]["node_hash"]
    _rechain(lg, label.seq, payload=canonical_text(data))
    for later in built.events(built.quote):
        if later.seq > label.seq and old_root in later.payload:
            _rechain(lg, later.seq, payload=later.payload.replace(old_root, dag["root"]))
    result = CliRunner().invoke(cli, ["rebuild", "--force", "--db", built.url])
    assert result.exit_code == 0, result.output
    return label


@pytest.mark.parametrize("where", ["another run", "nowhere"])
def test_a_dag_edge_outside_the_run_is_named(built: Built, where: str) -> None:
    lattice_nodes = built.event(built.lattice, "qa.answer_labelled").data["run_dag"]["nodes"]
    outside = lattice_nodes[0]["node_hash"] if where == "another run" else "f" * 64
    label = _forge_dag(built, outside)
    report = replay(built.ledger)
    d = report.first("dag")
    assert d is not None and d.seq == label.seq and d.run == built.quote, report.to_dict()
    assert d.stage == "prompt" and d.detail.endswith(".parents") and outside in d.found, d
    dom = Dom(render_report(built.ledger, built.quote))
    assert "does NOT match" in dom.by_id("dag-state").all_text()
    named = dom.by_id("dag-outside").all_text()
    assert "1 recorded edge(s)" in named and "node prompt" in named and outside in named, named


def test_an_honest_dag_has_no_outside_edge(built: Built) -> None:
    dom = Dom(render_report(built.ledger, built.quote))
    assert "does NOT match" not in dom.by_id("dag-state").all_text()
    assert not [n for n in dom.all if n.attrs.get("id") == "dag-outside"]


def _report_cli(built: Built, tmp_path: Path, run_id: str) -> Any:
    out = tmp_path / "r.html"
    return CliRunner().invoke(cli, ["report", run_id, "-o", str(out), "--db", built.url]), out


def test_report_exits_1_when_its_page_shows_the_run_does_not_hold(
    built: Built, tmp_path: Path
) -> None:
    """The page said "does NOT match" or "inclusion FAILED", and `report` exited 0 with
    "wrote run.html": a script read that as the run held. It now says what the page shows
    in one line on stderr and exits 1; the page is still written."""
    checkpoint(built.ledger)
    result, out = _report_cli(built, tmp_path, built.quote)
    assert result.exit_code == 0 and result.stderr == "", result.stderr  # the control
    _forge_dag(built, "f" * 64)
    result, out = _report_cli(built, tmp_path, built.quote)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(
        f"report: wrote {out}, which shows the run does not hold: its run DAG recomputed "
        "from the events does not match (+"
    ), result.stderr
    assert "dag-outside" in out.read_text(encoding="utf-8")


def test_report_exits_1_for_a_malformed_covering_checkpoint(built: Built, tmp_path: Path) -> None:
    checkpoint(built.ledger)
    tamper(built.ledger, "UPDATE checkpoints SET created_at = 'not-a-time'")
    result, _ = _report_cli(built, tmp_path, built.lattice)
    assert result.exit_code == 1
    assert "1 recorded checkpoint(s) covering it are malformed" in result.stderr, result.stderr
