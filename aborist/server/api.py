"""The JSON API under ``/api/v1`` (docs/serve.md, "API"). Each route calls the library
function the matching CLI command calls and returns what that command prints with
``--json``; routes are plain functions, run in the server's thread pool."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse

from aborist import __version__
from aborist.errors import AboristError
from aborist.events import AnswerLabelled, AnswerVerified
from aborist.pipeline.query import ShardSource
from aborist.pipeline.recorded import RecordedRun, load_run
from aborist.pipeline.run import Governance, execute_run
from aborist.server.errors import ApiError, status_of
from aborist.server.models import ErrorBody, HealthBody, QueryRequest, RunList, VerifyRequest
from aborist.server.run_list import RunFilter, list_runs
from aborist.server.security import REPORT_CSP
from aborist.server.state import AppState

__all__ = ["answer_question", "resolve_run", "router", "run_detail"]

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 404, 409, 413, 422, 502, 503)
}
router = APIRouter(prefix="/api/v1", responses=_ERRORS)


def _state(request: Request) -> AppState:
    state: AppState = request.app.state.aborist
    return state


def answer_question(state: AppState, body: QueryRequest) -> dict[str, Any]:
    """Run the pipeline as ``aborist query --json`` does. The run id is chosen here, so a
    failure after the run started is reported with the run that recorded it."""
    if body.reprompts and not body.repair:
        raise ApiError(400, "reprompts needs repair")
    gov = Governance(
        mode=body.mode,
        repair_enabled=body.repair,
        repair_max_reprompts=body.reprompts if body.repair else 0,
    )
    run_id = uuid.uuid4().hex
    source = ShardSource(body.shards, state.config.shards_dir)
    lg = state.ledger
    try:
        with state.config.client_factory() as client:
            result = execute_run(
                body.question, source, ledger=lg, client=client, governance=gov,
                use_cache=body.use_cache, run_id=run_id,
            )  # fmt: skip
    except AboristError as e:
        recorded = bool(lg.read_stream(f"run:{run_id}"))
        raise ApiError(status_of(e), str(e), run_id=run_id if recorded else None) from e
    finally:
        source.close()
    return result.to_json()


@router.post("/query", summary="Answer a question (aborist query --json)")
def post_query(body: QueryRequest, request: Request) -> dict[str, Any]:
    return answer_question(_state(request), body)


@router.post("/verify", summary="Verify one answer against evidence (aborist verify --json)")
def post_verify(body: VerifyRequest) -> dict[str, Any]:
    from aborist.verify.evidence import build_evidence
    from aborist.verify.inspect import inspect_answer
    from aborist.verify.verify import verify_answer

    items = [i if isinstance(i, str) else i.model_dump(exclude_none=True) for i in body.evidence]
    evidence = build_evidence(items)
    verdict = verify_answer(body.answer, evidence, question=body.question, mode=body.mode)
    out = verdict.to_dict()
    if body.inspect:
        out["inspect"] = inspect_answer(
            body.answer, evidence, verdict, question=body.question
        ).to_dict()
    return out


@router.get("/runs", summary="List runs, newest first", response_model=RunList)
def get_runs(
    request: Request,
    label: str | None = Query(default=None, max_length=32),
    audit_mode: str | None = Query(default=None, max_length=32),
    status: str | None = Query(default=None, max_length=32),
    since: str | None = Query(default=None, max_length=40, description="RFC 3339 UTC"),
    text: str | None = Query(default=None, max_length=200),
    limit: int = Query(default=50, ge=1, le=500),
    cursor: str | None = Query(default=None, max_length=20),
) -> dict[str, Any]:
    f = RunFilter(label, audit_mode, status, since, text, limit, cursor)
    items, next_cursor = list_runs(_state(request).ledger, f)
    return {"runs": items, "next_cursor": next_cursor}


def resolve_run(state: AppState, run_id: str) -> RecordedRun:
    """The run ``run_id`` names (a unique prefix of 6+ characters resolves); 404 if none."""
    if not 6 <= len(run_id) <= 64 or not all(c.isalnum() or c in "_-" for c in run_id):
        raise ApiError(404, f"no run {run_id!r} in the ledger")
    return load_run(state.ledger, run_id)


def run_detail(run: RecordedRun) -> dict[str, Any]:
    """What ``aborist show --json`` prints, plus the run's stages by name (event type ->
    seq), its label and its verdict."""
    from aborist.pipeline.show import run_json

    label = run.get(AnswerLabelled)
    verified = run.get(AnswerVerified)
    return {
        **run_json(run),
        "stages": {e.type: e.seq for e in run.events},
        "audit_mode": label.audit_mode if label else None,
        "label": label.label if label else None,
        "verdict": verified.verdict if verified else None,
    }


@router.get("/runs/{run_id}", summary="One run: stages, events, DAG, verdict")
def get_run(run_id: str, request: Request) -> dict[str, Any]:
    return run_detail(resolve_run(_state(request), run_id))


@router.get("/runs/{run_id}/bundle", summary="The run's export bundle (aborist-ledger export)")
def get_bundle(run_id: str, request: Request) -> JSONResponse:
    from aborist.audit.bundle_export import export_run

    state = _state(request)
    run = resolve_run(state, run_id)
    bundle = export_run(state.ledger, run.run_id)
    return JSONResponse(
        bundle,
        headers={"content-disposition": f'attachment; filename="bundle-{run.run_id}.json"'},
    )


@router.get(
    "/runs/{run_id}/report",
    summary="The run's HTML audit report (aborist-ledger report)",
    response_class=HTMLResponse,
)
def get_report(run_id: str, request: Request) -> HTMLResponse:
    from aborist.audit.report import render_report

    state = _state(request)
    return HTMLResponse(
        render_report(state.ledger, resolve_run(state, run_id).run_id),
        headers={"content-security-policy": REPORT_CSP},
    )


@router.get("/shards", summary="The shards (aborist shards --json)")
def get_shards(request: Request) -> list[dict[str, Any]]:
    from aborist.corpus.shard import list_shards

    infos = list_shards(_state(request).config.shards_dir)
    return [{**i.to_dict(), "path": i.path.name} for i in infos]  # no server paths


@router.post("/sessions/revoke", summary="Sign every page login out (the token stays valid)")
def revoke_sessions(request: Request) -> dict[str, int]:
    """For an operator who fears a login cookie was copied: every page session is
    forgotten, on every worker; the bearer token is not affected."""
    return {"revoked": _state(request).sessions.revoke_all()}


@router.get("/health", summary="Liveness and the ledger head", response_model=HealthBody)
def get_health(request: Request) -> dict[str, Any]:
    from sqlalchemy.engine import make_url

    state = _state(request)
    head = state.ledger.head()
    backend = make_url(state.config.ledger_url).get_backend_name()
    return {"status": "ok", "version": __version__, "backend": backend, "head_seq": head[0]}
