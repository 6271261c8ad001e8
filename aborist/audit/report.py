"""The one-page audit report of a run.

:func:`render_report` reads one run from the ledger and writes ONE self-contained HTML
file: inline CSS and SVG, no script, no network, no external asset, so it can be mailed,
archived, and opened offline years later. It shows the question; the answer with each
unit coloured by its verdict and linked (``#ev-…``) to its evidence; each evidence excerpt
with the claim's words highlighted (``<mark>``) inside the spotlight and where it sits in
its source (its locator: PDF page, heading path and paragraph, line); the audit mode and
the display ladder's rung (:mod:`aborist.verify.ladder`); the repair transition when there was
one; the run DAG as an SVG (one box per stage, edges to its parents, each node's hash
abbreviated with the full hashes in a ``<title>``); and the run's chain position and the
checkpoint covering it, with every inclusion proof verified.

Every string from the ledger is escaped (:func:`html.escape`), attribute values included:
a hostile question, answer or evidence text cannot inject markup. Read-only: nothing is
appended to the ledger (a run no checkpoint covers says so, rather than recording one).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from hashlib import sha256
from html import escape
from typing import Any

from aborist.audit.checks.checkpoints import is_root_hex
from aborist.audit.checks.dags import check_run
from aborist.audit.findings import clip
from aborist.audit.report_dag import dag_svg, outside_parents
from aborist.audit.report_style import CSS as _CSS
from aborist.corpus.readers.model import describe_locator
from aborist.events import (
    AnswerLabelled,
    AnswerRendered,
    AnswerRepaired,
    AnswerVerified,
    RunCompleted,
    RunFailed,
)
from aborist.pipeline.recorded import RecordedRun, load_run
from aborist.verify.ladder import LADDER, ladder_rung
from ledger.chain import event_hash_of
from ledger.envelope import RecordedEvent
from ledger.envelope_check import check_recorded_at
from ledger.store import Ledger
from ledger.tlog import merkle

__all__ = [
    "ReportPage", "cited_excerpts", "highlight", "render_report", "report_page", "report_result",
]  # fmt: skip

#: What reading a payload of another shape than the pipeline writes raises (a field that is
#: a string where a list or an object is read, a missing key, a value of no known form).
_SHAPE_ERRORS = (AttributeError, TypeError, KeyError, ValueError, IndexError)


_WORD = re.compile(r"\w+", re.UNICODE)


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def _anchor(evidence_id: str) -> str:
    return "ev-" + re.sub(r"[^A-Za-z0-9_-]", "_", evidence_id)


def _unit_class(unit: Mapping[str, Any]) -> str:
    if not unit.get("verified"):
        return "verdict-unverified"
    return "verdict-verbatim" if unit.get("grade") == "verbatim" else "verdict-supported"


def cited_excerpts(
    citations: Sequence[Mapping[str, Any]], units: Sequence[Mapping[str, Any]]
) -> dict[str, tuple[Mapping[str, Any], str]]:
    """Per cited evidence id, its citation and its spotlight excerpt with the words of the
    claims that cite it marked (:func:`highlight`): what the report and the web pages show
    of a cited passage."""
    texts = {u.get("index"): str(u.get("text")) for u in units}
    out: dict[str, tuple[Mapping[str, Any], str]] = {}
    for c in citations:
        claims = [texts.get(i, "") for i in c.get("units", [])]
        out[str(c.get("evidence_id"))] = (c, highlight(str(c.get("excerpt", "")), claims))
    return out


def highlight(excerpt: str, claims: Sequence[str], *, min_run: int = 4) -> str:
    """``excerpt`` escaped, with every run of at least ``min_run`` consecutive words that
    all occur in one of ``claims`` wrapped in ``<mark>`` (the claim's words inside the
    spotlight)."""
    wanted = {w.lower() for c in claims for w in _WORD.findall(c)}
    spans: list[tuple[int, int]] = []
    run: list[re.Match[str]] = []
    for m in [*_WORD.finditer(excerpt), None]:
        if m is not None and m.group().lower() in wanted:
            run.append(m)
            continue
        if len(run) >= min_run:
            spans.append((run[0].start(), run[-1].end()))
        run = []
    out, at = [], 0
    for start, end in spans:
        out.append(_e(excerpt[at:start]))
        out.append(f"<mark>{_e(excerpt[start:end])}</mark>")
        at = end
    out.append(_e(excerpt[at:]))
    return "".join(out)


class _Page:
    def __init__(self, ledger: Ledger, run: RecordedRun) -> None:
        self.ledger = ledger
        self.run = run
        self.source = run  # the run whose answer is shown (a cache hit's served run)
        self.out: list[str] = []
        #: The sections that could not be read (a payload of another shape): named on the
        #: page in place of the section, and by :func:`report_page`.
        self.unreadable: list[str] = []
        #: What the page shows failed (the DAG does not match, an event breaks the run
        #: grammar or does not hash to its recorded hash, an inclusion fails, a checkpoint
        #: is malformed): one line each, for :func:`report_result` and the exit code.
        self.problems: list[str] = []

    def add(self, *html: str) -> None:
        self.out.extend(html)

    def header(self) -> None:
        r = self.run
        self.add(
            f'<header><h1>Audit report</h1><p class="meta">run <code>{_e(r.run_id)}'
            f'</code> · status <b class="status">{_e(r.status)}</b> · mode '
            f"<b>{_e(r.mode)}</b></p></header>"
        )
        self.add("<h2>Question</h2>", f'<p class="question" id="question">{_e(r.question)}</p>')
        if r.status == "cached":
            done = r.payload(RunCompleted) or {}
            served = str(done.get("served_from_run_id"))
            self.add(
                f'<p class="meta">Served from the answer cache: the answer, evidence and '
                f"DAG below are those of run <code>{_e(served)}</code>.</p>"
            )
            try:
                self.source = load_run(self.ledger, served)
            except Exception:  # a report must still render what is there
                self.problems.append("the run it served from is not in the ledger")
                self.add('<p class="bad">The served run is not in the ledger.</p>')
        failed = r.payload(RunFailed)
        if failed is not None:
            self.add(
                f'<p class="bad">Run failed at stage {_e(failed.get("stage"))}: '
                f"{_e(failed.get('error_type'))}: {_e(failed.get('message'))}</p>"
            )

    def verdict(self) -> None:
        s = self.source
        labelled = s.payload(AnswerLabelled)
        verified = s.payload(AnswerVerified)
        if labelled is None:
            self.add("<h2>Verdict</h2><p>The run was not labelled.</p>")
            return
        mode = str(labelled.get("audit_mode"))
        repaired = s.payload(AnswerRepaired)
        final = (repaired or {}).get("outcome", {}).get("post_verdict") if repaired else None
        violations = (final or (verified or {}).get("verdict") or {}).get("violations", [])
        try:
            rung = ladder_rung(mode, violations)
            name, meaning = LADDER[rung - 1][1], LADDER[rung - 1][2]
        except ValueError:
            rung, name, meaning = 0, "unknown", "audit mode not recognised"
        self.add(
            "<h2>Verdict</h2>",
            f'<p id="verdict"><span class="badge mode-{_e(mode)}" id="audit-mode">'
            f'{_e(mode)}</span> ladder rung <b id="rung">{rung}</b> of 4: '
            f"<b>{_e(name)}</b> — {_e(meaning)}. Label <b>{_e(labelled.get('label'))}</b>."
            "</p>",
        )

    def answer(self) -> None:
        rendered = self.source.payload(AnswerRendered)
        if rendered is None:
            return
        units = rendered.get("units", [])
        self.add('<h2>Answer</h2><div class="answer" id="answer">')
        pointers = {
            str(r.get("evidence_id")): str(r.get("pointer_id"))
            for r in self.source.evidence_records()
        }
        for u in units:
            links = " ".join(
                f'<a href="#{_anchor(str(eid))}">[{_e(pointers.get(str(eid), eid))}]</a>'
                for eid in u.get("evidence_ids", [])
            )
            state = "verified" if u.get("verified") else "unverified"
            self.add(
                f'<span class="unit {_unit_class(u)}" id="unit-{_e(u.get("index"))}" '
                f'data-verdict="{state}" title="{_e(state)}, {_e(u.get("grade"))}, '
                f'{_e(u.get("strategy"))}">{_e(u.get("text"))}{links}</span>'
            )
        if not units:
            self.add(f"<pre>{_e(rendered.get('answer'))}</pre>")
        self.add("</div>")

    def evidence(self) -> None:
        s = self.source
        rendered = s.payload(AnswerRendered) or {}
        cited = cited_excerpts(rendered.get("citations", []), rendered.get("units", []))
        records = s.evidence_records()
        if not records:
            return
        self.add("<h2>Evidence</h2>")
        for r in records:
            eid = str(r.get("evidence_id"))
            if eid in cited:
                body = cited[eid][1]
                note = "spotlight excerpt; the supported claim's words are marked"
            else:
                body, note = "", "not cited by a verified claim"
            locator = r.get("locator")
            where = describe_locator(locator) if isinstance(locator, Mapping) else ""
            at = f' <span class="locator">{_e(where)}</span>' if where else ""
            self.add(
                f'<div class="evidence" id="{_anchor(eid)}"><b>{_e(r.get("pointer_id"))}'
                f"</b> <code>{_e(eid)}</code> — {_e(r.get('title'))}{at} "
                f'<span class="meta">{_e(r.get("source_uri"))} · {_e(note)}</span>'
                f'<p class="excerpt">{body}</p></div>'
            )

    def repair(self) -> None:
        repaired = self.source.payload(AnswerRepaired)
        if repaired is None:
            return
        o = repaired.get("outcome", {})
        self.add(
            f"<h2>Repair ({_e(repaired.get('method'))})</h2>",
            f'<p id="repair-transition">{_e(o.get("pre_repair_audit_mode"))} → '
            f'{_e(o.get("post_repair_audit_mode"))}</p><div class="repair">'
            f'<div><b>original</b><pre id="repair-original">{_e(o.get("original_text"))}'
            f'</pre></div><div><b>repaired</b><pre id="repair-repaired">'
            f"{_e(o.get('repaired_text'))}</pre></div></div>",
        )
        changes = o.get("changes", [])
        if changes:
            self.add('<table id="repair-changes"><tr><th>#</th><th>change</th></tr>')
            for i, c in enumerate(changes, start=1):
                desc = (
                    ", ".join(f"{k}: {v}" for k, v in sorted(c.items()))
                    if isinstance(c, Mapping)
                    else str(c)
                )
                self.add(f"<tr><td>{i}</td><td>{_e(desc)}</td></tr>")
            self.add("</table>")

    def dag(self) -> None:
        s = self.source
        labelled = s.payload(AnswerLabelled)
        if labelled is None:
            return
        recorded = labelled.get("run_dag", {})
        nodes = recorded.get("nodes", []) if isinstance(recorded, Mapping) else []
        try:
            check = check_run(s.run_id, s.events, None)
            holds = check.dag is not None and not check.divergences
        except (KeyError, TypeError, ValueError, AttributeError):
            holds = False
        if not holds:
            self.problems.append("its run DAG recomputed from the events does not match")
        state = (
            '<span class="ok" id="dag-state">recomputed from the events: it matches</span>'
            if holds
            else '<span class="bad" id="dag-state">recomputed from the events: it does NOT match '
            "(run aborist-ledger replay)</span>"
        )
        self.add(
            "<h2>Run DAG</h2>",
            f'<p>root <code id="dag-root">{_e(recorded.get("root"))}</code> · {state}</p>',
            dag_svg(nodes),
        )
        outside = outside_parents(nodes)
        if outside:  # an edge the drawing cannot show: its parent is no node of this DAG
            stage, parent = outside[0]
            self.problems.append(f"{len(outside)} recorded DAG edge(s) leave the run")
            self.add(
                f'<p class="bad" id="dag-outside">{len(outside)} recorded edge(s) name a '
                f"parent that is no node of this run's DAG, so the drawing leaves them out: "
                f"the first, of node {_e(stage)}, names <code>{_e(parent)}</code>.</p>"
            )

    def chain(self) -> None:
        events = list(self.run.events)
        self.add("<h2>Chain position</h2>")
        if self.source is not self.run:  # the answer shown is the served run's: its events
            shown = {ev.seq: ev for ev in (*self.source.events, *events)}  # are checked too
            events = [shown[k] for k in sorted(shown)]
            self.add(
                f'<p id="served-events">The answer and verdict shown are those of run '
                f"<code>{_e(self.source.run_id)}</code>, which this hit served: its events "
                "are listed and checked with the hit's own.</p>"
            )
            served = self.source
            if served.broken is not None or served.status != "completed":
                why = (f"its events from seq {served.broken.seq} on break the run grammar "
                       f"({served.broken.rule})" if served.broken is not None
                       else f"its status is {served.status}")  # fmt: skip
                self.problems.append(f"the run it served from does not hold: {why}")
                self.add(
                    f'<p class="bad" id="served-history">Run <code>{_e(served.run_id)}</code> '
                    f"is no completed run whose answer this hit could serve: {_e(why)}; run "
                    "<code>aborist-ledger replay</code>.</p>"
                )
        broken = self.run.broken
        if broken is not None:
            self.problems.append(f"events from seq {broken.seq} on break the run grammar")
            self.add(
                f'<p class="bad" id="history">The run\'s stream has {self.run.ignored} '
                f"event(s) from seq {broken.seq} on that break the run grammar "
                f"({_e(broken.rule)}): they are not part of this run, and nothing here is "
                "read from them; run <code>aborist-ledger replay</code>.</p>"
            )
        included = self._inclusion(events)
        self.add(
            '<table id="chain"><tr><th>seq</th><th>#</th><th>event</th><th>hash</th>'
            "<th>included</th></tr>"
        )
        for ev in events:
            mark = included.get(ev.seq)
            cell = (
                "—"
                if mark is None
                else ('<span class="ok">✓</span>' if mark else '<span class="bad">✗</span>')
            )
            self.add(
                f"<tr><td>{ev.seq}</td><td>{ev.stream_seq}</td><td>{_e(ev.type)}</td>"
                f'<td class="mono" title="{_e(ev.hash)}">{_e(ev.hash[:16])}…</td>'
                f"<td>{cell}</td></tr>"
            )
        self.add("</table>")

    def _inclusion(self, events: Sequence[RecordedEvent]) -> dict[int, bool]:
        outside = [ev for ev in events if type(ev.seq) is not int or ev.seq < 1]
        if outside:  # a row a plain INSERT put below seq 1 is in no tree: none is included
            ev = outside[0]
            self.problems.append(f"an event of the run has seq {clip(repr(ev.seq))}")
            self.add(
                f'<p class="bad" id="checkpoint">The event at stream position '
                f"{_e(ev.stream_seq)} has seq {_e(repr(ev.seq))}, which is no position in the "
                "chain (seqs start at 1): no checkpoint includes it, and no inclusion is "
                "verified; run <code>aborist-ledger verify</code>.</p>"
            )
            return {e.seq: False for e in events}
        last = max(ev.seq for ev in events)
        reach = [
            cp
            for cp in self.ledger.checkpoints()
            if type(cp.tree_size) is int and cp.tree_size >= last
        ]
        # A row the audit rejects for its form (a root not 64 lower-case hex digits, a
        # created_at the ledger never writes) vouches for nothing here either.
        covering = [
            cp for cp in reach if is_root_hex(cp.root) and check_recorded_at(cp.created_at) is None
        ]
        if len(covering) < len(reach):
            n = len(reach) - len(covering)
            self.problems.append(f"{n} recorded checkpoint(s) covering it are malformed")
            self.add(
                f'<p class="bad" id="checkpoint-malformed">{n} recorded checkpoint(s) of a '
                f"size that covers this run are not in the form the ledger writes (a root or "
                "created_at written around the library): none is used here; run "
                "<code>aborist-ledger verify</code>.</p>"
            )
        if not covering:
            self.add(
                f'<p id="checkpoint">No recorded checkpoint covers this run yet (seq '
                f"{last}){' in the form the ledger writes' if reach else ''}; run "
                "<code>aborist-ledger checkpoint</code>.</p>"
            )
            return {}
        cp = covering[-1]
        try:
            hashes = self.ledger.event_hashes(cp.tree_size)
            root = bytes.fromhex(cp.root)
        except (TypeError, ValueError):  # a hash or root a raw write left not hex
            hashes, root = [], b""  # ProofError is a ValueError: nothing is verified
        root_ok = len(hashes) == cp.tree_size and merkle.merkle_root(hashes) == root
        out: dict[int, bool] = {}
        # A stored hash in the tree says nothing of a payload edited after it was hashed:
        # an event is marked included only once its payload and header re-hash to it.
        edited = [ev.seq for ev in events if not _hashes_hold(ev)]
        for ev in events:
            ok = root_ok and ev.seq not in edited and hashes[ev.seq - 1].hex() == ev.hash
            if ok:
                proof = merkle.inclusion_proof(hashes, ev.seq - 1, cp.tree_size)
                leaf = merkle.leaf_hash(bytes.fromhex(ev.hash))
                ok = merkle.verify_inclusion(leaf, ev.seq - 1, cp.tree_size, proof, root)
            out[ev.seq] = ok
        if not all(out.values()):
            self.problems.append(
                f"event {edited[0]} does not hash to its recorded hash"
                if edited
                else "the inclusion of its events in the checkpoint fails"
            )
        verdict = (
            '<span class="ok">inclusion verified for every event</span> (in the tree this '
            "checkpoint, recorded in the ledger's own database, names: a checkpoint kept "
            "elsewhere is what anchors it, <code>aborist-ledger export</code> then "
            "<code>verify-bundle --checkpoint FILE</code>)"
            if all(out.values())
            else f'<span class="bad">event {edited[0]} does not hash to its recorded hash '
            "(run aborist-ledger replay)</span>"
            if edited
            else '<span class="bad">inclusion FAILED</span>'
        )
        self.add(
            f'<p id="checkpoint">Checkpoint: tree size <b>{cp.tree_size}</b>, root '
            f"<code>{_e(cp.root)}</code>, recorded {_e(cp.created_at)}; covers the run "
            f"(last seq {last}); {verdict}.</p>"
        )
        return out

    def html(self) -> str:
        sections = (("header", self.header), ("verdict", self.verdict),
                    ("answer", self.answer), ("evidence", self.evidence),
                    ("repair", self.repair), ("dag", self.dag), ("chain", self.chain))  # fmt: skip
        for name, section in sections:
            mark = len(self.out)
            try:
                section()
            except _SHAPE_ERRORS as e:  # a payload written around the library, say
                del self.out[mark:]  # nothing half-drawn is shown as what the run recorded
                self.unreadable.append(name)
                self.add(
                    f'<p class="bad" id="unreadable-{name}">The {name} section could not be '
                    f"read from the run's events: a payload is not in the shape this code "
                    f"reads ({_e(type(e).__name__)}); nothing of it is shown. Run "
                    "<code>aborist-ledger replay</code>.</p>"
                )
        body = "\n".join(self.out)
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>aborist audit report · run {_e(self.run.run_id)}</title>"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; img-src data:\">"
            f"<style>{_CSS}</style></head><body><main>\n{body}\n"
            '<footer class="meta"><p>Generated by aborist-ledger report from the ledger\'s '
            "own events; verify independently with <code>aborist-ledger replay --deep</code> "
            "or an export bundle.</p></footer></main></body></html>\n"
        )


def _hashes_hold(ev: RecordedEvent) -> bool:
    """Whether ``ev``'s payload hashes to its ``payload_hash`` and its header to its
    ``hash`` (docs/ledger-format.md, "Event hash")."""
    try:
        payload = ev.payload.encode("utf-8")
    except (AttributeError, UnicodeEncodeError):
        return False
    return sha256(payload).hexdigest() == ev.payload_hash and event_hash_of(ev) == ev.hash


def render_report(ledger: Ledger, run_id: str) -> str:
    """The audit report of ``run_id`` (a prefix of 6+ hex digits resolves) as one
    self-contained HTML document."""
    return report_page(ledger, run_id)[0]


@dataclass(frozen=True, slots=True)
class ReportPage:
    """The page, the sections it could not read, and what it shows failed."""

    html: str
    unreadable: list[str]
    problems: list[str]


def report_result(ledger: Ledger, run_id: str) -> ReportPage:
    """The report of ``run_id`` with what the page could not read and what it shows did
    not hold (``aborist-ledger report`` exits 1 on either)."""
    page = _Page(ledger, load_run(ledger, run_id))
    html = page.html()
    return ReportPage(html, page.unreadable, page.problems)


def report_page(ledger: Ledger, run_id: str) -> tuple[str, list[str]]:
    """:func:`render_report`, and the sections of the page that could not be read from the
    run's events (a payload of a shape this code does not read: each is named on the page
    instead of being drawn)."""
    result = report_result(ledger, run_id)
    return result.html, result.unreadable
