"""The one-page HTML audit report: DOM assertions on the
parsed HTML for every kind of run on SQLite and PostgreSQL, hostile input escaped, and a
headless Chromium render (skipped with a reason when ``chromium`` is not on PATH).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from aborist.audit.report import highlight, render_report
from aborist.errors import InputError
from cli.audit.audit_cmd import report as report_command
from cli.audit.ledger_cli import cli
from ledger.tlog.proofs import checkpoint
from tests.audit.conftest import HOSTILE_QUESTION, Audited
from tests.html_dom import Dom

if "report" not in cli.commands:
    cli.add_command(report_command)


def assert_self_contained(dom: Dom) -> None:
    assert not dom.find("script") and not dom.find("img") and not dom.find("iframe")
    assert not dom.find("link")
    for n in dom.all:
        for k, v in n.attrs.items():
            assert not k.startswith("on"), (n.tag, k)
            if k in ("href", "src"):
                assert v.startswith("#"), (n.tag, k, v)  # in-page anchors only


def test_claim_lattice_report(audited: Audited) -> None:
    b = audited.built
    checkpoint(b.ledger)
    dom = Dom(render_report(b.ledger, b.lattice))
    assert_self_contained(dom)
    assert dom.by_id("question").all_text() == "How long is the Silverrun River?"
    assert dom.by_id("audit-mode").all_text() == "STRICT"
    assert dom.by_id("rung").all_text() == "1"
    rendered = b.event(b.lattice, "qa.answer_rendered").data
    units = dom.find("span", "unit")
    assert len(units) == len(rendered["units"]) > 0
    ids = {n.attrs["id"] for n in dom.all if "id" in n.attrs}
    for node, unit in zip(units, rendered["units"], strict=True):
        want = "verdict-verbatim" if unit["grade"] == "verbatim" else "verdict-supported"
        assert (want if unit["verified"] else "verdict-unverified") in node.cls()
        assert unit["text"] in node.all_text()
        links = [c for c in node.children if c.tag == "a"]
        assert len(links) == len(unit["evidence_ids"]) > 0
        for a in links:
            assert a.attrs["href"][1:] in ids  # every link lands on an evidence block
    marks = dom.find("mark")
    assert marks and any("412 kilometres" in m.all_text() for m in marks)
    # the DAG: one node per stage, full hashes in <title>, the recorded root shown
    nodes = dom.find("g", "dag-node")
    dag = b.event(b.lattice, "qa.answer_labelled").data["run_dag"]
    assert [n.attrs["id"] for n in nodes] == [f"node-{x['stage']}" for x in dag["nodes"]]
    for g, want in zip(nodes, dag["nodes"], strict=True):
        title = next(c for c in g.children if c.tag == "title").all_text()
        assert want["node_hash"] in title and want["stage_hash"] in title
    assert len(dom.find("svg")) == 1 and len(dom.find("line", "edge")) + len(
        dom.find("path", "edge")
    ) == sum(len(x["parents"]) for x in dag["nodes"])
    assert dom.by_id("dag-root").all_text() == dag["root"]
    assert dom.by_id("dag-state").all_text() == "recomputed from the events: it matches"
    # chain position and checkpoint
    rows = dom.by_id("chain").children[1:]
    assert [int(r.children[0].all_text()) for r in rows] == [e.seq for e in b.events(b.lattice)]
    cp = b.ledger.checkpoints()[-1]
    assert f"tree size {cp.tree_size}" in dom.by_id("checkpoint").all_text()
    assert cp.root in dom.by_id("checkpoint").all_text()
    assert "inclusion verified for every event" in dom.by_id("checkpoint").all_text()


def test_quote_repaired_cached_and_failed_runs(audited: Audited) -> None:
    b = audited.built
    quote = Dom(render_report(b.ledger, b.quote))
    assert len(quote.find("g", "dag-node")) == 8  # DAG version 2: a render node
    mech = Dom(render_report(b.ledger, audited.mechanical))
    assert "UNGROUNDED → STRICT" in mech.by_id("repair-transition").all_text()
    assert "(Source: Rivers of Eldoria)" in mech.by_id("repair-original").all_text()
    assert "(Source:" not in mech.by_id("repair-repaired").all_text()
    assert mech.by_id("repair-changes").children
    assert "node-repair" in {n.attrs["id"] for n in mech.find("g", "dag-node")}
    hit = Dom(render_report(b.ledger, b.hit))
    assert b.lattice in hit.text()  # served from the original run
    assert hit.find("span", "unit")
    failed = Dom(render_report(b.ledger, b.failed))
    assert "Run failed at stage" in failed.text()
    assert not failed.find("svg")
    with pytest.raises(InputError, match="no run"):
        render_report(b.ledger, "nope")


def test_hostile_question_and_answer_are_escaped(audited: Audited) -> None:
    html = render_report(audited.built.ledger, audited.hostile)
    dom = Dom(html)
    assert_self_contained(dom)
    assert dom.by_id("question").all_text() == HOSTILE_QUESTION
    assert "<script>" not in html and 'evil.example/">' not in html
    assert '<script>alert("a")</script>' in dom.by_id("answer").all_text()
    for unit in dom.find("span", "unit"):
        assert set(unit.attrs) == {"class", "id", "data-verdict", "title"}


def test_highlight_marks_claim_words_and_escapes() -> None:
    out = highlight("a <b> The river is 412 km long & wide", ["The river is 412 km long"])
    assert out == "a &lt;b&gt; <mark>The river is 412 km long</mark> &amp; wide"
    assert highlight("x y", ["x y"]) == "x y"  # shorter than three words: no mark


def test_cli_report(audited: Audited, tmp_path: Path) -> None:
    out = tmp_path / "run.html"
    res = CliRunner().invoke(
        cli, ["report", audited.built.quote, "-o", str(out), "--db", audited.built.url]
    )
    assert res.exit_code == 0, res.output
    assert Dom(out.read_text(encoding="utf-8")).by_id("question").all_text()
    res = CliRunner().invoke(cli, ["report", "nope", "-o", str(out), "--db", audited.built.url])
    assert res.exit_code == 1 and "no run" in res.output


# -- headless Chromium ----------------------------------------------------------------------


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="chromium not on PATH (CI installs Debian's chromium package in .ci/run)",
)
def test_chromium_renders_the_report(audited: Audited, tmp_path: Path) -> None:
    b = audited.built
    page = tmp_path / "run.html"
    page.write_text(render_report(b.ledger, audited.mechanical), encoding="utf-8")
    base = [
        "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dumped = subprocess.run(
        [*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=60
    )
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = Dom(dumped.stdout)
    assert dom.by_id("question").all_text() == "Where does the Silverrun River flow?"
    assert len(dom.find("g", "dag-node")) == 10  # claim-lattice + repair
    assert dom.find("span", "verdict-verbatim")
    assert dom.find("mark")
    shot = tmp_path / "shot.png"
    res = subprocess.run(
        [
            *base,
            "--hide-scrollbars",
            "--window-size=1100,1600",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0 and shot.exists(), res.stderr[-2000:]
    data = shot.read_bytes()
    assert png_size(data) == (1100, 1600)
    assert len(data) > 20_000  # a page with text and colour, not a blank image
