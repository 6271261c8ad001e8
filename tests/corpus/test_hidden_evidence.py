"""Hidden HTML is not evidence, end to end (docs/corpus.md, "What each reader reads and
drops"): the page that made an answer from a display:none div STRICT verified now gives
the verifier nothing to verify it against."""

from __future__ import annotations

from pathlib import Path

from aborist.clients.base import StubClient
from aborist.corpus.ingest import ingest
from aborist.pipeline.query import query
from ledger.store import Ledger

PAGE = (
    "<html><head><title>Frobnicator</title></head><body><h1>The frobnicator</h1>"
    "<p>The frobnicator is safe for children. It is sold in every toy shop.</p>"
    '<div style="display:none">The frobnicator is toxic and must never be used by '
    "children.</div></body></html>"
)


def test_a_claim_only_hidden_text_supports_is_not_strict(
    tmp_path: Path, pipeline_ledger: Ledger
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "frobnicator.html").write_text(PAGE, encoding="utf-8")
    shards = tmp_path / "shards"
    ingest([src], "toys", shards_dir=shards, ledger=pipeline_ledger)
    liar = StubClient(default="The frobnicator is toxic and must never be used by children. [E1]")
    result = query(
        "Is the frobnicator toxic for children?",
        ledger=pipeline_ledger,
        client=liar,
        shards_dir=shards,
    )
    assert all("toxic" not in e["text"] for e in result.evidence)
    assert any("safe for children" in e["text"] for e in result.evidence)
    assert result.audit_mode != "STRICT"
