"""The pages in process on SQLite and PostgreSQL: ask -> claims marked and linked to
highlighted evidence, the run list and its filters, the run page (the audit report),
the ledger with "replay now", the shards; hostile text escaped on every page."""

from __future__ import annotations

import time
from pathlib import Path

from aborist.clients.base import StubClient
from aborist.corpus.ingest import ingest
from tests.audit.conftest import HOSTILE_ANSWER, HOSTILE_QUESTION
from tests.conftest import FACTS, Corpus
from tests.server.conftest import Dom, Node, Served, _record, assert_inert, make_served

Q = "How long is the Silverrun River?"


def _ask(s: Served, question: str, **form: str) -> Dom:
    r = s.client.post("/ask", data={"question": question, **form})
    assert r.status_code == 200, r.text
    return assert_inert(r.text)


def test_ask_marks_claims_and_links_them_to_highlighted_evidence(served: Served) -> None:
    dom = assert_inert(served.client.get("/").text)
    assert dom.by_id("ask-form").attrs["action"] == "/ask"
    dom = _ask(served, Q)
    assert dom.by_id("audit-mode").text() == "STRICT"
    claims = dom.find("span", "claim")
    assert claims and all(c.attrs["data-mark"] == "verified" for c in claims)
    assert FACTS[Q] in claims[0].text()
    ids = {n.attrs["id"] for n in dom.all if "id" in n.attrs}
    links = [a for c in claims for a in c.content if not isinstance(a, str) and a.tag == "a"]
    assert links and all(a.attrs["href"][1:] in ids for a in links)
    target = dom.by_id(links[0].attrs["href"][1:])
    marked = [m.text() for m in _marks(target)]
    assert any("412 kilometres long" in m for m in marked)
    run_href = dom.by_id("run-link").attrs["href"]
    assert run_href.startswith("/runs/")
    run = assert_inert_report(served, run_href)
    assert run.by_id("audit-mode").text() == "STRICT"


def _marks(node: Node) -> list[Node]:
    out: list[Node] = []
    for c in node.content:
        if isinstance(c, str):
            continue
        if c.tag == "mark":
            out.append(c)
        out.extend(_marks(c))
    return out


def assert_inert_report(s: Served, href: str) -> Dom:
    r = s.client.get(href)
    assert r.status_code == 200
    dom = Dom(r.text)
    assert not dom.find("script") and not dom.find("img")
    assert "style-src 'unsafe-inline'" in r.headers["content-security-policy"]
    assert dom.by_id("run-nav")
    return dom


def test_claims_marked_verified_and_unsupported(ledger_url: str, corpus: Corpus) -> None:
    answer = (
        "The Silverrun River is 412 kilometres long. [E1]\n"
        "The Silverrun River is made of lemonade. [E1]"
    )
    _record(ledger_url, corpus)
    s = make_served(ledger_url, corpus.shards_dir, factory=lambda: StubClient(default=answer))
    with s.client:
        dom = _ask(s, Q, shard="geo")
    marks = [c.attrs["data-mark"] for c in dom.find("span", "claim")]
    assert marks[0] == "verified" and marks[-1] == "unsupported"
    assert dom.by_id("audit-mode").text() != "STRICT"


def test_run_list_filters(served: Served) -> None:
    for q in FACTS:
        _ask(served, q)
    dom = assert_inert(served.client.get("/runs").text)
    assert len(dom.find("tr", "run-row")) == 3
    dom = assert_inert(served.client.get("/runs", params={"text": "honey"}).text)
    rows = dom.find("tr", "run-row")
    assert len(rows) == 1 and "honey" in rows[0].text()
    dom = assert_inert(served.client.get("/runs", params={"limit": 2}).text)
    nxt = dom.by_id("next-page").attrs["href"]
    older = assert_inert(served.client.get(nxt).text)
    assert len(older.find("tr", "run-row")) == 1
    dom = assert_inert(served.client.get("/runs", params={"status": "failed"}).text)
    assert dom.by_id("no-runs")
    assert served.client.get("/runs", params={"since": "nope"}).status_code == 400


def test_ledger_replay_now_runs_in_the_background(served: Served) -> None:
    _ask(served, Q)
    dom = assert_inert(served.client.get("/ledger").text)
    assert int(dom.by_id("head-seq").text()) > 0
    r = served.client.post("/ledger/replay")
    assert r.status_code == 303
    job = r.headers["location"]
    deadline = time.monotonic() + 120
    while True:
        page = served.client.get(job)
        dom = assert_inert(page.text)
        state = dom.by_id("replay-state").text()
        if not state.startswith("running"):
            break
        assert '<meta http-equiv="refresh"' in page.text
        assert time.monotonic() < deadline, "replay did not finish in 120 s"
        time.sleep(0.2)
    assert "replay: everything held" in state
    cells = [[c.text() for c in row.content if isinstance(c, Node)] for row in dom.find("tr")[1:]]
    checks = dict((row[0], row[1]) for row in cells)
    assert checks["deep"] == "held" and checks["chain"] == "held"
    assert assert_inert(served.client.get("/ledger").text).by_id("last-replay")
    assert served.client.get("/ledger/replay/nope").status_code == 404


def test_shards_page_lists_documents(served: Served) -> None:
    dom = assert_inert(served.client.get("/shards").text)
    assert dom.by_id("shard-geo") and dom.by_id("shard-bees")
    assert "rivers.md" in dom.root.text()


def test_hostile_text_is_escaped_on_every_page(
    ledger_url: str, corpus: Corpus, tmp_path: Path
) -> None:
    doc = tmp_path / "evil.md"
    doc.write_text(
        '# <script>alert("t")</script>\n\n<img src=x onerror=alert(1)> The Silverrun River '
        'is 412 kilometres long. "><script>alert(2)</script>\n',
        encoding="utf-8",
    )
    _record(ledger_url, corpus)
    from ledger.store import Ledger

    with Ledger.open(ledger_url) as lg:
        ingest([doc], "evil", shards_dir=corpus.shards_dir, ledger=lg)
    s = make_served(
        ledger_url, corpus.shards_dir, factory=lambda: StubClient(default=HOSTILE_ANSWER)
    )
    with s.client:
        c = s.client
        pages = [c.post("/ask", data={"question": HOSTILE_QUESTION, "shard": "evil"}).text]
        run_id = c.get("/api/v1/runs").json()["runs"][0]["run_id"]
        job = c.post("/ledger/replay").headers["location"]
        for url in (job, "/", "/runs", f"/runs?text={HOSTILE_QUESTION}", "/ledger", "/shards",
                    '/login?next="><script>alert(3)</script>', "/runs/<script>x</script>",
                    f"/runs/{run_id}"):  # fmt: skip
            pages.append(c.get(url).text)
        for html in pages:
            dom = Dom(html)
            assert not dom.find("script") and not dom.find("img"), html[:200]
            for n in dom.all:
                assert not any(k.startswith("on") for k in n.attrs), (n.tag, n.attrs)
                assert not n.attrs.get("href", "/").startswith("http"), n.attrs
        assert HOSTILE_QUESTION in Dom(pages[0]).by_id("asked").text()  # shown, as text


def test_replay_jobs_are_shared_between_workers(served: Served, tmp_path: Path) -> None:
    """Two worker processes' job tables over one directory: a job started by one is shown
    by the other, running and finished."""
    from aborist.server.replay_jobs import ReplayJobs

    _ask(served, Q)
    one, other = ReplayJobs(served.url, tmp_path), ReplayJobs(served.url, tmp_path)
    job = one.start(deep=True)
    seen = other.get(job.job_id)
    assert seen is not None and seen.job_id == job.job_id
    deadline = time.monotonic() + 120
    while (seen := other.get(job.job_id)) is not None and seen.state == "running":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert seen is not None and seen.state == "held" and seen.report is not None
    assert seen.report["ok"] is True
    latest = other.latest()
    assert latest is not None and latest.job_id == job.job_id
    assert other.get("../etc") is None and other.get("nope") is None


def test_a_cache_hit_shows_the_served_answer(served: Served) -> None:
    first = _ask(served, Q)
    again = _ask(served, Q)
    assert "Served from the answer cache" in again.root.text()
    marks = [c.attrs["data-mark"] for c in again.find("span", "claim")]
    assert marks == [c.attrs["data-mark"] for c in first.find("span", "claim")] == ["verified"]
    assert again.by_id("run-link").attrs["href"] != first.by_id("run-link").attrs["href"]


def test_the_replay_page_says_what_the_cli_says_when_something_was_left_unproven(
    served: Served,
) -> None:
    """A replay that held with a run skipped for version skew: the page shows the CLI's last
    line (``held_line``), never a bare "everything held"."""
    from aborist.server.replay_jobs import ReplayJob

    line = (
        "replay: everything checked held, but 1 run not re-executed in full (version skew): "
        "self-consistent, not anchored to anything outside the database"
    )
    report = {"checks": {}, "divergences": [], "held_line": line, "summary": {
        "events_checked": 3, "head_seq": 3, "dags_checked": 1, "deep_runs": 0, "deep_stages": 0,
        "blobs_checked": 0, "checkpoints_checked": 0}}  # fmt: skip
    job = ReplayJob("skewjob", True, state="held", seconds=0.1, report=report)
    served.client.app.app.state.aborist.replays._jobs[job.job_id] = job  # type: ignore[attr-defined]
    dom = assert_inert(served.client.get("/ledger/replay/skewjob").text)
    state = dom.by_id("replay-state").text()
    assert "version skew" in state and "everything held" not in state
