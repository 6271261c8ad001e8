"""A multi-page PDF all the way through (docs/corpus.md, "Locators"): ingest, retrieval,
the recorded evidence, `aborist query`'s citation, the audit report and the bundle name
the page the answer is on — on SQLite and PostgreSQL ledgers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aborist.audit.bundle import verify_bundle
from aborist.audit.bundle_export import export_run
from aborist.audit.report import render_report
from aborist.clients.extractive import ExtractiveClient
from aborist.corpus.ingest import ingest
from aborist.events import run_stream
from aborist.pipeline.query import query
from cli.query_view import source_line
from ledger.store import Ledger
from tests.corpus.documents import make_pdf

PAGES = [
    ["Preface.", "This handbook describes the cooling plant of the Eldoria mill."],
    ["Contents.", "Chapter one: pumps. Chapter two: valves."],
    ["Chapter one: pumps.", "The Eldoria mill runs three centrifugal pumps."],
    ["Chapter two: valves.", "The relief valve of the Eldoria mill opens at 7 bar."],
    ["Index.", "Pumps, valves, bar."],
]


def _ingest(tmp_path: Path, ledger: Ledger) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "plant-handbook.pdf").write_bytes(
        make_pdf(PAGES, title="Plant Handbook", roman_front_pages=2)
    )
    shards = tmp_path / "shards"
    ingest([src], "plant", shards_dir=shards, ledger=ledger)
    return shards


def test_the_evidence_names_the_page_of_the_answer(tmp_path: Path, pipeline_ledger: Ledger) -> None:
    shards = _ingest(tmp_path, pipeline_ledger)
    result = query(
        "At what pressure does the relief valve of the Eldoria mill open?",
        ledger=pipeline_ledger,
        client=ExtractiveClient(),
        shards_dir=shards,
    )
    assert "7 bar" in result.answer
    cited = {c["pointer_id"] for c in result.citations}
    evidence = {e["pointer_id"]: e for e in result.evidence}
    valve = [e for p, e in evidence.items() if p in cited and "7 bar" in e["text"]]
    assert [e["locator"] for e in valve] == [{"page": 4, "page_label": "2"}]
    shown = source_line(valve[0]["title"], valve[0]["source_uri"], valve[0]["locator"])
    assert shown == "Plant Handbook — plant-handbook.pdf p. 2 (page 4 of the file)"

    events = {e.type: json.loads(e.payload) for e in pipeline_ledger.read_stream(
        run_stream(result.run_id))}  # fmt: skip
    candidates: list[dict[str, Any]] = events["qa.retrieval_completed"]["retrieval"]["candidates"]
    selected = [c["locator"] for c in candidates if c["decision"] == "selected"]
    assert {"page": 4, "page_label": "2"} in selected
    recorded = events["qa.evidence_mapped"]["evidence"]
    assert {"page": 4, "page_label": "2"} in [r["locator"] for r in recorded]

    report = render_report(pipeline_ledger, result.run_id)
    assert '<span class="locator">p. 2 (page 4 of the file)</span>' in report
    bundle = export_run(pipeline_ledger, result.run_id)
    (mapped,) = [e for e in bundle["events"] if e["type"] == "qa.evidence_mapped"]
    payload = (
        json.loads(mapped["payload"]) if isinstance(mapped["payload"], str) else mapped["payload"]
    )
    assert {"page": 4, "page_label": "2"} in [r["locator"] for r in payload["evidence"]]
    assert verify_bundle(bundle).ok
