"""The answer as the ask page shows it: each claim marked verified / supported /
unsupported and linked to its evidence, each excerpt with the claim's words highlighted,
with its locator. Built from the recorded run (a cache hit shows the run it served), so
the page shows what the ledger holds, not what the request returned."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aborist.audit.report import cited_excerpts
from aborist.events import AnswerLabelled, AnswerRendered, RunCompleted
from aborist.pipeline.recorded import RecordedRun, load_run
from aborist.server.layout import e
from ledger.store import Ledger

__all__ = ["claim_mark", "render_answer"]


def claim_mark(unit: Mapping[str, Any]) -> str:
    """verified: a verbatim match; supported: verified by a looser strategy (span, entity,
    paraphrase, lattice); unsupported: not verified (docs/verifier.md)."""
    if not unit.get("verified"):
        return "unsupported"
    return "verified" if unit.get("grade") == "verbatim" else "supported"


def _anchor(evidence_id: str) -> str:
    return "ev-" + "".join(c if c.isalnum() or c in "_-" else "_" for c in evidence_id)


def _locator(record: Mapping[str, Any]) -> str:
    loc = record.get("locator")
    if isinstance(loc, Mapping):
        return ", ".join(f"{k} {v}" for k, v in sorted(loc.items()) if v not in (None, "", []))
    return "" if loc is None else str(loc)


def render_answer(ledger: Ledger, run: RecordedRun) -> str:
    """The answer block and its evidence, as escaped HTML."""
    source = run
    out: list[str] = []
    if run.status == "cached":
        done = run.get(RunCompleted)
        served = str(done.served_from_run_id if done else None)
        out.append(
            f'<p class="meta">Served from the answer cache (run <code>{e(served)}</code>).</p>'
        )
        source = load_run(ledger, served)
    labelled = source.get(AnswerLabelled)
    rendered = source.get(AnswerRendered)
    if rendered is None:
        return "".join(out) + '<p class="error">The run has no rendered answer.</p>'
    mode = labelled.audit_mode if labelled else ""
    out.append(
        f'<p><span class="badge mode-{e(mode)}" id="audit-mode">{e(mode)}</span> '
        f'label <b id="label">{e(labelled.label if labelled else None)}</b> · run '
        f'<a id="run-link" href="/runs/{e(run.run_id)}"><code>{e(run.run_id)}</code></a></p>'
    )
    records = source.evidence_records()
    pointers = {str(r.get("evidence_id")): str(r.get("pointer_id")) for r in records}
    units = rendered.units
    out.append('<div class="answer" id="answer">')
    for u in units:
        mark = claim_mark(u)
        links = " ".join(
            f'<a href="#{_anchor(str(eid))}">[{e(pointers.get(str(eid), eid))}]</a>'
            for eid in u.get("evidence_ids", [])
        )
        out.append(
            f'<span class="claim verdict-{mark}" data-mark="{mark}" id="claim-{e(u.get("index"))}">'
            f'<span class="mark">{mark}</span>{e(u.get("text"))}{links}</span>'
        )
    if not units:
        out.append(f"<pre>{e(rendered.answer)}</pre>")
    out.append("</div>")
    cited_by = cited_excerpts(rendered.citations, units)
    if records:
        out.append("<h2>Evidence</h2>")
    for r in records:
        eid = str(r.get("evidence_id"))
        if eid in cited_by:
            cited, body = cited_by[eid]
            locator = _locator(cited) or _locator(r)
        else:
            body, locator = '<span class="meta">not cited by a verified claim</span>', _locator(r)
        where = f" · {e(locator)}" if locator else ""
        out.append(
            f'<div class="evidence" id="{_anchor(eid)}"><b>{e(r.get("pointer_id"))}</b> '
            f'{e(r.get("title"))} <span class="meta">{e(r.get("source_uri"))}{where}</span>'
            f'<p class="excerpt">{body}</p></div>'
        )
    return "".join(out)
