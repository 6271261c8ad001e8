"""The server-rendered pages: ask (``/``), the run list, the run (the live audit report),
the ledger with "replay now", the shards, and the login form when a token is set. Forms
post ``application/x-www-form-urlencoded`` bodies, read here with the standard library
(no multipart parser is needed, so none is installed)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from aborist.events import MODES
from aborist.pipeline.recorded import load_run
from aborist.server.answer_view import render_answer
from aborist.server.api import answer_question, resolve_run
from aborist.server.errors import ApiError
from aborist.server.layout import APP_CSS, e, page
from aborist.server.models import QueryRequest
from aborist.server.run_list import RunFilter, list_runs
from aborist.server.security import REPORT_CSP, SESSION_COOKIE, session_cookie, token_matches
from aborist.server.state import AppState
from aborist.server.tlog import checkpoint_html

__all__ = ["router"]

router = APIRouter(include_in_schema=False)


def _state(request: Request) -> AppState:
    state: AppState = request.app.state.aborist
    return state


def _html(request: Request, title: str, body: str, **kw: Any) -> HTMLResponse:
    """A page, with the sign-out button when a token is configured."""
    signout = _state(request).config.token is not None
    return HTMLResponse(page(title, body, signout=signout, **kw))


async def _form(request: Request) -> dict[str, list[str]]:
    ctype = request.headers.get("content-type", "").split(";")[0].strip()
    if ctype != "application/x-www-form-urlencoded":
        raise ApiError(400, "expected a form (application/x-www-form-urlencoded)")
    try:
        text = (await request.body()).decode("utf-8")
    except UnicodeDecodeError as err:
        raise ApiError(400, "the form is not UTF-8") from err
    return parse_qs(text, keep_blank_values=True, max_num_fields=200)


def _first(form: dict[str, list[str]], name: str, default: str = "") -> str:
    return form.get(name, [default])[0]


@router.get("/favicon.ico")
def favicon() -> Response:
    return Response(status_code=204, headers={"cache-control": "max-age=86400"})


@router.get("/static/app.css")
def stylesheet() -> Response:
    return Response(APP_CSS, media_type="text/css", headers={"cache-control": "max-age=300"})


def _ask_form(state: AppState, question: str = "", mode: str = "claim-lattice") -> str:
    from aborist.corpus.shard import list_shards

    try:
        names = [i.name for i in list_shards(state.config.shards_dir)]
    except Exception:  # the form still renders; the answer will say what is wrong
        names = []
    boxes = "".join(
        f'<label><input type="checkbox" name="shard" value="{e(n)}"> {e(n)}</label> ' for n in names
    )
    modes = "".join(
        f'<option value="{m}"{" selected" if m == mode else ""}>{m}</option>' for m in sorted(MODES)
    )
    return (
        '<form class="ask" method="post" action="/ask" id="ask-form">'
        f'<textarea name="question" id="question" required maxlength="4000" '
        f'placeholder="Ask a question about your documents">{e(question)}</textarea>'
        f'<p class="inline">mode <select name="mode" id="mode">{modes}</select> '
        f'<label><input type="checkbox" name="repair" value="1"> repair quotes</label> '
        f"{'shards: ' + boxes if boxes else ''}"
        '<button type="submit" id="ask-button">Ask</button></p></form>'
    )


@router.get("/", response_class=HTMLResponse)
def ask_page(request: Request) -> HTMLResponse:
    body = (
        "<h1>Ask</h1>"
        '<p class="meta">Every answer is checked claim by claim against the retrieved text '
        "and recorded in the ledger.</p>" + _ask_form(_state(request))
    )
    return _html(request, "Ask", body, here="/")


@router.post("/ask", response_class=HTMLResponse)
async def ask(request: Request) -> HTMLResponse:
    state = _state(request)
    form = await _form(request)
    question = _first(form, "question")
    try:
        body = QueryRequest(
            question=question,
            mode=_first(form, "mode", "claim-lattice"),
            shards=form.get("shard") or None,
            repair=_first(form, "repair") == "1",
        )
    except ValidationError as err:
        msg = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in err.errors())
        raise ApiError(400, msg) from err

    def answer() -> str:
        result = answer_question(state, body)
        return render_answer(state.ledger, load_run(state.ledger, result["run_id"]))

    html = await run_in_threadpool(answer)
    out = (
        "<h1>Ask</h1>" + _ask_form(state, question, body.mode) + "<h2>Answer</h2>"
        f'<p class="question" id="asked">{e(body.question)}</p>' + html
    )
    return _html(request, "Answer", out, here="/")


@router.get("/runs", response_class=HTMLResponse)
def runs_page(request: Request) -> HTMLResponse:
    q = request.query_params
    values = {k: q.get(k) or None for k in ("label", "audit_mode", "status", "since", "text")}
    try:
        limit = int(q.get("limit") or 50)
    except ValueError as err:
        raise ApiError(400, "limit must be a number") from err
    f = RunFilter(**values, limit=limit, cursor=q.get("cursor") or None)
    items, cursor = list_runs(_state(request).ledger, f)
    fields = "".join(
        f'<label>{k} <input name="{k}" id="filter-{k}" value="{e(v or "")}" size="12"></label>'
        for k, v in values.items()
    )
    rows = "".join(
        f'<tr class="run-row"><td><a href="/runs/{e(r["run_id"])}"><code>{e(r["run_id"][:12])}'
        f"</code></a></td><td>{e(r['started_at'])}</td><td>{e(r['status'])}</td>"
        f"<td>{e(r['audit_mode'] or r['failed_stage'] or '')}</td><td>{e(r['label'] or '')}</td>"
        f"<td>{'cached' if r['cache_hit'] else ''}</td><td>{e(r['question'])}</td></tr>"
        for r in items
    )
    more = ""
    if cursor:
        params = {k: v for k, v in values.items() if v} | {"cursor": cursor, "limit": limit}
        more = f'<p><a id="next-page" href="/runs?{e(urlencode(params))}">older runs →</a></p>'
    body = (
        "<h1>Runs</h1>"
        f'<form class="inline" method="get" action="/runs">{fields}'
        '<button type="submit">Filter</button></form>'
        '<table id="runs"><tr><th>run</th><th>started</th><th>status</th><th>audit mode</th>'
        f"<th>label</th><th></th><th>question</th></tr>{rows}</table>"
        + ("" if items else '<p class="meta" id="no-runs">No runs match.</p>')
        + more
    )
    return _html(request, "Runs", body, here="/runs")


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(run_id: str, request: Request) -> HTMLResponse:
    """The audit report, rendered from the ledger on every request."""
    from aborist.audit.report import render_report

    state = _state(request)
    run = resolve_run(state, run_id)
    html = render_report(state.ledger, run.run_id)
    rid = quote(run.run_id)
    nav = (
        '<p class="meta" id="run-nav"><a href="/">Ask</a> · <a href="/runs">Runs</a> · '
        f'<a href="/ledger">Ledger</a> · <a href="/api/v1/runs/{rid}/bundle">export bundle</a>'
        f' · <a href="/api/v1/runs/{rid}">JSON</a></p>'
    )
    html = html.replace("<body><main>", "<body><main>" + nav, 1)
    return HTMLResponse(html, headers={"content-security-policy": REPORT_CSP})


@router.get("/ledger", response_class=HTMLResponse)
def ledger_page(request: Request) -> HTMLResponse:
    state = _state(request)
    seq, head = state.ledger.head()
    cp = checkpoint_html(state)
    job = state.replays.latest()
    last = (
        f'<p>Last replay: <a id="last-replay" href="/ledger/replay/{e(job.job_id)}">'
        f"{e(job.state)}</a></p>"
        if job
        else ""
    )
    body = (
        "<h1>Ledger</h1>"
        f'<p>head: seq <b id="head-seq">{seq}</b>, hash <code id="head-hash">{e(head)}</code></p>'
        f"<h2>Latest checkpoint</h2>{cp}<h2>Replay</h2>"
        "<p>Recompute every hash, DAG and projection and re-execute the deterministic "
        "stages (<code>aborist-ledger replay --deep</code>), in the background.</p>"
        '<form method="post" action="/ledger/replay"><button type="submit" id="replay-now">'
        f"Replay now</button></form>{last}"
    )
    return _html(request, "Ledger", body, here="/ledger")


@router.post("/ledger/replay")
async def start_replay(request: Request) -> Response:
    job = _state(request).replays.start(deep=True)
    return RedirectResponse(f"/ledger/replay/{job.job_id}", status_code=303)


_CHECK_CLASS = {"held": "ok", "skipped": "meta", "diverged": "bad"}


def _replay_summary(report: dict[str, Any]) -> str:
    s = report["summary"]
    rows = "".join(
        f'<tr><td>{e(check)}</td><td class="{_CHECK_CLASS.get(state, "bad")}">{e(state)}</td></tr>'
        for check, state in report["checks"].items()
    )
    divs = "".join(
        f"<li>{e(d['kind'])} at seq {e(d['seq'])} (run {e(d['run'])}, stage {e(d['stage'])}): "
        f"expected {e(d['expected'])}, found {e(d['found'])} {e(d['detail'])}</li>"
        for d in report["divergences"]
    )
    return (
        f"<p>{s['events_checked']} events chained, head {s['head_seq']}; {s['dags_checked']} "
        f"run DAGs, {s['deep_runs']} runs re-executed ({s['deep_stages']} stages); "
        f"{s['blobs_checked']} blobs; {s['checkpoints_checked']} checkpoints.</p>"
        f'<table id="checks"><tr><th>check</th><th>state</th></tr>{rows}</table>'
        + (f'<h2>First divergences</h2><ul id="divergences">{divs}</ul>' if divs else "")
    )


@router.get("/ledger/replay/{job_id}", response_class=HTMLResponse)
def replay_page(job_id: str, request: Request) -> HTMLResponse:
    job = _state(request).replays.get(job_id)
    if job is None:
        raise ApiError(404, f"no replay {job_id!r} (the server keeps the last 20)")
    if job.state == "running":
        todo = f" of {job.head_seq} events" if job.head_seq is not None else ""
        body = (
            f'<h1>Replay</h1><p id="replay-state">running{e(todo)}: '
            f"{job.elapsed():.1f} s so far (this page refreshes itself)</p>"
        )
        return _html(request, "Replay", body, here="/ledger", refresh=1)
    if job.state == "failed":
        body = f'<h1>Replay</h1><p class="error" id="replay-state">failed: {e(job.error)}</p>'
    else:
        assert job.report is not None
        held = job.report.get("held_line") or "replay: every check held (see below)"
        verdict = (  # the CLI's last line: it names what was left unproven (version skew …)
            f'<span class="ok">{e(held)}</span>'
            if job.state == "held"
            else '<span class="bad">replay: DIVERGED</span>'
        )
        body = (
            f'<h1>Replay</h1><p id="replay-state">{verdict} ({job.seconds or 0:.1f} s)</p>'
            + _replay_summary(job.report)
        )
    return _html(request, "Replay", body + '<p><a href="/ledger">Back to the ledger</a></p>')


@router.get("/shards", response_class=HTMLResponse)
def shards_page(request: Request) -> HTMLResponse:
    from aborist.corpus.shard import list_shards, open_shard

    out = ["<h1>Shards</h1>"]
    infos = list_shards(_state(request).config.shards_dir)
    if not infos:
        out.append("<p>No shards yet: run <code>aborist ingest PATH --shard NAME</code>.</p>")
    for info in infos:
        conn = open_shard(info.path)
        try:
            docs = conn.execute(
                "SELECT source_uri, format FROM documents ORDER BY doc_pos LIMIT 1000"
            ).fetchall()
        finally:
            conn.close()
        items = "".join(f"<li>{e(d[0])} <span class=meta>{e(d[1])}</span></li>" for d in docs)
        out.append(
            f'<h2 id="shard-{e(info.name)}">{e(info.name)}</h2><p class="meta">{info.documents} '
            f"documents, {info.chunks} chunks · source root <code>{e(info.source_root)}</code>"
            f"</p><ul>{items}</ul>"
        )
    return _html(request, "Shards", "".join(out), here="/shards")


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request) -> HTMLResponse:
    target = request.query_params.get("next", "/")
    body = (
        "<h1>Sign in</h1><p>This server needs its API token.</p>"
        '<form method="post" action="/login" id="login-form">'
        f'<input type="hidden" name="next" value="{e(target)}">'
        '<input type="password" name="token" id="token" autocomplete="current-password" '
        'required> <button type="submit">Sign in</button></form>'
    )
    return HTMLResponse(page("Sign in", body))


@router.post("/login")
async def login(request: Request) -> Response:
    token = _state(request).config.token
    form = await _form(request)
    target = _first(form, "next", "/")
    if not target.startswith("/") or target.startswith("//"):
        target = "/"  # only a path on this server: no open redirect
    if token is None:
        return RedirectResponse(target, status_code=303)
    if not token_matches(_first(form, "token"), token):
        raise ApiError(401, "wrong token")
    state = _state(request)
    value = await run_in_threadpool(state.sessions.create)
    resp = RedirectResponse(target, status_code=303)
    resp.set_cookie(
        SESSION_COOKIE, value, max_age=int(state.config.session_ttl_s), httponly=True,
        samesite="strict", secure=request.url.scheme == "https", path="/",
    )  # fmt: skip
    return resp


@router.post("/logout")
async def logout(request: Request) -> Response:
    """Sign out: the server forgets this session (``everywhere``: every session), so the
    cookie, kept or copied, opens nothing any more."""
    state = _state(request)
    ctype = request.headers.get("content-type", "")  # a bare POST signs this session out
    form = await _form(request) if ctype.startswith("application/x-www-form-urlencoded") else {}
    sessions = state.sessions
    if _first(form, "everywhere"):
        await run_in_threadpool(sessions.revoke_all)
    else:
        await run_in_threadpool(sessions.revoke, session_cookie(request.headers.get("cookie", "")))
    resp = RedirectResponse("/login" if state.config.token else "/", status_code=303)
    resp.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict",
                       secure=request.url.scheme == "https")  # fmt: skip
    return resp
