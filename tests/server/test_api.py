"""The JSON API in process (httpx against the ASGI app) on SQLite and PostgreSQL: every
route against the library function the CLI calls, and every error as JSON."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from aborist.audit.bundle import verify_bundle
from aborist.clients.base import StubClient
from aborist.verify.evidence import build_evidence
from aborist.verify.verify import verify_answer
from ledger.store import Ledger
from ledger.tlog.proofs import checkpoint
from tests.conftest import FACTS, Corpus
from tests.server.conftest import Served, _record, make_served

Q = "How long is the Silverrun River?"


def _ask(s: Served, question: str = Q, **kw: object) -> dict[str, object]:
    r = s.client.post("/api/v1/query", json={"question": question, **kw})
    assert r.status_code == 200, r.text
    body: dict[str, object] = r.json()
    return body


def test_health(served: Served) -> None:
    r = served.client.get("/api/v1/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["head_seq"] >= 0
    assert body["backend"] in ("sqlite", "postgresql")


def test_query_returns_what_the_cli_prints_and_records_the_run(served: Served) -> None:
    body = _ask(served)
    assert body["audit_mode"] == "STRICT" and body["label"] == "VERIFIED"
    assert FACTS[Q] in str(body["answer"])
    assert set(body) >= {"run_id", "cache_key", "evidence", "citations", "run_dag_root"}
    run = served.client.get(f"/api/v1/runs/{body['run_id']}").json()
    assert run["status"] == "completed" and run["question"] == Q
    assert run["run_dag"]["root"] == body["run_dag_root"]
    assert "qa.answer_verified" in run["stages"] and run["verdict"]["audit_mode"] == "STRICT"
    assert [e["seq"] for e in run["events"]] == sorted(e["seq"] for e in run["events"])
    again = _ask(served)  # the same question again: served from the cache
    assert again["cache_hit"] is True and again["served_from_run_id"] == body["run_id"]
    fresh = _ask(served, use_cache=False, mode="quote")
    assert fresh["cache_hit"] is False and fresh["mode"] == "quote"


def test_run_list_filters_and_cursor(served: Served) -> None:
    ids = [str(_ask(served, q)["run_id"]) for q in FACTS]
    page = served.client.get("/api/v1/runs", params={"limit": 2}).json()
    assert [r["run_id"] for r in page["runs"]] == ids[::-1][:2]
    rest = served.client.get("/api/v1/runs", params={"limit": 2, "cursor": page["next_cursor"]})
    assert [r["run_id"] for r in rest.json()["runs"]] == [ids[0]]
    assert rest.json()["next_cursor"] is None
    text = served.client.get("/api/v1/runs", params={"text": "SILVERRUN"}).json()["runs"]
    assert [r["run_id"] for r in text] == [ids[0]]
    for key, value in (("audit_mode", "STRICT"), ("status", "completed"), ("label", "VERIFIED")):
        got = served.client.get("/api/v1/runs", params={key: value}).json()["runs"]
        assert {r["run_id"] for r in got} == set(ids)
    assert served.client.get("/api/v1/runs", params={"status": "failed"}).json()["runs"] == []
    since = served.client.get("/api/v1/runs", params={"since": "2999-01-01"}).json()["runs"]
    assert since == []
    assert (
        len(served.client.get("/api/v1/runs", params={"since": "2000-01-01"}).json()["runs"]) == 3
    )
    like = served.client.get("/api/v1/runs", params={"text": "%"}).json()["runs"]
    assert like == []  # a LIKE wildcard in the text is a literal character


def test_bad_run_list_parameters_are_400_or_422(served: Served) -> None:
    assert served.client.get("/api/v1/runs", params={"since": "yesterday"}).status_code == 400
    bad_day = served.client.get("/api/v1/runs", params={"since": "2026-13-45"})
    assert bad_day.status_code == 400 and "RFC 3339" in bad_day.json()["detail"]
    assert served.client.get("/api/v1/runs", params={"cursor": "abc"}).status_code == 400
    r = served.client.get("/api/v1/runs", params={"limit": 0})
    assert r.status_code == 422 and r.json()["error"] == "invalid"


def test_verify_returns_what_the_verifier_returns(served: Served) -> None:
    answer = 'The river is "412 kilometres long".'
    evidence = ["The Silverrun River is 412 kilometres long."]
    r = served.client.post(
        "/api/v1/verify", json={"answer": answer, "evidence": evidence, "question": Q}
    )
    assert r.status_code == 200, r.text
    want = verify_answer(answer, build_evidence(evidence), question=Q, mode="quote").to_dict()
    assert r.json() == want
    with_inspect = served.client.post(
        "/api/v1/verify", json={"answer": "x [E1]", "evidence": evidence, "inspect": True,
                                "mode": "claim-lattice"},
    ).json()  # fmt: skip
    assert "inspect" in with_inspect and with_inspect["audit_mode"] != "STRICT"
    bad = served.client.post("/api/v1/verify", json={"answer": "x", "evidence": []})
    assert bad.status_code == 422 and bad.json()["error"] == "invalid"
    extra = served.client.post("/api/v1/verify", json={"answer": "x", "evidence": ["y"], "z": 1})
    assert extra.status_code == 422


def test_bundle_verifies_offline_and_report_is_html(served: Served) -> None:
    run_id = str(_ask(served)["run_id"])
    r = served.client.get(f"/api/v1/runs/{run_id}/bundle")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    report = verify_bundle(r.json())
    assert report.ok, report.to_dict()
    html = served.client.get(f"/api/v1/runs/{run_id[:10]}/report")
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "Audit report" in html.text and run_id in html.text
    assert "default-src 'none'" in html.headers["content-security-policy"]


def test_checkpoint(served: Served, pipeline_ledger: Ledger) -> None:
    r = served.client.get("/api/v1/checkpoint")
    assert r.status_code == 404 and r.json()["error"] == "not_found"
    _ask(served)
    cp = checkpoint(pipeline_ledger)
    body = served.client.get("/api/v1/checkpoint").json()
    assert {k: body[k] for k in cp.to_dict()} == cp.to_dict()
    assert body["signed"] is False and body["note"] is None  # no log key configured


def test_shards(served: Served) -> None:
    shards = served.client.get("/api/v1/shards").json()
    assert sorted(s["name"] for s in shards) == ["bees", "geo"]
    assert all("/" not in s["path"] for s in shards)  # no server paths


def test_input_errors(served: Served) -> None:
    assert served.client.post("/api/v1/query", json={"question": ""}).status_code == 422
    nul = served.client.post("/api/v1/query", json={"question": "a\u0000b"})
    assert nul.status_code == 400 and "NUL" in nul.json()["detail"]
    assert served.client.post("/api/v1/query", json={"question": Q, "mode": "x"}).status_code == 422
    path = served.client.post("/api/v1/query", json={"question": Q, "shards": ["../etc/x"]})
    assert path.status_code == 422  # a shard is a name, never a path
    missing = served.client.post("/api/v1/query", json={"question": Q, "shards": ["nope"]})
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    assert missing.json()["run_id"]  # the failure was recorded in a run
    rerun = served.client.get(f"/api/v1/runs/{missing.json()['run_id']}").json()
    assert rerun["status"] == "failed"
    notjson = served.client.post(
        "/api/v1/query", content=b"{", headers={"content-type": "application/json"}
    )
    assert notjson.status_code == 422 and "Traceback" not in notjson.text
    assert served.client.get("/api/v1/runs/abc").status_code == 404
    assert served.client.get("/api/v1/runs/0123456789abcdef").status_code == 404
    gone = served.client.get("/api/v1/nothing-here")
    assert gone.status_code == 404 and gone.json() == {"error": "not_found", "detail": "Not Found"}


def test_failed_model_call_is_502_with_the_run_id(ledger_url: str, corpus: Corpus) -> None:
    _record(ledger_url, corpus)
    s = make_served(ledger_url, corpus.shards_dir, factory=lambda: StubClient())  # no default
    with s.client:
        r = s.client.post("/api/v1/query", json={"question": Q, "use_cache": False})
        assert r.status_code == 502, r.text
        body = r.json()
        assert body["error"] == "model_failed" and body["run_id"]
        run = s.client.get(f"/api/v1/runs/{body['run_id']}").json()
        assert run["status"] == "failed" and "qa.run_failed" in run["stages"]


def test_internal_error_is_500_without_a_traceback(ledger_url: str, corpus: Corpus) -> None:
    def broken() -> StubClient:
        raise RuntimeError("secret internal detail")

    _record(ledger_url, corpus)
    s = make_served(ledger_url, corpus.shards_dir, factory=broken)
    with s.client:
        r = s.client.post("/api/v1/query", json={"question": Q})
    assert r.status_code == 500
    assert r.json() == {
        "error": "internal",
        "detail": "internal error; the server's log has the details",
    }


def test_request_size_limit(ledger_url: str, corpus: Corpus) -> None:
    _record(ledger_url, corpus)
    s = make_served(ledger_url, corpus.shards_dir, max_body_bytes=2048)
    with s.client:
        big = s.client.post("/api/v1/verify", json={"answer": "x" * 5000, "evidence": ["y"]})
        assert big.status_code == 413 and big.json()["error"] == "too_large"

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as read
            for _ in range(10):
                yield b" " * 1000

        streamed = s.client.post(
            "/api/v1/verify", content=chunks(), headers={"content-type": "application/json"}
        )
        assert streamed.status_code == 413
        small = s.client.post("/api/v1/verify", json={"answer": "x", "evidence": ["y"]})
        assert small.status_code == 200


def test_unmigrated_ledger_is_503(tmp_path: Path, corpus: Corpus) -> None:
    s = make_served(f"sqlite:///{tmp_path / 'empty.db'}", corpus.shards_dir)
    with s.client:
        r = s.client.get("/api/v1/health")
    assert r.status_code == 503 and r.json()["error"] == "unavailable"
    assert "migrate" in r.json()["detail"]


def test_openapi_schema_lists_every_route(served: Served) -> None:
    schema = served.client.get("/openapi.json").json()
    paths = set(schema["paths"])
    for p in ("/query", "/verify", "/runs", "/runs/{run_id}", "/runs/{run_id}/bundle",
              "/runs/{run_id}/report", "/checkpoint", "/shards", "/health"):  # fmt: skip
        assert "/api/v1" + p in paths
    assert not any(p.startswith("/ledger") or p == "/" for p in paths)  # pages are not API
